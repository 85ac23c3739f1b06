package cli

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/plan"
)

func TestParseOverride(t *testing.T) {
	for in, want := range map[string]override{
		"jetpack6.2.args.RUSTFLAGS=-C x": {pattern: "jetpack6.2", key: "args", arg: "RUSTFLAGS", value: "-C x", hasValue: true},
		"*.args.TOKEN":                   {pattern: "*", key: "args", arg: "TOKEN"},
		"jetpack7.*.tags+={release}-rc":  {pattern: "jetpack7.*", key: "tags", value: "{release}-rc", hasValue: true, append: true},
		"*.cache-to=type=gha,mode=max":   {pattern: "*", key: "cache-to", value: "type=gha,mode=max", hasValue: true},
		"jetpack6.2.cache-from=ref":      {pattern: "jetpack6.2", key: "cache-from", value: "ref", hasValue: true},
		"jetpack5.1.no-cache=true":       {pattern: "jetpack5.1", key: "no-cache", value: "true", hasValue: true},
	} {
		got, err := parseOverride(in)
		require.NoError(t, err, in)
		want.flag = in
		require.Equal(t, want, got, in)
	}
	for in, want := range map[string]string{
		"jetpack6.2.platform=linux/amd64": "the key is RELEASE.args.NAME, RELEASE.tags, RELEASE.cache-from, RELEASE.cache-to or RELEASE.no-cache",
		"tags=latest":                     "the key is RELEASE.args.NAME",
		"*.args.=x":                       "the key is RELEASE.args.NAME",
		"*.tags":                          "no value: write *.tags=VALUE",
		"*.no-cache+=true":                "no-cache takes =, not +=",
		"*.args.X+=1":                     "args takes =, not +=",
	} {
		_, err := parseOverride(in)
		require.Equal(t, ExitUsage, ExitCode(err), in)
		require.ErrorContains(t, err, `--set "`+in+`": `+want)
	}
}

func FuzzParseOverride(f *testing.F) {
	for _, seed := range []string{"jetpack6.2.args.A=b", "*.tags+=x", "a.no-cache=1", ".tags=x", "x.args.", "=", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, v string) {
		o, err := parseOverride(v)
		if err != nil {
			return
		}
		require.NotEmpty(t, o.pattern)
		require.Contains(t, append(setKeys(), "args"), o.key)
		if o.key == "args" {
			require.NotEmpty(t, o.arg)
		}
	})
}

// plan shows what --build-arg and --set change, as a build would use them.
func TestPlanWithOverrides(t *testing.T) {
	path := matrixCopy(t, nil)
	t.Setenv("JETBAKE_TEST_RUSTFLAGS", "-C target-cpu=cortex-a78ae")
	r := run(t, "plan", "-f", path, "--format", "json",
		"--build-arg", "PROFILE=release", "--build-arg", "JETBAKE_TEST_RUSTFLAGS", "--build-arg", "JETBAKE_TEST_UNSET",
		"--set", "jetpack7.*.args.PROFILE=debug",
		"--set", "jetpack6.2.tags={version}-{release}-rc", "--set", "jetpack6.2.tags+=candidate",
		"--set", "*.cache-to=type=s3,bucket=b,region=r,secret_access_key=hunter2",
		"--set", "jetpack5.1.no-cache=true")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.NotContains(t, r.stdout, "hunter2", "credentials never reach the output")
	var p plan.Plan
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &p))
	rel62, _ := p.Release("jetpack6.2")
	require.Equal(t, []string{p.Repository + ":1.9.3-jetpack6.2-rc", p.Repository + ":candidate"}, rel62.Tags, "= replaces the matrix's tags, += adds")
	require.Equal(t, "release", rel62.Targets[0].BuildArgs["PROFILE"])
	require.Equal(t, "-C target-cpu=cortex-a78ae", rel62.Targets[0].BuildArgs["JETBAKE_TEST_RUSTFLAGS"], "KEY alone takes the environment's value")
	require.NotContains(t, rel62.Targets[0].BuildArgs, "JETBAKE_TEST_UNSET", "an unset KEY is left out")
	require.Equal(t, "candle-cuda", rel62.Targets[0].BuildArgs["CARGO_FEATURES"], "the matrix's args stay")
	rel72, _ := p.Release("jetpack7.2")
	for _, tgt := range rel72.Targets {
		require.Equal(t, "debug", tgt.BuildArgs["PROFILE"], "--set wins over --build-arg")
	}
	require.Equal(t, []plan.Cache{{Type: "s3", Attrs: map[string]string{"bucket": "b", "region": "r", "secret_access_key": "(redacted)"}}}, rel72.CacheTo)
	rel51, _ := p.Release("jetpack5.1")
	require.NotNil(t, rel51.NoCache)
	require.True(t, *rel51.NoCache)
	require.Nil(t, rel72.NoCache)

	r = run(t, "plan", "-f", path, "--release", "jetpack6.2", "--build-arg", "PROFILE=release",
		"--set", "jetpack6.2.cache-from=ghcr.io/acme/cache", "--set", "jetpack6.2.no-cache=false")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "PROFILE=release")
	require.Contains(t, r.stdout, "cache from:   type=registry,ref=ghcr.io/acme/cache")
	require.Contains(t, r.stdout, "no cache:     false")
}

// Bad overrides are usage errors naming the flag, the value and the fix.
func TestOverrideErrors(t *testing.T) {
	path := matrixCopy(t, nil)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--build-arg", "CARGO_FEATURES=candle-cuda"}, `--build-arg "CARGO_FEATURES=candle-cuda": release jetpack5.1, SM 7.2: cannot be compiled with cargo feature candle-cuda: ` +
			"its flash-attention v2 kernels need sm_80 or newer; SM 7.2 needs candle-cuda-volta"},
		{[]string{"--build-arg", "CUDA_COMPUTE_CAP=87"}, `--build-arg "CUDA_COMPUTE_CAP=87": CUDA_COMPUTE_CAP: jetbake sets it for every SM target: list the SMs in the release's targets instead`},
		{[]string{"--build-arg", "=x"}, `--build-arg "=x": no name`},
		{[]string{"--set", "jetpack9.*.tags=x"}, `--set "jetpack9.*.tags=x": no release matches "jetpack9.*": the plan has jetpack5.1,`},
		{[]string{"--set", "*.tags=latest"}, "would name both jetpack5.1 and jetpack6.1: give each release tags of its own, e.g. with a placeholder such as {release}"},
		{[]string{"--set", "jetpack6.2.tags=ghcr.io/acme/x:1"}, `which is not a valid tag: use letters, digits, '.', '_' and '-', at most 128 (a tag, not a reference`},
		{[]string{"--set", "jetpack6.2.tags={nope}"}, "unknown placeholder {nope}"},
		{[]string{"--set", "jetpack6.2.no-cache=maybe"}, `--set "jetpack6.2.no-cache=maybe": no-cache is true or false`},
		{[]string{"--set", "jetpack6.2.cache-to=type=local"}, `--set "jetpack6.2.cache-to=type=local": type=local needs dest=DIR`},
		{[]string{"--set", "jetpack6.2.args.BUILD_BASE=x"}, "BUILD_BASE: jetbake sets it from the release's build_base and runtime_base, with --mirror and the lock applied: change the matrix instead"},
		{[]string{"--build-arg", "SOURCE_DATE_EPOCH=1"}, `--build-arg "SOURCE_DATE_EPOCH=1": SOURCE_DATE_EPOCH: jetbake sets it from the commit's time: use --source-date-epoch instead`},
	} {
		for _, base := range [][]string{{"plan", "-f", path}, {"build", "-f", path, "--buildkitd", "/nonexistent/buildkitd"}} {
			r := run(t, append(base, tt.args...)...)
			require.Equal(t, ExitUsage, r.code, "%v %v: %s", base, tt.args, r.stderr)
			require.Contains(t, r.stderr, tt.want, "%v %v", base, tt.args)
			require.NotContains(t, r.stderr, "/nonexistent/buildkitd", "found before a daemon is started")
		}
	}
	// Only the selected releases get --build-arg: jetpack5.1's SM 7.2 is not built.
	r := run(t, "plan", "-f", path, "--release", "jetpack6.2", "--build-arg", "CARGO_FEATURES=candle-cuda")
	require.Equal(t, ExitOK, r.code, r.stderr)
}

// `build --list releases` lists the releases, as bake --list targets, and
// builds nothing.
func TestBuildList(t *testing.T) {
	path := matrixCopy(t, nil)
	r := run(t, "build", "-f", path, "--list", "releases", "--format", "json", "--buildkitd", "/nonexistent/buildkitd")
	require.Equal(t, ExitOK, r.code, r.stderr)
	var got []listedRelease
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got), r.stdout)
	require.Len(t, got, 5)
	require.Equal(t, listedRelease{Name: "jetpack7.2", Description: "JetPack 7.2 (L4T 39.2.0, CUDA 13.2, Ubuntu 24.04), SM 8.7 11.0, evaluate-later"}, got[4])
	require.Empty(t, r.stderr)

	r = run(t, "build", "-f", path, "--list", "type=targets,format=json")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))

	r = run(t, "build", "-f", path, "--list", "releases")
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Regexp(t, `^RELEASE\s+DESCRIPTION\njetpack5\.1\s+JetPack 5\.1\.2 \(L4T 35\.4\.1`, r.stdout)

	r = run(t, "build", "-f", path, "--list", "variables", "--format", "json")
	require.Equal(t, ExitUsage, r.code)
	var je jsonError
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &je))
	require.Contains(t, je.Error, "--list \"variables\": jetbake lists releases")
}
