package cacheserver

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/jetbake/jetbake/builder/internal/statuswriter"
)

// GHA stands in for GitHub's Actions cache service as a runner reaches it
// at ACTIONS_RESULTS_URL: the v2 twirp methods (CreateCacheEntry,
// FinalizeCacheEntryUpload, GetCacheEntryDownloadURL) in JSON or protobuf,
// each answered in the request's encoding, authorized by the job's runtime
// token, and the Azure Blob Storage URLs, signed for one blob and one
// permission, it hands out for the entries' content (see ghablob.go). Like
// GitHub's, it serves no v1 API (_apis/artifactcache): those requests get
// 404. An entry, a key and a version, is written once (creating it again
// is twirp's already_exists, 409) and readable once finalized with the
// size of the blob uploaded; a lookup takes the key, then each restore key
// as a prefix, the newest entry first, in the version asked. Scopes (the
// token's branches) are not modelled: every entry is in one.
type GHA struct {
	// URL is ACTIONS_RESULTS_URL: http://127.0.0.1:PORT/, with the slash.
	URL string

	srv      *httptest.Server
	token    string
	sasKey   []byte // signs the blob URLs
	messages map[string]protoreflect.MessageDescriptor
	mu       sync.Mutex
	entries  map[string]*ghaEntry // by key and version
	created  int64                // entries created: the next entry's id
	requests int64                // requests answered: Azure's request ids
	log      []Request
	calls    []Call
	tokens   []string // the bearer tokens of twirp calls, in order
}

// ghaEntry is a cache entry and its blob.
type ghaEntry struct {
	key, version string
	id           int64 // entry_id, in the order of creation
	finalized    bool
	blob         blockBlob
}

// Call is one operation the service answered: a twirp method and the
// encoding it came in, or an Azure blob operation.
type Call struct {
	// Op is the twirp method (CreateCacheEntry, ...) or the Azure operation:
	// Put Blob, Put Block, Put Block List or Get Blob.
	Op string
	// Encoding is a twirp call's: json or protobuf.
	Encoding string
	// Key is a twirp call's key (the entry's), Range a Get Blob's
	// x-ms-range or Range header.
	Key, Range string
	// Status is the answer's status code.
	Status int
}

// NewGHA starts the service, which accepts token.
func NewGHA(token string) *GHA {
	messages, err := cacheMessages()
	if err != nil {
		panic(err) // a constant description: a bug, not an input error
	}
	g := &GHA{token: token, sasKey: []byte(rand.Text()), messages: messages, entries: map[string]*ghaEntry{}}
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
	return slices.Clone(g.log)
}

// Calls returns the operations the service answered, in order.
func (g *GHA) Calls() []Call {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.calls)
}

// Tokens returns the bearer tokens the twirp calls carried.
func (g *GHA) Tokens() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.tokens)
}

// Entries returns the keys of the finalized entries, sorted.
func (g *GHA) Entries() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, e := range g.entries {
		if e.finalized {
			out = append(out, e.key)
		}
	}
	slices.Sort(out)
	return out
}

func (g *GHA) serve(w http.ResponseWriter, r *http.Request) {
	rec := statuswriter.New(w)
	// Blocks and blobs of up to 256 MiB; the body is read before the lock.
	body, err := io.ReadAll(io.LimitReader(r.Body, 256<<20))
	g.mu.Lock()
	defer func() {
		g.log = append(g.log, Request{Method: r.Method, Path: r.URL.Path, Status: rec.Status})
		g.mu.Unlock()
	}()
	if err != nil {
		http.Error(rec, err.Error(), http.StatusBadRequest)
		return
	}
	if id, ok := strings.CutPrefix(r.URL.Path, blobPrefix); ok {
		g.blob(rec, r, id, body)
		return
	}
	if method, ok := strings.CutPrefix(r.URL.Path, twirpPrefix); ok {
		g.twirp(rec, r, method, body)
		return
	}
	http.NotFound(rec, r)
}

// twirp answers a method, as a twirp server does: POST only, JSON or
// protobuf, errors as JSON {"code", "msg"} with their HTTP status.
func (g *GHA) twirp(w *statuswriter.Writer, r *http.Request, method string, body []byte) {
	enc := twirpEncoding(r.Header.Get("Content-Type"))
	var key string
	defer func() { g.calls = append(g.calls, Call{Op: method, Encoding: enc, Key: key, Status: w.Status}) }()
	reqDesc, ok := g.messages[method+"Request"]
	switch {
	case !ok:
		twirpError(w, "bad_route", fmt.Sprintf("no handler for path %q", r.URL.Path))
		return
	case r.Method != http.MethodPost:
		twirpError(w, "bad_route", fmt.Sprintf("unsupported method %q (only POST is allowed)", r.Method))
		return
	case enc == "":
		twirpError(w, "bad_route", fmt.Sprintf("unexpected Content-Type: %q", r.Header.Get("Content-Type")))
		return
	}
	auth := r.Header.Get("Authorization")
	g.tokens = append(g.tokens, strings.TrimPrefix(auth, "Bearer "))
	if auth != "Bearer "+g.token {
		twirpError(w, "unauthenticated", "the runtime token is not valid")
		return
	}
	req, err := decodeMessage(reqDesc, enc, body)
	if err != nil {
		twirpError(w, "malformed", fmt.Sprintf("the %s request could not be decoded: %v", enc, err))
		return
	}
	key = req.str("key")
	resp := newMessage(g.messages[method+"Response"])
	switch method {
	case methodCreate:
		if !g.create(w, req, resp) {
			return
		}
	case methodFinalize:
		g.finalize(req, resp)
	case methodDownload:
		g.lookup(req, resp)
	}
	out, err := encodeMessage(resp, enc)
	if err != nil {
		twirpError(w, "internal", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/"+enc)
	_, _ = w.Write(out)
}

// create reserves an entry and hands out its upload URL; false when it
// answered an error.
func (g *GHA) create(w *statuswriter.Writer, req, resp message) bool {
	key, version := req.str("key"), req.str("version")
	if key == "" || version == "" {
		twirpError(w, "invalid_argument", "key and version are required")
		return false
	}
	id := key + "\x00" + version
	if _, found := g.entries[id]; found {
		// An entry is written once: twirp's already_exists.
		twirpError(w, "already_exists", "cache entry with the same key, version, and scope already exists")
		return false
	}
	g.created++
	g.entries[id] = &ghaEntry{key: key, version: version, id: g.created}
	resp.set(map[string]any{"ok": true, "signed_upload_url": g.blobURL(id, sasWrite)})
	return true
}

// finalize makes an entry readable once its blob has the size given.
func (g *GHA) finalize(req, resp message) {
	e, found := g.entries[req.str("key")+"\x00"+req.str("version")]
	switch {
	case !found || e.finalized:
		resp.set(map[string]any{"ok": false, "message": "no cache entry is being uploaded with that key and version"})
	case !e.blob.exists:
		resp.set(map[string]any{"ok": false, "message": "the cache entry has no uploaded content"})
	case int64(len(e.blob.data)) != req.int("size_bytes"):
		resp.set(map[string]any{"ok": false, "message": fmt.Sprintf("the uploaded size %d is not size_bytes %d", len(e.blob.data), req.int("size_bytes"))})
	default:
		e.finalized = true
		resp.set(map[string]any{"ok": true, "entry_id": e.id})
	}
}

// lookup finds the entry for a key and its restore keys, as GitHub's
// service does: the key itself, else the newest entry whose key starts
// with the first restore key that has one; the version must match.
func (g *GHA) lookup(req, resp message) {
	version := req.str("version")
	var found *ghaEntry
	if e, ok := g.entries[req.str("key")+"\x00"+version]; ok && e.finalized {
		found = e
	}
	for _, prefix := range req.strs("restore_keys") {
		if found != nil {
			break
		}
		for _, e := range g.entries {
			if e.finalized && e.version == version && strings.HasPrefix(e.key, prefix) && (found == nil || e.id > found.id) {
				found = e
			}
		}
	}
	if found == nil {
		resp.set(map[string]any{"ok": false})
		return
	}
	resp.set(map[string]any{"ok": true, "signed_download_url": g.blobURL(found.key+"\x00"+found.version, sasRead), "matched_key": found.key})
}

// twirpError writes a twirp error: its code's HTTP status, JSON.
func twirpError(w http.ResponseWriter, code, msg string) {
	status := map[string]int{"bad_route": http.StatusNotFound, "unauthenticated": http.StatusUnauthorized, "malformed": http.StatusBadRequest,
		"invalid_argument": http.StatusBadRequest, "already_exists": http.StatusConflict, "internal": http.StatusInternalServerError}[code]
	body, _ := json.Marshal(map[string]string{"code": code, "msg": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// now is the service's clock, for blob times and URL expiry.
func now() time.Time { return time.Now().UTC() }

// RuntimeToken returns a token shaped as a runner's ACTIONS_RUNTIME_TOKEN,
// which BuildKit's gha cache (go-actions-cache) reads without checking its
// signature: a JWT whose "ac" claim is the cache scopes in JSON (the
// branch, read and write) and whose "nbf" and "exp" claims bound its life.
// Its signature is random: the stand-in service accepts the token it was
// started with, byte for byte.
func RuntimeToken(scope string, lifetime time.Duration) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	ac, _ := json.Marshal([]map[string]any{{"Scope": scope, "Permission": 3}})
	t := now()
	claims := map[string]any{"ac": string(ac), "nbf": t.Add(-time.Minute).Unix(), "iat": t.Unix(), "exp": t.Add(lifetime).Unix(),
		"iss": "vstoken.actions.githubusercontent.com", "aud": "vso:" + rand.Text()}
	return enc(map[string]string{"typ": "JWT", "alg": "RS256"}) + "." + enc(claims) + "." + base64.RawURLEncoding.EncodeToString([]byte(rand.Text()+rand.Text()))
}
