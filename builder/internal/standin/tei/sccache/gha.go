package sccache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The GitHub Actions cache service's twirp API (v2), as OpenDAL's ghac
// service calls it (core/src/services/ghac/core.rs, CACHE_URL_BASE_V2) with
// the messages of actions/toolkit's results/api/v1/cache.proto.
const (
	// TwirpService prefixes the methods' paths, after ACTIONS_RESULTS_URL.
	TwirpService = "twirp/github.actions.results.api.v1.CacheService/"
	// The methods.
	MethodGetDownloadURL = "GetCacheEntryDownloadURL"
	MethodCreateEntry    = "CreateCacheEntry"
	MethodFinalizeUpload = "FinalizeCacheEntryUpload"
	// ContentTypeProtobuf is the requests' and answers' encoding.
	ContentTypeProtobuf = "application/protobuf"
)

// Field numbers of the messages (cache.proto): requests carry key = 2 and
// version (4 in GetCacheEntryDownloadURLRequest and
// FinalizeCacheEntryUploadRequest, whose size_bytes is 3; 3 in
// CreateCacheEntryRequest); answers carry ok = 1 and the signed URL = 2.
const (
	FieldKey           protowire.Number = 2
	FieldVersion       protowire.Number = 4
	FieldVersionCreate protowire.Number = 3
	FieldSize          protowire.Number = 3
	FieldOK            protowire.Number = 1
	FieldURL           protowire.Number = 2
)

// Fields is a protobuf message as its fields: string, bool or int64 values.
type Fields map[protowire.Number]any

// Encode writes the message in protobuf's wire format.
func (f Fields) Encode() []byte {
	nums := make([]protowire.Number, 0, len(f))
	for n := range f {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	var b []byte
	for _, n := range nums {
		switch v := f[n].(type) {
		case string:
			b = protowire.AppendTag(b, n, protowire.BytesType)
			b = protowire.AppendString(b, v)
		case bool:
			b = protowire.AppendTag(b, n, protowire.VarintType)
			b = protowire.AppendVarint(b, protowire.EncodeBool(v))
		case int64:
			b = protowire.AppendTag(b, n, protowire.VarintType)
			b = protowire.AppendVarint(b, uint64(v))
		}
	}
	return b
}

// DecodeFields reads a message: length-delimited fields as strings, varints
// as int64; other wire types are skipped.
func DecodeFields(b []byte) (Fields, error) {
	f := Fields{}
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil, protowire.ParseError(l)
		}
		b = b[l:]
		switch typ {
		case protowire.BytesType:
			v, l := protowire.ConsumeString(b)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			f[n], b = v, b[l:]
		case protowire.VarintType:
			v, l := protowire.ConsumeVarint(b)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			f[n], b = int64(v), b[l:]
		default:
			l := protowire.ConsumeFieldValue(n, typ, b)
			if l < 0 {
				return nil, protowire.ParseError(l)
			}
			b = b[l:]
		}
	}
	return f, nil
}

// String returns field n as a string, "" when absent.
func (f Fields) String(n protowire.Number) string { s, _ := f[n].(string); return s }

// Bool returns field n as a bool.
func (f Fields) Bool(n protowire.Number) bool { v, _ := f[n].(int64); return v != 0 }

// GHAVersion is the cache version sccache's entries carry (src/cache/gha.rs:
// "sccache-v{VERSION}", then "-{SCCACHE_GHA_VERSION}" when set), which the
// v2 service takes as its SHA-256 in hexadecimal.
func GHAVersion(sccacheVersion, namespace string, v2 bool) string {
	v := "sccache-v" + sccacheVersion
	if namespace != "" {
		v += "-" + namespace
	}
	if !v2 {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return hex.EncodeToString(sum[:])
}

// ghaCache is sccache's GitHub Actions cache backend (src/cache/gha.rs
// over OpenDAL's ghac service): entries under /sccache/, keyed by path and
// version; v2 when ACTIONS_CACHE_SERVICE_V2 is set and sccache is 0.10 or
// later (OpenDAL 0.52), else the v1 REST API the service no longer serves.
type ghaCache struct {
	url, token, version string
	v2                  bool
	client              *http.Client
}

// newGHA builds the backend as OpenDAL's ghac builder does: the cache URL
// is ACTIONS_RESULTS_URL for v2, ACTIONS_CACHE_URL (else
// ACTIONS_RESULTS_URL) for v1, and the token ACTIONS_RUNTIME_TOKEN.
func newGHA(c GHAConfig, b Build, getenv Getenv) (*ghaCache, error) {
	v2flag, _ := getenv("ACTIONS_CACHE_SERVICE_V2")
	g := &ghaCache{v2: v2flag != "" && atLeast(b.Version, 0, 10), client: &http.Client{Timeout: 60 * time.Second}}
	if g.v2 {
		g.url, _ = getenv("ACTIONS_RESULTS_URL")
	} else if v, ok := getenv("ACTIONS_CACHE_URL"); ok {
		g.url = v
	} else {
		g.url, _ = getenv("ACTIONS_RESULTS_URL")
	}
	if g.url == "" {
		return nil, errors.New("ConfigInvalid (permanent) at Builder::build, context: { service: ghac } => cache url for ghac not found, maybe not in github action environment?")
	}
	token, ok := getenv("ACTIONS_RUNTIME_TOKEN")
	if !ok {
		return nil, errors.New("ConfigInvalid (permanent) at Builder::build, context: { service: ghac } => ACTIONS_RUNTIME_TOKEN not found, maybe not in github action environment?")
	}
	g.token, g.version = token, GHAVersion(b.Version, c.Version, g.v2)
	return g, nil
}

func (g *ghaCache) path(key string) string { return "sccache/" + normalizeKey(key) }

// twirp calls a method of the v2 service.
func (g *ghaCache) twirp(ctx context.Context, method string, msg Fields) (Fields, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url+TwirpService+method, bytes.NewReader(msg.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Content-Type", ContentTypeProtobuf)
	body, _, err := send(g.client, req, "ghac")
	if err != nil {
		return nil, err
	}
	return DecodeFields(body)
}

func (g *ghaCache) Get(ctx context.Context, key string) ([]byte, error) {
	if !g.v2 {
		return g.getV1(ctx, key)
	}
	resp, err := g.twirp(ctx, MethodGetDownloadURL, Fields{FieldKey: g.path(key), FieldVersion: g.version})
	if err != nil {
		return nil, err
	}
	if !resp.Bool(FieldOK) {
		return nil, ErrNotFound
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, resp.String(FieldURL), nil)
	if err != nil {
		return nil, err
	}
	data, _, err := send(g.client, req, "ghac")
	return data, err
}

func (g *ghaCache) Put(ctx context.Context, key string, data []byte) error {
	if !g.v2 {
		return g.putV1(ctx, key)
	}
	resp, err := g.twirp(ctx, MethodCreateEntry, Fields{FieldKey: g.path(key), FieldVersionCreate: g.version})
	if err != nil {
		return err
	}
	if !resp.Bool(FieldOK) {
		return errors.New("Unexpected (persistent) at write, context: { service: ghac } => create cache entry returns non-ok")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, resp.String(FieldURL), bytes.NewReader(data))
	if err != nil {
		return err
	}
	req.Header.Set("x-ms-blob-type", "BlockBlob") // Azure's Put Blob, as OpenDAL's azblob writer
	if _, _, err := send(g.client, req, "ghac"); err != nil {
		return err
	}
	_, err = g.twirp(ctx, MethodFinalizeUpload, Fields{FieldKey: g.path(key), FieldSize: int64(len(data)), FieldVersion: g.version})
	return err
}

// getV1 is the v1 API's lookup (GET _apis/artifactcache/cache).
func (g *ghaCache) getV1(ctx context.Context, key string) ([]byte, error) {
	u := g.url + "_apis/artifactcache/cache?keys=" + url.QueryEscape(g.path(key)) + "&version=" + g.version
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Accept", "application/json;api-version=6.0-preview.1")
	body, code, err := send(g.client, req, "ghac")
	if err != nil {
		return nil, err
	}
	var loc struct {
		ArchiveLocation string `json:"archiveLocation"`
	}
	if code == http.StatusNoContent || json.Unmarshal(body, &loc) != nil || loc.ArchiveLocation == "" {
		return nil, ErrNotFound
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodGet, loc.ArchiveLocation, nil)
	if err != nil {
		return nil, err
	}
	data, _, err := send(g.client, req, "ghac")
	return data, err
}

// putV1 is the v1 API's reservation (POST _apis/artifactcache/caches);
// the stand-in goes no further, as no service answers it any more.
func (g *ghaCache) putV1(ctx context.Context, key string) error {
	body, _ := json.Marshal(map[string]string{"key": g.path(key), "version": g.version})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.url+"_apis/artifactcache/caches", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+g.token)
	req.Header.Set("Content-Type", "application/json")
	if _, _, err := send(g.client, req, "ghac"); err != nil {
		return err
	}
	return errors.New("Unsupported (persistent) at write, context: { service: ghac } => the stand-in sccache does not upload to the v1 cache service")
}

func (g *ghaCache) Location() string {
	return fmt.Sprintf("ghac, name: %s, prefix: /sccache/", g.version)
}
