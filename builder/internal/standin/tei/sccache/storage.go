package sccache

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
)

// ErrNotFound is a key the cache does not hold; ErrAlreadyExists an entry
// that cannot be written again (the GitHub cache's 409), which the write
// check takes as writable.
var (
	ErrNotFound      = errors.New("NotFound")
	ErrAlreadyExists = errors.New("AlreadyExists")
)

// Storage is a cache backend, as sccache's Storage trait.
type Storage interface {
	// Get returns the entry at key, or ErrNotFound.
	Get(ctx context.Context, key string) ([]byte, error)
	// Put stores an entry at key.
	Put(ctx context.Context, key string, data []byte) error
	// Location is what `sccache --show-stats` prints as "Cache location".
	Location() string
}

// checkKey is what the server reads and writes when it starts.
const checkKey = ".sccache_check"

// Open builds the storage of backend (see Config.Backend), failing as
// sccache's storage_from_config does ("create s3 cache failed: ...").
func Open(c Config, backend string, b Build, getenv Getenv) (Storage, error) {
	switch backend {
	case "s3":
		s, err := newS3(*c.S3, getenv)
		if err != nil {
			return nil, fmt.Errorf("create s3 cache failed: %w", err)
		}
		return s, nil
	case "gha":
		s, err := newGHA(*c.GHA, b, getenv)
		if err != nil {
			return nil, fmt.Errorf("create gha cache failed: %w", err)
		}
		return s, nil
	case "disk":
		return diskCache(c.Dir), nil
	}
	return nil, fmt.Errorf("the stand-in sccache does not model the %s backend: use S3, GitHub Actions or the local disk", backend)
}

// Check is the server's check at start (cache.rs, Storage::check): a read
// that fails with anything but NotFound is an error; a write that fails
// leaves the storage read-only.
func Check(ctx context.Context, s Storage, warn io.Writer) (readOnly bool, err error) {
	if _, err := s.Get(ctx, checkKey); err != nil && !errors.Is(err, ErrNotFound) {
		return false, fmt.Errorf("cache storage failed to read: %w", err)
	}
	if err := s.Put(ctx, checkKey, []byte("Hello, World!")); err != nil && !errors.Is(err, ErrAlreadyExists) {
		fmt.Fprintf(warn, "storage write check failed: %v\n", err)
		return true, nil
	}
	return false, nil
}

// normalizeKey is sccache's normalize_key: "0/1/2/0123...".
func normalizeKey(key string) string {
	if len(key) < 3 || key == checkKey {
		return key
	}
	return key[0:1] + "/" + key[1:2] + "/" + key[2:3] + "/" + key
}

// diskCache is the local disk cache (SCCACHE_DIR).
type diskCache string

func (d diskCache) path(key string) string { return filepath.Join(string(d), normalizeKey(key)) }

func (d diskCache) Get(_ context.Context, key string) ([]byte, error) {
	data, err := os.ReadFile(d.path(key))
	if errors.Is(err, os.ErrNotExist) {
		return nil, ErrNotFound
	}
	return data, err
}

func (d diskCache) Put(_ context.Context, key string, data []byte) error {
	p := d.path(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

func (d diskCache) Location() string { return fmt.Sprintf("Local disk: %q", string(d)) }

// send does an HTTP request and returns the body of a 2xx answer, or
// ErrNotFound for a 404 (and the GitHub cache's 204), ErrAlreadyExists for
// a 409, or the answer's status as an error. It is how OpenDAL's services
// read their answers (services/ghac/error.rs, parse_error).
func send(client *http.Client, req *http.Request, service string) ([]byte, int, error) {
	resp, err := client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("Unexpected (temporary) at %s, context: { service: %s } => send http request, source: %w", req.Method, service, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, resp.StatusCode, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, resp.StatusCode, ErrNotFound
	case resp.StatusCode == http.StatusConflict:
		return nil, resp.StatusCode, ErrAlreadyExists
	case resp.StatusCode/100 != 2:
		kind := "Unexpected"
		if resp.StatusCode == http.StatusForbidden || resp.StatusCode == http.StatusUnauthorized {
			kind = "PermissionDenied"
		}
		return nil, resp.StatusCode, fmt.Errorf("%s (persistent) at %s, context: { service: %s, status: %d } => %s", kind, req.Method, service, resp.StatusCode, firstLine(body))
	}
	return body, resp.StatusCode, nil
}

func firstLine(b []byte) string {
	for i, c := range b {
		if c == '\n' || i >= 200 {
			return string(b[:i])
		}
	}
	return string(b)
}
