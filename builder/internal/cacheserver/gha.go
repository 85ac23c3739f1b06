package cacheserver

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/jetbake/jetbake/builder/internal/standin/tei/sccache"
	"github.com/jetbake/jetbake/builder/internal/statuswriter"
)

// GHA stands in for GitHub's Actions cache service as a runner reaches it
// at ACTIONS_RESULTS_URL: the v2 twirp methods (GetCacheEntryDownloadURL,
// CreateCacheEntry, FinalizeCacheEntryUpload) in protobuf, authorized by
// the job's runtime token, and the signed URLs it hands out for the
// entries' blobs (Azure's Put Blob and Get Blob). Like GitHub's, it serves
// no v1 API (_apis/artifactcache): those requests get 404. An entry is
// readable once finalized, and written once: creating it again is twirp's
// already_exists (409).
type GHA struct {
	// URL is ACTIONS_RESULTS_URL: http://127.0.0.1:PORT/, with the slash.
	URL string

	srv     *httptest.Server
	token   string
	mu      sync.Mutex
	entries map[string][]byte // key and version: content, once finalized
	pending map[string][]byte // uploaded, not finalized
	log     []Request
	tokens  []string // the bearer tokens of twirp calls, in order
}

// NewGHA starts the service, which accepts token.
func NewGHA(token string) *GHA {
	g := &GHA{token: token, entries: map[string][]byte{}, pending: map[string][]byte{}}
	// URL is set before the server starts: its handlers read it (blobURL).
	g.srv = httptest.NewUnstartedServer(http.HandlerFunc(g.serve))
	g.URL = "http://" + g.srv.Listener.Addr().String() + "/"
	g.srv.Start()
	return g
}

// Close stops the service.
func (g *GHA) Close() { g.srv.Close() }

// Requests returns what the service was asked, in order.
func (g *GHA) Requests() []Request {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Request(nil), g.log...)
}

// Tokens returns the bearer tokens the twirp calls carried.
func (g *GHA) Tokens() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.tokens...)
}

// Entries returns the keys of the finalized entries.
func (g *GHA) Entries() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for k := range g.entries {
		key, _, _ := strings.Cut(k, "\x00")
		out = append(out, key)
	}
	return out
}

func (g *GHA) serve(w http.ResponseWriter, r *http.Request) {
	rec := statuswriter.New(w)
	g.mu.Lock()
	defer func() {
		g.log = append(g.log, Request{Method: r.Method, Path: r.URL.Path, Status: rec.Status})
		g.mu.Unlock()
	}()
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		http.Error(rec, err.Error(), http.StatusBadRequest)
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, "/blob/"); ok {
		g.blob(rec, r, id, body)
		return
	}
	method, ok := strings.CutPrefix(r.URL.Path, "/"+sccache.TwirpService)
	if !ok || r.Method != http.MethodPost {
		http.NotFound(rec, r)
		return
	}
	auth := r.Header.Get("Authorization")
	g.tokens = append(g.tokens, strings.TrimPrefix(auth, "Bearer "))
	if auth != "Bearer "+g.token {
		http.Error(rec, `{"code":"unauthenticated","msg":"the runtime token is not valid"}`, http.StatusUnauthorized)
		return
	}
	msg, err := sccache.DecodeFields(body)
	if err != nil || r.Header.Get("Content-Type") != sccache.ContentTypeProtobuf {
		http.Error(rec, `{"code":"malformed","msg":"not a protobuf message"}`, http.StatusBadRequest)
		return
	}
	key := msg.String(sccache.FieldKey)
	var resp sccache.Fields
	switch method {
	case sccache.MethodGetDownloadURL:
		id := key + "\x00" + msg.String(sccache.FieldVersion)
		if _, found := g.entries[id]; found {
			resp = sccache.Fields{sccache.FieldOK: true, sccache.FieldURL: g.blobURL(id) + "?sig=read"}
		} else {
			resp = sccache.Fields{sccache.FieldOK: false}
		}
	case sccache.MethodCreateEntry:
		id := key + "\x00" + msg.String(sccache.FieldVersionCreate)
		if _, found := g.entries[id]; found {
			// An entry is written once: twirp's already_exists.
			http.Error(rec, `{"code":"already_exists","msg":"cache entry with the same key, version, and scope already exists"}`, http.StatusConflict)
			return
		}
		resp = sccache.Fields{sccache.FieldOK: true, sccache.FieldURL: g.blobURL(id) + "?sig=write"}
	case sccache.MethodFinalizeUpload:
		id := key + "\x00" + msg.String(sccache.FieldVersion)
		data, found := g.pending[id]
		size, _ := msg[sccache.FieldSize].(int64)
		if !found || int64(len(data)) != size {
			resp = sccache.Fields{sccache.FieldOK: false}
			break
		}
		delete(g.pending, id)
		g.entries[id] = data
		resp = sccache.Fields{sccache.FieldOK: true}
	default:
		http.Error(rec, `{"code":"bad_route"}`, http.StatusNotFound)
		return
	}
	rec.Header().Set("Content-Type", sccache.ContentTypeProtobuf)
	_, _ = rec.Write(resp.Encode())
}

// blobURL is the signed URL of an entry's blob: /blob/ID, ID the key and
// version in hexadecimal.
func (g *GHA) blobURL(id string) string { return fmt.Sprintf("%sblob/%x", g.URL, id) }

func (g *GHA) blob(w http.ResponseWriter, r *http.Request, hexID string, body []byte) {
	var id string
	if _, err := fmt.Sscanf(hexID, "%x", &id); err != nil {
		http.NotFound(w, r)
		return
	}
	switch {
	case r.Method == http.MethodPut && r.URL.Query().Get("sig") == "write" && r.Header.Get("x-ms-blob-type") == "BlockBlob":
		g.pending[id] = body
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodGet && r.URL.Query().Get("sig") == "read":
		data, ok := g.entries[id]
		if !ok {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write(data)
	default:
		http.Error(w, "AuthenticationFailed", http.StatusForbidden)
	}
}
