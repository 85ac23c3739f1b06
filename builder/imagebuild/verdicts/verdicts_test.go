package verdicts

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sampleInputs() Inputs {
	return Inputs{
		Tool: "v0.4.0 (commit 0123456789ab)", CUDA: "12.6",
		Targets: []Target{
			{SM: "8.7", Path: "/usr/local/bin/router-87", Router: "sha256:" + strings.Repeat("a", 64)},
			{SM: "11.0", Path: "/usr/local/bin/router-110", Router: "sha256:" + strings.Repeat("b", 64)},
		},
		Runtime: "registry/l4t-cuda@sha256:" + strings.Repeat("c", 64), RuntimeStage: "sha256:" + strings.Repeat("6", 64),
		RuntimeFiles: "sha256:" + strings.Repeat("9", 64), RuntimeConfig: "sha256:" + strings.Repeat("d", 64),
		BuildBase: "registry/l4t-jetpack@sha256:" + strings.Repeat("e", 64),
		Smoke:     json.RawMessage(`{"args":["--version"]}`),
	}
}

// Every input the smoke run or the audit depends on changes the key.
func TestKeyChangesWithEachInput(t *testing.T) {
	base := sampleInputs()
	require.Equal(t, base.Key(), sampleInputs().Key(), "the key is a function of the inputs")
	require.Len(t, base.Key(), 64)
	changes := map[string]func(*Inputs){
		"jetbake's version":         func(in *Inputs) { in.Tool = "v0.4.1 (commit 0123456789ab)" },
		"a modified jetbake":        func(in *Inputs) { in.Tool += " modified /usr/bin/jetbake 123 1700000000" },
		"the CUDA version":          func(in *Inputs) { in.CUDA = "12.8" },
		"a router's digest":         func(in *Inputs) { in.Targets[1].Router = "sha256:" + strings.Repeat("f", 64) },
		"a router's path":           func(in *Inputs) { in.Targets[0].Path = "/usr/local/bin/r87" },
		"an SM target":              func(in *Inputs) { in.Targets[0].SM = "8.9" },
		"one target fewer":          func(in *Inputs) { in.Targets = in.Targets[:1] },
		"the targets' order":        func(in *Inputs) { in.Targets[0], in.Targets[1] = in.Targets[1], in.Targets[0] },
		"the runtime base":          func(in *Inputs) { in.Runtime = "registry/l4t-cuda@sha256:" + strings.Repeat("1", 64) },
		"the runtime stage's files": func(in *Inputs) { in.RuntimeFiles = "sha256:" + strings.Repeat("8", 64) },
		"the runtime stage's steps": func(in *Inputs) { in.RuntimeStage = "sha256:" + strings.Repeat("7", 64) },
		"no runtime stage":          func(in *Inputs) { in.RuntimeFiles, in.RuntimeStage = "", "" },
		"the runtime config":        func(in *Inputs) { in.RuntimeConfig = "sha256:" + strings.Repeat("2", 64) },
		"the build base (stub)":     func(in *Inputs) { in.BuildBase = "registry/l4t-jetpack@sha256:" + strings.Repeat("3", 64) },
		"the smoke arguments":       func(in *Inputs) { in.Smoke = json.RawMessage(`{"args":["--help"]}`) },
		"no smoke run":              func(in *Inputs) { in.Smoke = nil },
		"what the smoke run sets":   func(in *Inputs) { in.Smoke = json.RawMessage(`{"args":["--version"],"env":{"A":"1"}}`) },
	}
	seen := map[string]string{base.Key(): "base"}
	for name, change := range changes {
		in := sampleInputs()
		change(&in)
		k := in.Key()
		require.NotContains(t, seen, k, "%s gives the key of %s", name, seen[k])
		seen[k] = name
	}
}

func TestSaveLoadClear(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "jetbake", "verdicts")
	s := Store{Dir: dir}
	key := sampleInputs().Key()
	v, warn := s.Load(key)
	require.NoError(t, warn)
	require.Nil(t, v, "nothing remembered yet")
	at := time.Date(2026, 12, 2, 7, 50, 1, 0, time.UTC)
	require.NoError(t, s.Save(key, json.RawMessage(`{"annotation":"x"}`), at))
	v, warn = s.Load(key)
	require.NoError(t, warn)
	require.NotNil(t, v)
	require.Equal(t, at, v.At.UTC())
	require.JSONEq(t, `{"annotation":"x"}`, string(v.Data))
	require.Equal(t, key[:12], v.Short())
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "one file, no temporary file left")

	require.NoError(t, Clear(dir))
	v, warn = s.Load(key)
	require.NoError(t, warn)
	require.Nil(t, v, "cleared")
	require.NoError(t, Clear(dir), "an absent folder is already clear")
	require.NoError(t, Store{}.Save(key, json.RawMessage(`{}`), at), "a store with no folder keeps nothing")
}

// A corrupt, foreign, old or oversized entry is ignored with a warning,
// never trusted.
func TestUntrustedEntriesAreIgnored(t *testing.T) {
	key := sampleInputs().Key()
	other := Inputs{Tool: "other"}.Key()
	good := func(k string, f int) string {
		data, err := json.Marshal(Verdict{Format: f, Key: k, At: time.Now(), Data: json.RawMessage(`{}`)})
		require.NoError(t, err)
		return string(data)
	}
	head := `{"format":` + strconv.Itoa(format) + `,`
	cases := map[string]struct{ content, warning string }{
		"truncated":        {good(key, format)[:20], "not valid JSON"},
		"garbage":          {"\x00\x01binary", "remembered verdict"},
		"another key":      {good(other, format), "not of its name"},
		"another format":   {good(key, format+1), "of format"},
		"no data":          {head + `"key":"` + key + `","at":"2026-12-02T07:50:01Z"}`, "lacks its time or its data"},
		"over the bound":   {head + `"key":"` + key + `","data":"` + strings.Repeat("x", maxEntry) + `"}`, "over the limit"},
		"an empty object":  {`{}`, "of format"},
		"a JSON array":     {`[]`, "not valid JSON"},
		"no time, no data": {head + `"key":"` + key + `"}`, "lacks its time or its data"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, key+".json"), []byte(c.content), 0o644))
			v, warn := Store{Dir: dir}.Load(key)
			require.Nil(t, v)
			require.ErrorContains(t, warn, c.warning)
			require.ErrorContains(t, warn, "ignoring")
		})
	}
	t.Run("a folder in its place", func(t *testing.T) {
		dir := t.TempDir()
		require.NoError(t, os.Mkdir(filepath.Join(dir, key+".json"), 0o755))
		v, warn := Store{Dir: dir}.Load(key)
		require.Nil(t, v)
		require.ErrorContains(t, warn, "is a folder")
	})
	t.Run("a name that is not a key", func(t *testing.T) {
		v, warn := Store{Dir: t.TempDir()}.Load("../../etc/passwd")
		require.Nil(t, v)
		require.NoError(t, warn)
	})
}

func TestDefaultDir(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/tmp/cachehome")
	t.Setenv("HOME", "/tmp/home")
	require.Equal(t, "/tmp/cachehome/jetbake/verdicts", DefaultDir())
}
