package cacheserver

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	actionscache "github.com/tonistiigi/go-actions-cache"
	"google.golang.org/protobuf/encoding/protowire"
)

// newActionsCache is BuildKit's client of the service (go-actions-cache,
// v2: JSON twirp calls, the Azure SDK for the blobs), with no retries.
func newActionsCache(t *testing.T, token, url string) *actionscache.Cache {
	t.Helper()
	c, err := actionscache.New(token, url, true, actionscache.Opt{Timeout: 10 * time.Second})
	require.NoError(t, err)
	return c
}

func readEntry(t *testing.T, ctx context.Context, e *actionscache.Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	require.NoError(t, e.WriteTo(ctx, &buf))
	return buf.Bytes()
}

// BuildKit's client saves and loads a blob of several Azure blocks, reads
// it from an offset (a ranged Get Blob), finds the newest of its mutable
// index entries by prefix, and is refused an entry written twice.
func TestGHAActionsCacheClient(t *testing.T) {
	ctx := t.Context()
	token := RuntimeToken("refs/heads/main", time.Hour)
	g := NewGHA(token)
	t.Cleanup(g.Close)
	c := newActionsCache(t, token, g.URL)
	require.Equal(t, "refs/heads/main", c.Scopes()[0].Scope)

	data := make([]byte, 2<<20+12345) // three 1 MiB blocks
	_, _ = rand.Read(data)
	const key = "buildkit-blob-1-sha256:0123"
	require.NoError(t, c.Save(ctx, key, actionscache.NewBlob(data)))
	var ops []string
	for _, call := range g.Calls() {
		ops = append(ops, call.Op+" "+call.Encoding)
		require.Less(t, call.Status, 300, "%+v", call)
	}
	require.Equal(t, []string{"CreateCacheEntry json", "Put Block ", "Put Block ", "Put Block ", "Put Block List ", "FinalizeCacheEntryUpload json"}, ops)

	e, err := c.Load(ctx, key)
	require.NoError(t, err)
	require.NotNil(t, e)
	require.Equal(t, key, e.Key)
	require.Equal(t, data, readEntry(t, ctx, e))
	ra := e.Download(ctx)
	part := make([]byte, 1000)
	n, err := ra.ReadAt(part, 1<<20+7)
	require.NoError(t, err)
	require.Equal(t, data[1<<20+7:1<<20+7+n], part[:n])
	require.NoError(t, ra.Close())
	last := g.Calls()[len(g.Calls())-1]
	require.Equal(t, Call{Op: "Get Blob", Range: "bytes=1048583-", Status: http.StatusPartialContent}, last)

	err = c.Save(ctx, key, actionscache.NewBlob([]byte("again")))
	require.ErrorIs(t, err, os.ErrExist, "an entry is written once")

	// BuildKit's cache index: SaveMutable writes index#1, then index#2;
	// a load by the bare key takes the newest by prefix.
	for _, v := range []string{"first", "second"} {
		require.NoError(t, c.SaveMutable(ctx, "index-main-1-abc", time.Second, func(*actionscache.Entry) (actionscache.Blob, error) {
			return actionscache.NewBlob([]byte(v)), nil
		}))
	}
	e, err = c.Load(ctx, "index-main-1-abc")
	require.NoError(t, err)
	require.Equal(t, "index-main-1-abc#2", e.Key)
	require.Equal(t, []byte("second"), readEntry(t, ctx, e))
	e, err = c.Load(ctx, "index-main-2")
	require.NoError(t, err)
	require.Nil(t, e, "no entry has the prefix")
	require.Equal(t, []string{key, "index-main-1-abc#1", "index-main-1-abc#2"}, g.Entries())
	for _, tok := range g.Tokens() {
		require.Equal(t, token, tok)
	}
}

// A token the service did not issue is refused with twirp's
// unauthenticated (401), which BuildKit's client reports.
func TestGHAWrongToken(t *testing.T) {
	ctx := t.Context()
	g := NewGHA(RuntimeToken("refs/heads/main", time.Hour))
	t.Cleanup(g.Close)
	c := newActionsCache(t, RuntimeToken("refs/heads/main", time.Hour), g.URL)
	err := c.Save(ctx, "k", actionscache.NewBlob([]byte("x")))
	var he actionscache.HTTPError
	require.ErrorAs(t, err, &he)
	require.Equal(t, http.StatusUnauthorized, he.StatusCode)
	require.EqualError(t, err, "unauthenticated")
	_, err = c.Load(ctx, "k")
	require.ErrorAs(t, err, &he)
	require.Empty(t, g.Entries())
}

func post(t *testing.T, url, contentType, token string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, out
}

// The protobuf encoding, as actions/toolkit and sccache send it: restore
// keys are a repeated field, and the answer comes in protobuf.
func TestGHAProtobufLookup(t *testing.T) {
	token := RuntimeToken("refs/heads/main", time.Hour)
	g := NewGHA(token)
	t.Cleanup(g.Close)
	c := newActionsCache(t, token, g.URL)
	require.NoError(t, c.Save(t.Context(), "deps-linux-abc", actionscache.NewBlob([]byte("deps"))))

	var msg []byte
	msg = protowire.AppendTag(msg, 2, protowire.BytesType)
	msg = protowire.AppendString(msg, "deps-linux-xyz")
	for _, rk := range []string{"deps-mac-", "deps-linux-"} {
		msg = protowire.AppendTag(msg, 3, protowire.BytesType)
		msg = protowire.AppendString(msg, rk)
	}
	msg = protowire.AppendTag(msg, 4, protowire.BytesType)
	msg = protowire.AppendString(msg, entryVersion(t, g, "deps-linux-abc"))
	resp, body := post(t, g.URL+"twirp/github.actions.results.api.v1.CacheService/GetCacheEntryDownloadURL", "application/protobuf", token, msg)
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Equal(t, "application/protobuf", resp.Header.Get("Content-Type"))
	fields := map[protowire.Number]any{}
	for len(body) > 0 {
		num, typ, n := protowire.ConsumeTag(body)
		require.Positive(t, n)
		body = body[n:]
		if typ == protowire.VarintType {
			v, n := protowire.ConsumeVarint(body)
			fields[num], body = v, body[n:]
			continue
		}
		v, n := protowire.ConsumeString(body)
		fields[num], body = v, body[n:]
	}
	require.Equal(t, uint64(1), fields[1], "ok")
	require.Equal(t, "deps-linux-abc", fields[3], "matched_key: the second restore key's prefix")
	require.Contains(t, fields[2], "sp=r", "signed_download_url")
}

// entryVersion is the version an entry was created with.
func entryVersion(t *testing.T, g *GHA, key string) string {
	t.Helper()
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, e := range g.entries {
		if e.key == key {
			return e.version
		}
	}
	t.Fatalf("no entry %s", key)
	return ""
}

// Twirp's errors, JSON with their status, for what a twirp server refuses
// before a method runs; the v1 API is not served.
func TestGHATwirpErrors(t *testing.T) {
	g := NewGHA("tok")
	t.Cleanup(g.Close)
	method := g.URL + "twirp/github.actions.results.api.v1.CacheService/CreateCacheEntry"
	for _, tc := range []struct {
		name, url, contentType, token, body, code string
		status                                    int
	}{
		{"text body", method, "text/plain", "tok", "{}", "bad_route", http.StatusNotFound},
		{"unknown method", g.URL + "twirp/github.actions.results.api.v1.CacheService/DeleteCacheEntry", "application/json", "tok", "{}", "bad_route", http.StatusNotFound},
		{"wrong token", method, "application/json", "other", `{"key":"k","version":"v"}`, "unauthenticated", http.StatusUnauthorized},
		{"not JSON", method, "application/json", "tok", `{"key":`, "malformed", http.StatusBadRequest},
		{"not protobuf", method, "application/protobuf", "tok", "\xff\xff", "malformed", http.StatusBadRequest},
		{"no version", method, "application/json; charset=utf-8", "tok", `{"key":"k"}`, "invalid_argument", http.StatusBadRequest},
	} {
		resp, body := post(t, tc.url, tc.contentType, tc.token, []byte(tc.body))
		require.Equal(t, tc.status, resp.StatusCode, tc.name)
		var terr struct{ Code, Msg string }
		require.NoError(t, json.Unmarshal(body, &terr), tc.name)
		require.Equal(t, tc.code, terr.Code, tc.name)
		require.NotEmpty(t, terr.Msg, tc.name)
	}
	resp, body := post(t, method, "application/json", "tok", []byte(`{"key":"k","version":"v","metadata":{"scope":[]}}`))
	require.Equal(t, http.StatusOK, resp.StatusCode, string(body))
	require.Contains(t, string(body), `"signed_upload_url":`)
	require.Contains(t, string(body), `"message":""`, "every field, as twirp answers")
	resp, _ = post(t, g.URL+"_apis/artifactcache/caches", "application/json", "tok", []byte(`{"key":"k","version":"v"}`))
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

// The blob URLs are signed for one blob and one permission: a changed
// signature or a read URL used to write is refused as Azure refuses it.
func TestGHABlobSignatures(t *testing.T) {
	g := NewGHA("tok")
	t.Cleanup(g.Close)
	_, body := post(t, g.URL+"twirp/github.actions.results.api.v1.CacheService/CreateCacheEntry", "application/json", "tok", []byte(`{"key":"k","version":"v"}`))
	var created struct {
		URL string `json:"signed_upload_url"`
	}
	require.NoError(t, json.Unmarshal(body, &created))
	put := func(url string, hdr map[string]string) *http.Response {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url, strings.NewReader("data"))
		require.NoError(t, err)
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp
	}
	blockBlob := map[string]string{"x-ms-blob-type": "BlockBlob"}
	resp := put(strings.Replace(created.URL, "sp=cw", "sp=rcw", 1), blockBlob)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "AuthenticationFailed", resp.Header.Get("x-ms-error-code"))
	resp = put(created.URL, nil)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "MissingRequiredHeader", resp.Header.Get("x-ms-error-code"))
	resp = put(created.URL, blockBlob)
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.NotEmpty(t, resp.Header.Get("x-ms-request-id"))
	require.NotEmpty(t, resp.Header.Get("ETag"))

	_, body = post(t, g.URL+"twirp/github.actions.results.api.v1.CacheService/FinalizeCacheEntryUpload", "application/json", "tok", []byte(`{"key":"k","version":"v","size_bytes":"5"}`))
	require.JSONEq(t, `{"ok":false,"entry_id":"0","message":"the uploaded size 4 is not size_bytes 5"}`, string(body))
	_, body = post(t, g.URL+"twirp/github.actions.results.api.v1.CacheService/FinalizeCacheEntryUpload", "application/json", "tok", []byte(`{"key":"k","version":"v","size_bytes":"4"}`))
	require.JSONEq(t, `{"ok":true,"entry_id":"1","message":""}`, string(body), "int64 as a string, protojson's rule")
	_, body = post(t, g.URL+"twirp/github.actions.results.api.v1.CacheService/GetCacheEntryDownloadURL", "application/json", "tok", []byte(`{"key":"k","version":"v"}`))
	var found struct {
		URL string `json:"signed_download_url"`
	}
	require.NoError(t, json.Unmarshal(body, &found))
	resp = put(found.URL, blockBlob)
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "AuthorizationPermissionMismatch", resp.Header.Get("x-ms-error-code"))
}
