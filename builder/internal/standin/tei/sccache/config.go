// Package sccache is the stand-in sccache of jetbake's stand-in build
// images (cmd/sccache), which cargo runs as RUSTC_WRAPPER. It keeps
// sccache's contract as sccache v0.10 has it (mozilla/sccache, src/config.rs,
// src/cache/cache.rs, src/server.rs, src/compiler/rust.rs; the GitHub
// Actions and S3 services of Apache OpenDAL 0.52, which it uses):
//   - the cache backend comes from the environment: SCCACHE_BUCKET (S3)
//     before SCCACHE_GHA_ENABLED or SCCACHE_GHA_VERSION (GitHub Actions),
//     else the local disk, SCCACHE_DIR; a backend that is configured but
//     not compiled in (cargo install sccache --no-default-features) is
//     silently replaced by the local disk, as sccache's storage_from_config
//     does;
//   - the server checks the backend when it starts (a read, then a write):
//     a backend it cannot read fails every compilation ("Server startup
//     failed"), one it cannot write to is used read-only;
//   - a crate's cache key hashes its arguments, sources, --extern files,
//     env-deps, CARGO_ variables and working folder; binaries, build scripts
//     and incremental compilations are not cacheable;
//   - the S3 backend talks S3 (path-style, signed with AWS Signature
//     Version 4 from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), the
//     GitHub Actions one the cache service's twirp protocol (v2 with
//     ACTIONS_CACHE_SERVICE_V2 and ACTIONS_RESULTS_URL, else the retired v1
//     with ACTIONS_CACHE_URL) with ACTIONS_RUNTIME_TOKEN.
//
// `sccache --show-stats` prints sccache's counters and cache location, and
// the stand-in's own record of each compilation: which crate, hit or miss.
package sccache

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// Backends sccache reads from the environment, in the order sccache picks
// the first one configured (config.rs, CacheConfigs::into_fallback).
var backendOrder = []string{"s3", "redis", "memcached", "gcs", "gha", "azure", "webdav", "oss"}

// Config is sccache's cache configuration, as config_from_env reads it.
type Config struct {
	// S3 is set by SCCACHE_BUCKET.
	S3 *S3Config
	// GHA is set by SCCACHE_GHA_VERSION, or SCCACHE_GHA_ENABLED true.
	GHA *GHAConfig
	// Others are the backends the stand-in does not model that the
	// environment configures (redis, memcached, gcs, azure, webdav, oss).
	Others []string
	// Dir is the local disk cache, SCCACHE_DIR, else ~/.cache/sccache.
	Dir string
}

// S3Config is sccache's S3 backend.
type S3Config struct {
	// Bucket is SCCACHE_BUCKET.
	Bucket string
	// Region is SCCACHE_REGION and Endpoint SCCACHE_ENDPOINT, nil when
	// unset: a variable set to "" is set, for sccache as for the shell.
	Region, Endpoint *string
	// KeyPrefix is SCCACHE_S3_KEY_PREFIX, as sccache normalizes it:
	// without leading or trailing slashes, then one slash appended.
	KeyPrefix string
	// NoCredentials is SCCACHE_S3_NO_CREDENTIALS: anonymous access.
	NoCredentials bool
	// UseSSL is SCCACHE_S3_USE_SSL, nil when unset.
	UseSSL *bool
}

// GHAConfig is sccache's GitHub Actions cache backend.
type GHAConfig struct {
	// Version is SCCACHE_GHA_VERSION, a namespace for the cache ("" when
	// only SCCACHE_GHA_ENABLED is set).
	Version string
}

// Getenv looks a variable up, as os.LookupEnv.
type Getenv func(string) (string, bool)

// boolVar reads a boolean variable as sccache's bool_from_env_var does.
func boolVar(getenv Getenv, name string) (value, set bool, err error) {
	v, ok := getenv(name)
	if !ok {
		return false, false, nil
	}
	switch strings.ToLower(v) {
	case "true", "on", "1":
		return true, true, nil
	case "false", "off", "0":
		return false, true, nil
	}
	return false, true, fmt.Errorf("%s must be 'true', 'on', '1', 'false', 'off' or '0'.", name)
}

// keyPrefix is sccache's key_prefix_from_env_var.
func keyPrefix(getenv Getenv, name string) string {
	v, _ := getenv(name)
	v = strings.Trim(v, "/")
	if v == "" {
		return ""
	}
	return v + "/"
}

// FromEnv reads the cache configuration from the environment, failing
// where sccache's config_from_env fails. A variable set to the empty string
// is set (std::env::var): SCCACHE_BUCKET="" configures S3 with an empty
// bucket. home is $HOME, for the default disk cache.
func FromEnv(getenv Getenv, home string) (Config, error) {
	var c Config
	if bucket, ok := getenv("SCCACHE_BUCKET"); ok {
		s3 := &S3Config{Bucket: bucket, KeyPrefix: keyPrefix(getenv, "SCCACHE_S3_KEY_PREFIX")}
		s3.Region, s3.Endpoint = lookup(getenv, "SCCACHE_REGION"), lookup(getenv, "SCCACHE_ENDPOINT")
		var err error
		if s3.NoCredentials, _, err = boolVar(getenv, "SCCACHE_S3_NO_CREDENTIALS"); err != nil {
			return c, err
		}
		ssl, set, err := boolVar(getenv, "SCCACHE_S3_USE_SSL")
		if err != nil {
			return c, err
		}
		if set {
			s3.UseSSL = &ssl
		}
		c.S3 = s3
	}
	if c.S3 != nil && c.S3.NoCredentials && (isSet(getenv, "AWS_ACCESS_KEY_ID") || isSet(getenv, "AWS_SECRET_ACCESS_KEY")) {
		return c, errors.New("If setting S3 credentials, SCCACHE_S3_NO_CREDENTIALS must not be set.")
	}
	if v, ok := getenv("SCCACHE_GHA_VERSION"); ok {
		c.GHA = &GHAConfig{Version: v}
	} else if on, _, err := boolVar(getenv, "SCCACHE_GHA_ENABLED"); err != nil {
		return c, err
	} else if on {
		c.GHA = &GHAConfig{}
	}
	for name, vars := range map[string][]string{
		"redis":     {"SCCACHE_REDIS", "SCCACHE_REDIS_ENDPOINT", "SCCACHE_REDIS_CLUSTER_ENDPOINTS"},
		"memcached": {"SCCACHE_MEMCACHED", "SCCACHE_MEMCACHED_ENDPOINT"},
		"gcs":       {"SCCACHE_GCS_BUCKET"},
		"azure":     {"SCCACHE_AZURE_CONNECTION_STRING"},
		"webdav":    {"SCCACHE_WEBDAV_ENDPOINT"},
		"oss":       {"SCCACHE_OSS_BUCKET"},
	} {
		for _, v := range vars {
			if isSet(getenv, v) {
				c.Others = append(c.Others, name)
				break
			}
		}
	}
	c.Dir, _ = getenv("SCCACHE_DIR")
	if c.Dir == "" {
		c.Dir = filepath.Join(home, ".cache", "sccache")
	}
	return c, nil
}

func lookup(getenv Getenv, name string) *string {
	if v, ok := getenv(name); ok {
		return &v
	}
	return nil
}

func isSet(getenv Getenv, name string) bool {
	_, ok := getenv(name)
	return ok
}

// Backend is the backend the server uses with an sccache built with
// features: the first one configured, in sccache's order, or "disk" when
// none is, or when that one is not compiled in (storage_from_config falls
// through to the disk cache without a word).
func (c Config) Backend(features []string) string {
	configured := map[string]bool{"s3": c.S3 != nil, "gha": c.GHA != nil}
	for _, o := range c.Others {
		configured[o] = true
	}
	for _, b := range backendOrder {
		if !configured[b] {
			continue
		}
		for _, f := range features {
			if f == b {
				return b
			}
		}
		return "disk"
	}
	return "disk"
}
