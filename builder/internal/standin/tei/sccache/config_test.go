package sccache

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func envOf(kv map[string]string) Getenv {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func ptr(s string) *string { return &s }

// The backend sccache picks from its environment, and with which features
// it was built: S3 before GitHub's cache, the disk when the one configured
// is not compiled in, and the errors of config_from_env.
func TestConfigFromEnv(t *testing.T) {
	all, err := ResolveFeatures("0.10.0", nil, false)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		env      map[string]string
		features []string
		backend  string
		err      string
	}{
		{name: "nothing", env: map[string]string{}, features: all, backend: "disk"},
		{name: "s3", env: map[string]string{"SCCACHE_BUCKET": "b"}, features: all, backend: "s3"},
		{name: "s3 before gha", env: map[string]string{"SCCACHE_BUCKET": "b", "SCCACHE_GHA_ENABLED": "on"}, features: all, backend: "s3"},
		{name: "gha", env: map[string]string{"SCCACHE_GHA_ENABLED": "true"}, features: all, backend: "gha"},
		{name: "gha by version", env: map[string]string{"SCCACHE_GHA_VERSION": "x", "SCCACHE_GHA_ENABLED": "off"}, features: all, backend: "gha"},
		{name: "gha off", env: map[string]string{"SCCACHE_GHA_ENABLED": "0"}, features: all, backend: "disk"},
		{name: "s3 not compiled in", env: map[string]string{"SCCACHE_BUCKET": "b", "SCCACHE_GHA_ENABLED": "on"}, features: []string{"gha"}, backend: "disk"},
		{name: "no features", env: map[string]string{"SCCACHE_GHA_ENABLED": "on"}, backend: "disk"},
		{name: "empty bucket is a bucket", env: map[string]string{"SCCACHE_BUCKET": ""}, features: all, backend: "s3"},
		{name: "redis first", env: map[string]string{"SCCACHE_REDIS_ENDPOINT": "r", "SCCACHE_GHA_ENABLED": "on"}, features: all, backend: "redis"},
		{name: "bad bool", env: map[string]string{"SCCACHE_GHA_ENABLED": "yes"}, err: "SCCACHE_GHA_ENABLED must be 'true', 'on', '1', 'false', 'off' or '0'."},
		{name: "anonymous with keys", env: map[string]string{"SCCACHE_BUCKET": "b", "SCCACHE_S3_NO_CREDENTIALS": "true", "AWS_ACCESS_KEY_ID": "k"},
			err: "If setting S3 credentials, SCCACHE_S3_NO_CREDENTIALS must not be set."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromEnv(envOf(tc.env), "/root")
			if tc.err != "" {
				require.EqualError(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.backend, c.Backend(tc.features))
		})
	}
	c, err := FromEnv(envOf(map[string]string{"SCCACHE_BUCKET": "b", "SCCACHE_S3_KEY_PREFIX": "/a/b/", "SCCACHE_REGION": ""}), "/root")
	require.NoError(t, err)
	require.Equal(t, &S3Config{Bucket: "b", KeyPrefix: "a/b/", Region: ptr("")}, c.S3)
	require.Equal(t, "/root/.cache/sccache", c.Dir)
}

// Building the S3 and GitHub backends fails as OpenDAL's builders do.
func TestOpenFails(t *testing.T) {
	b := Build{Version: "0.10.0"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		err  string
	}{
		{"no region", map[string]string{"SCCACHE_BUCKET": "b"}, "create s3 cache failed: ConfigInvalid (permanent) at Builder::build, context: { service: s3 } => region is missing."},
		{"empty bucket", map[string]string{"SCCACHE_BUCKET": "", "SCCACHE_REGION": "r"}, "The bucket is misconfigured"},
		{"empty endpoint", map[string]string{"SCCACHE_BUCKET": "b", "SCCACHE_ENDPOINT": ""}, "create s3 cache failed: input endpoint  is invalid"},
		{"no url", map[string]string{"SCCACHE_GHA_ENABLED": "on", "ACTIONS_RUNTIME_TOKEN": "t"}, "create gha cache failed: ConfigInvalid (permanent) at Builder::build, context: { service: ghac } => cache url for ghac not found"},
		{"v2 needs the results url", map[string]string{"SCCACHE_GHA_ENABLED": "on", "ACTIONS_CACHE_SERVICE_V2": "1", "ACTIONS_CACHE_URL": "u/", "ACTIONS_RUNTIME_TOKEN": "t"}, "cache url for ghac not found"},
		{"no token", map[string]string{"SCCACHE_GHA_ENABLED": "on", "ACTIONS_RESULTS_URL": "u/"}, "ACTIONS_RUNTIME_TOKEN not found, maybe not in github action environment?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := FromEnv(envOf(tc.env), "/root")
			require.NoError(t, err)
			_, err = Open(c, c.Backend([]string{"s3", "gha"}), b, envOf(tc.env))
			require.ErrorContains(t, err, tc.err)
		})
	}
	c, err := FromEnv(envOf(map[string]string{"SCCACHE_BUCKET": "b", "SCCACHE_S3_KEY_PREFIX": "p"}), "/root")
	require.NoError(t, err)
	s, err := Open(c, "s3", b, envOf(map[string]string{"AWS_REGION": "eu-west-1"}))
	require.NoError(t, err, "AWS_REGION stands in for SCCACHE_REGION")
	require.Equal(t, "s3, name: b, prefix: /p/", s.Location())
	require.Equal(t, "https://s3.eu-west-1.amazonaws.com/b/p/", s.(*s3Cache).base)
	_, err = Open(c, "redis", b, envOf(nil))
	require.ErrorContains(t, err, "does not model the redis backend")
}

func TestResolveFeatures(t *testing.T) {
	got, err := ResolveFeatures("0.10.0", nil, false)
	require.NoError(t, err)
	require.Contains(t, got, "s3")
	require.Contains(t, got, "gha")
	got, err = ResolveFeatures("0.10.0", []string{"s3", "gha"}, true)
	require.NoError(t, err)
	require.Equal(t, []string{"gha", "s3"}, got)
	got, err = ResolveFeatures("0.10.0", nil, true)
	require.NoError(t, err)
	require.Empty(t, got)
	_, err = ResolveFeatures("0.10.0", []string{"s4"}, true)
	require.ErrorContains(t, err, "Package `sccache v0.10.0` does not have the feature `s4`")
}

func TestFieldsRoundTrip(t *testing.T) {
	in := Fields{FieldKey: "sccache/a/b/c/abc", FieldVersion: "v", FieldSize: int64(1 << 40), FieldOK: true}
	out, err := DecodeFields(in.Encode())
	require.NoError(t, err)
	require.Equal(t, "sccache/a/b/c/abc", out.String(FieldKey))
	require.True(t, out.Bool(FieldOK))
	require.Equal(t, int64(1<<40), out[FieldSize])
	empty, err := DecodeFields(nil)
	require.NoError(t, err)
	require.False(t, empty.Bool(FieldOK), "an empty answer is ok = false")
	_, err = DecodeFields([]byte{0x12, 0x05, 'a'})
	require.Error(t, err)
}

func TestGHAVersionAndStats(t *testing.T) {
	require.Equal(t, "sccache-v0.10.0-x", GHAVersion("0.10.0", "x", false))
	require.Len(t, GHAVersion("0.10.0", "", true), 64)
	require.True(t, atLeast("0.10.0", 0, 10))
	require.False(t, atLeast("0.8.2", 0, 10))
	require.False(t, atLeast("main", 0, 10))

	s := &Server{Location: `Local disk: "/sccache"`, Version: "0.10.0", Stats: Stats{Requests: 2, Hits: 1, NonCacheable: 1,
		Reasons: map[string]int{"crate-type": 1}, Compiles: []Record{{Crate: "a", Kind: "lib", Result: "hit"}, {Crate: "b", Kind: "bin", Result: "not cacheable", Reason: "(crate-type)"}}}}
	var buf bytes.Buffer
	s.PrintStats(&buf)
	r := ReadStats(buf.String())
	require.Equal(t, `Local disk: "/sccache"`, r.Location)
	require.Equal(t, map[string]string{"a lib": "hit", "b bin": "not cacheable (crate-type)"}, r.Compiles)
	require.Contains(t, buf.String(), "Cache hits (Rust)                    1\n")
}
