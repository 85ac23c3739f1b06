// Package statuswriter records the status code an HTTP handler answers
// with, for the test servers that log what they were asked (cacheserver,
// gitserver).
package statuswriter

import "net/http"

// Writer is an http.ResponseWriter that remembers the status code written
// through it. It hides the optional interfaces of the writer it wraps
// (io.ReaderFrom, http.Flusher, http.Hijacker), as the servers' own copies
// did: a handler writes its body through Write alone, which net/http checks
// against the Content-Length the handler set. (httpsnoop's CaptureMetrics,
// in the module graph through otelhttp, passes them through.)
type Writer struct {
	http.ResponseWriter
	// Status is the status code written last; http.StatusOK until one is.
	Status int
}

// New wraps w.
func New(w http.ResponseWriter) *Writer {
	return &Writer{ResponseWriter: w, Status: http.StatusOK}
}

// WriteHeader records code and writes it.
func (w *Writer) WriteHeader(code int) {
	w.Status = code
	w.ResponseWriter.WriteHeader(code)
}
