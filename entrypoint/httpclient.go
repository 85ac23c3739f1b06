package main

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"time"
)

// maxResponse bounds what the serving check reads of one answer: a batch
// of vectors of a large model's hidden size is well under a megabyte.
const maxResponse = 8 << 20

// httpResponse is an answer of the router: its status and body.
type httpResponse struct {
	status int
	body   []byte
}

// roundTrip sends one HTTP/1.1 request to 127.0.0.1:port with
// "Connection: close" and reads the answer to the end, all within timeout.
// It is the serving check's whole HTTP client: the router is TEI's (axum
// on hyper) on loopback, and net/http would triple the entrypoint's size
// (see loopback_linux.go).
func roundTrip(port int, method, path string, body []byte, timeout time.Duration) (httpResponse, error) {
	conn, err := dialLoopback(port, timeout)
	if err != nil {
		return httpResponse{}, err
	}
	defer conn.Close()
	var req bytes.Buffer
	req.WriteString(method + " " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + strconv.Itoa(port) +
		"\r\nUser-Agent: jetbake-entrypoint\r\nAccept: application/json\r\nConnection: close\r\n")
	if body != nil {
		req.WriteString("Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	req.WriteString("\r\n")
	req.Write(body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		return httpResponse{}, err
	}
	data, err := io.ReadAll(io.LimitReader(conn, maxResponse+1))
	if err != nil {
		return httpResponse{}, err
	}
	if len(data) > maxResponse {
		return httpResponse{}, errors.New("the answer is larger than 8 MB")
	}
	return parseResponse(data)
}

// parseResponse reads a whole HTTP/1.1 answer: the status line, the
// headers, and the body by Content-Length, by chunks, or to the end of a
// closed connection (RFC 9112, sections 4, 6 and 7.1). A hand-written
// parser, for the reason of roundTrip; FuzzParseResponse runs it.
func parseResponse(data []byte) (httpResponse, error) {
	head, rest, ok := bytes.Cut(data, []byte("\r\n\r\n"))
	if !ok {
		return httpResponse{}, errors.New("the answer has no end of headers")
	}
	lines := strings.Split(string(head), "\r\n")
	proto, code, _ := strings.Cut(lines[0], " ")
	code, _, _ = strings.Cut(code, " ")
	status, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || len(code) != 3 || status < 100 {
		return httpResponse{}, errors.New("the answer has no HTTP/1.x status line")
	}
	length, chunked := -1, false
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok {
			return httpResponse{}, errors.New("the answer has a header line without a colon")
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-length":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 || (length >= 0 && n != length) {
				return httpResponse{}, errors.New("the answer's Content-Length is not one number")
			}
			length = n
		case "transfer-encoding":
			chunked = strings.EqualFold(value, "chunked")
		}
	}
	switch {
	case chunked:
		rest, err = dechunk(rest)
	case length >= 0 && length > len(rest):
		return httpResponse{}, errors.New("the answer ended before its Content-Length")
	case length >= 0:
		rest = rest[:length]
	}
	if err != nil {
		return httpResponse{}, err
	}
	return httpResponse{status: status, body: rest}, nil
}

// dechunk reads a chunked body: hex sizes (extensions ignored), each chunk
// and its CRLF, up to the last, empty chunk.
func dechunk(data []byte) ([]byte, error) {
	var out []byte
	for {
		line, rest, ok := bytes.Cut(data, []byte("\r\n"))
		if !ok {
			return nil, errors.New("a chunk of the answer has no size line")
		}
		sizeText, _, _ := strings.Cut(string(line), ";")
		size, err := strconv.ParseUint(strings.TrimSpace(sizeText), 16, 31)
		if err != nil {
			return nil, errors.New("a chunk of the answer has no hex size")
		}
		if size == 0 {
			return out, nil
		}
		if uint64(len(rest)) < size+2 || !bytes.Equal(rest[size:size+2], []byte("\r\n")) {
			return nil, errors.New("a chunk of the answer ends early")
		}
		out, data = append(out, rest[:size]...), rest[size+2:]
	}
}
