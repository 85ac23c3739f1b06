package cli

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
)

// Where buildctl's parsers and buildx differ, jetbake does as buildx: each
// case below is one difference (see givenByValue).
func TestParseCacheAsBuildx(t *testing.T) {
	t.Setenv("ACTIONS_RUNTIME_TOKEN", "runner-token")
	t.Setenv("ACTIONS_CACHE_URL", "http://127.0.0.1:1/cache/")
	t.Setenv("ACTIONS_RESULTS_URL", "http://127.0.0.1:1/results/")
	t.Setenv("ACTIONS_CACHE_SERVICE_V2", "true")
	for _, tt := range []struct {
		flag, value string
		want        plan.Cache
	}{
		// buildctl adds mode=min to an export; buildx sends none (the daemon's default is min).
		{"--cache-to", "type=registry,ref=r/c", plan.Cache{Type: "registry", Attrs: map[string]string{"ref": "r/c"}}},
		{"--cache-to", "type=registry,ref=r/c,mode=max", plan.Cache{Type: "registry", Attrs: map[string]string{"ref": "r/c", "mode": "max"}}},
		// buildctl fills a gha cache's token and urls from the environment while parsing;
		// jetbake fills them at build time (cacheconfig), and the token stays out of the plan.
		{"--cache-to", "type=gha,scope=s", plan.Cache{Type: "gha", Attrs: map[string]string{"scope": "s"}}},
		{"--cache-from", "type=gha", plan.Cache{Type: "gha", Attrs: map[string]string{}}},
		{"--cache-from", "type=gha,token=t,url=u,url_v2=v", plan.Cache{Type: "gha", Attrs: map[string]string{"token": "t", "url": "u", "url_v2": "v"}}},
		// Keys are case-insensitive; buildctl looks for a literal "type=" and would take this as one ref.
		{"--cache-from", "Type=local,Src=c", plan.Cache{Type: "local", Attrs: map[string]string{"src": "c"}}},
		// CSV quoting, as both: a value that holds a comma.
		{"--cache-to", `type=local,"dest=a,b"`, plan.Cache{Type: "local", Attrs: map[string]string{"dest": "a,b"}}},
		// An empty value stays given.
		{"--cache-to", "type=gha,url=", plan.Cache{Type: "gha", Attrs: map[string]string{"url": ""}}},
	} {
		got, err := parseCache(tt.flag, tt.value)
		require.NoError(t, err, tt.value)
		require.Equal(t, []plan.Cache{tt.want}, got, tt.value)
	}

	// Outside a workflow buildctl refuses type=gha ("requires url parameter");
	// buildx and jetbake leave it out at build time with a warning.
	for _, v := range []string{"ACTIONS_RUNTIME_TOKEN", "ACTIONS_CACHE_URL", "ACTIONS_RESULTS_URL", "ACTIONS_CACHE_SERVICE_V2"} {
		t.Setenv(v, "")
	}
	got, err := parseCaches("--cache-to", []string{"type=gha,mode=max"})
	require.NoError(t, err)
	require.Equal(t, []plan.Cache{{Type: "gha", Attrs: map[string]string{"mode": "max"}}}, got)

	// buildx's ref-only form is a CSV list of refs; buildctl takes the whole value as one ref.
	got, err = parseCaches("--cache-from", []string{"r/a:1,r/b:2"})
	require.NoError(t, err)
	require.Equal(t, []plan.Cache{
		{Type: "registry", Attrs: map[string]string{"ref": "r/a:1"}},
		{Type: "registry", Attrs: map[string]string{"ref": "r/b:2"}},
	}, got)
}
