package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// Values every probe test shares.
const (
	testDigest = "sha256:c2efadaaded60d602d1449d0432fe96f50982be593ee63a57a6d330dc8181799"
	// goldenPass is the evidence of a passing probe on an Orin Nano Super;
	// builder/evidence reads the same file, which keeps the two in step.
	goldenPass = "orin-nano-jp6-pass.json"
)

// update rewrites the golden evidence, entrypoint/testdata/probe/orin-nano-jp6-pass.json:
// go test -run TestProbeOrinPassMatchesGolden -update.
var update = flag.Bool("update", false, "rewrite the golden evidence "+goldenPass)

// probeTime is the clock of the probe tests.
func probeTime() time.Time { return time.Date(2026, 11, 20, 9, 30, 0, 0, time.UTC) }

// probeRun is one in-process probe run.
type probeRun struct {
	code           int
	stdout, stderr string
	ev             evidencespec.Evidence
}

// runProbeIn runs the probe in-process with args on root as arch, with the
// real jetbake-cudaprobe, and decodes the evidence strictly.
func runProbeIn(t *testing.T, root, arch string, args []string, extra ...string) probeRun {
	t.Helper()
	b := eptest.Build(t)
	env := eptest.BaseEnv(root, append([]string{"JETBAKE_CUDAPROBE=" + b.CUDAProbe}, extra...)...)
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), args, env, &stdout, &stderr, probeSetup{now: probeTime(), arch: arch})
	r := probeRun{code: code, stdout: stdout.String(), stderr: stderr.String()}
	if r.stdout != "" {
		dec := json.NewDecoder(strings.NewReader(r.stdout))
		dec.DisallowUnknownFields()
		require.NoError(t, dec.Decode(&r.ev), r.stdout)
		requireSafeDetails(t, &r.ev)
	}
	return r
}

// orinRoot is the Orin Nano Super sysroot with the fake driver where
// JetPack 6 mounts it, and the JetPack 6.2 image as jetbake build writes it
// (with the revision).
func orinRoot(t *testing.T) string {
	t.Helper()
	root := eptest.NewSysroot(t, "orin-nano-jp6", "jetpack6-built")
	eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu/nvidia")
	return root
}

// requireSafeDetails checks the promise builder/evidence relies on: every
// check is one the evidence spec names, and its detail is one of the
// check's phrases filled with parsed values (evidencespec.ValidDetail),
// holding only letters, digits, spaces and . , : ; ( ) _ ' + = -.
func requireSafeDetails(t *testing.T, ev *evidencespec.Evidence) {
	t.Helper()
	for _, c := range ev.Result.Checks {
		require.True(t, evidencespec.ValidDetail(c.Name, c.Detail), "check %s: detail %q is not one of its phrases", c.Name, c.Detail)
		for _, r := range c.Detail {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .,:;()_'+=-", r)
			require.True(t, ok, "check %s detail %q has %q", c.Name, c.Detail, r)
		}
	}
}

// statuses maps each check's name to its status.
func statuses(ev *evidencespec.Evidence) map[string]evidencespec.Status {
	out := map[string]evidencespec.Status{}
	for _, c := range ev.Result.Checks {
		out[c.Name] = c.Status
	}
	return out
}

func TestProbeOrinPassMatchesGolden(t *testing.T) {
	r := runProbeIn(t, orinRoot(t), "arm64", []string{"--smoke"}, "JETBAKE_IMAGE_DIGEST="+testDigest)
	require.Equal(t, 0, r.code, r.stderr)
	require.True(t, r.ev.Result.Pass)
	if *update {
		require.NoError(t, os.WriteFile(eptest.Testdata("probe", goldenPass), []byte(r.stdout), 0o644))
	}
	want, err := os.ReadFile(eptest.Testdata("probe", goldenPass))
	require.NoError(t, err)
	require.Equal(t, string(want), r.stdout)
	// The router's own output goes to stderr, never into the evidence.
	require.Contains(t, r.stderr, "router for sm_87 pid")
	require.True(t, strings.HasSuffix(r.stderr, "jetbake-probe: pass: all 11 checks passed\n"), r.stderr)
}

func TestProbeNotAPass(t *testing.T) {
	digest := "JETBAKE_IMAGE_DIGEST=" + testDigest
	tests := []struct {
		name, host, image, arch string
		args, env               []string
		noDriver                bool
		want                    map[string]evidencespec.Status
		wantDetail              string
	}{
		{name: "no --smoke skips the smoke run", host: "orin-nano-jp6", image: "jetpack6", env: []string{digest},
			want: map[string]evidencespec.Status{"smoke": evidencespec.Skipped}, wantDetail: "not run: add --smoke to run the chosen binary"},
		{name: "no digest known", host: "orin-nano-jp6", image: "jetpack6", args: []string{"--smoke"},
			want:       map[string]evidencespec.Status{"image-digest": evidencespec.Skipped, "smoke": evidencespec.Passed},
			wantDetail: "the image's digest is unknown: set JETBAKE_IMAGE_DIGEST to the digest the image was pulled by"},
		{name: "digest that is not a digest", host: "orin-nano-jp6", image: "jetpack6", args: []string{"--smoke"},
			env: []string{"JETBAKE_IMAGE_DIGEST=latest"}, want: map[string]evidencespec.Status{"image-digest": evidencespec.Failed}},
		{name: "generic arm64 build host proves nothing", host: "orin-nano-jp6", image: "jetpack6", arch: "amd64",
			args: []string{"--smoke"}, env: []string{digest}, want: map[string]evidencespec.Status{"architecture": evidencespec.Failed},
			wantDetail: "amd64 is not arm64: no Jetson runs it"},
		{name: "JetPack 6 image on a JetPack 5 host, override ignored", host: "agx-orin-jp5", image: "jetpack6",
			args: []string{"--smoke"}, env: []string{digest, "JETBAKE_SKIP_L4T_CHECK=1"},
			want:       map[string]evidencespec.Status{"l4t-matches-image": evidencespec.Failed, "binary-chosen": evidencespec.Failed, "smoke": evidencespec.Skipped},
			wantDetail: "the host has L4T R35.4.1 (JetPack 5.1.2) but the image needs L4T R36.4 or a later R36 release"},
		{name: "no driver: device tree alone is not enough", host: "orin-nano-jp6", image: "jetpack6", noDriver: true,
			args: []string{"--smoke"}, env: []string{digest},
			want: map[string]evidencespec.Status{"cuda-driver": evidencespec.Failed, "gpu-matches-soc": evidencespec.Skipped, "binary-chosen": evidencespec.Passed}},
		{name: "driver reports another GPU than the SoC's", host: "orin-nano-jp6", image: "jetpack6",
			args: []string{"--smoke"}, env: []string{digest, "FAKE_CUDA_MAJOR=7", "FAKE_CUDA_MINOR=2"},
			want:       map[string]evidencespec.Status{"gpu-matches-soc": evidencespec.Failed, "binary-chosen": evidencespec.Failed},
			wantDetail: "the driver reports SM 7.2 but tegra234 has SM 8.7"},
		{name: "compute capability override is ignored", host: "orin-nano-jp6", image: "jetpack6",
			args: []string{"--smoke"}, env: []string{"JETBAKE_COMPUTE_CAP=11.0"},
			want: map[string]evidencespec.Status{"binary-chosen": evidencespec.Passed, "image-digest": evidencespec.Skipped}},
		{name: "desktop GPU", host: "desktop-rtx3090", image: "desktop", args: []string{"--smoke"}, env: []string{digest},
			want: map[string]evidencespec.Status{"jetson-soc": evidencespec.Failed, "device-class": evidencespec.Skipped, "l4t-release": evidencespec.Failed}},
		{name: "no runtime", host: "no-runtime", image: "jetpack6", noDriver: true, env: []string{digest},
			want: map[string]evidencespec.Status{"cuda-driver": evidencespec.Failed, "binary-chosen": evidencespec.Failed, "l4t-release": evidencespec.Failed}},
		{name: "no image description", host: "orin-nano-jp6", args: []string{"--smoke"}, env: []string{digest},
			want: map[string]evidencespec.Status{"image-description": evidencespec.Failed, "binary-chosen": evidencespec.Skipped, "smoke": evidencespec.Skipped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := eptest.NewSysroot(t, tt.host, tt.image)
			if !tt.noDriver {
				eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu/nvidia")
			}
			arch := tt.arch
			if arch == "" {
				arch = "arm64"
			}
			r := runProbeIn(t, root, arch, tt.args, tt.env...)
			require.Equal(t, 1, r.code, r.stderr)
			require.False(t, r.ev.Result.Pass)
			got := statuses(&r.ev)
			for name, status := range tt.want {
				require.Equal(t, status, got[name], "check %s in %+v", name, r.ev.Result.Checks)
			}
			if tt.wantDetail != "" {
				require.Contains(t, r.stdout, `"detail": "`+tt.wantDetail+`"`)
			}
			require.Contains(t, r.stderr, "jetbake-probe: not a pass: ")
		})
	}
}

func TestProbeThorReporting101(t *testing.T) {
	root := eptest.NewSysroot(t, "thor-jp7", "jetpack7.2")
	eptest.WriteFile(t, root, "/etc/nv_tegra_release", "# R39 (release), REVISION: 2.0, GCID: 1, BOARD: generic, EABI: aarch64\n", 0o644)
	eptest.InstallLibcuda(t, root, "/usr/lib/aarch64-linux-gnu")
	r := runProbeIn(t, root, "arm64", []string{"--smoke"}, "JETBAKE_IMAGE_DIGEST="+testDigest,
		"FAKE_CUDA_MAJOR=10", "FAKE_CUDA_MINOR=1", "FAKE_CUDA_DRIVER_VERSION=13020")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, evidencespec.Host{Architecture: "arm64", L4T: "39.2.0", JetPack: "7.2", DeviceClass: "Jetson AGX Thor",
		SoC: "tegra264", ComputeCapability: "10.1", CUDADriver: "13.2"}, r.ev.Host)
	require.Equal(t, &evidencespec.Binary{SM: "11.0", Name: "router-110"}, r.ev.Result.Binary)
}

func TestProbeSmokeFailure(t *testing.T) {
	root := orinRoot(t)
	eptest.WriteFile(t, root, "/usr/local/bin/router-87", "#!/bin/sh\necho broken >&2\nexit 3\n", 0o755)
	r := runProbeIn(t, root, "arm64", []string{"--smoke"}, "JETBAKE_IMAGE_DIGEST="+testDigest)
	require.Equal(t, 1, r.code)
	require.Equal(t, evidencespec.Failed, statuses(&r.ev)["smoke"])
	three := 3
	require.Equal(t, &evidencespec.Smoke{Args: []string{"--version"}, ExitCode: &three}, r.ev.Result.Smoke)
	require.Contains(t, r.stderr, "broken\n")
}

// TestProbeOutFile runs the real path through run: --out writes the file
// atomically and leaves stdout empty; on this test machine the result is
// a pass only on arm64.
func TestProbeOutFile(t *testing.T) {
	root := orinRoot(t)
	out := filepath.Join(t.TempDir(), "evidence.json")
	b := eptest.Build(t)
	var stdout, stderr bytes.Buffer
	env := eptest.BaseEnv(root, "JETBAKE_CUDAPROBE="+b.CUDAProbe, "JETBAKE_IMAGE_DIGEST="+testDigest)
	code := run(t.Context(), []string{"--out", out, "--smoke"}, env, &stdout, &stderr, probeSetup{now: time.Now(), arch: runtime.GOARCH})
	require.Empty(t, stdout.String())
	data, err := os.ReadFile(out)
	require.NoError(t, err)
	var ev evidencespec.Evidence
	require.NoError(t, json.Unmarshal(data, &ev))
	require.Equal(t, evidencespec.SchemaVersion, ev.SchemaVersion)
	require.Equal(t, ev.Result.Pass, code == 0)
	require.Equal(t, ev.Result.Pass, ev.Host.Architecture == "arm64")
	require.Contains(t, stderr.String(), "; written to "+out+"\n")
	entries, err := os.ReadDir(filepath.Dir(out))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left behind")
}

func TestProbeArguments(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		smoke    bool
		kernel   bool
		out      string
		serve    string
		download bool
		load     time.Duration
		err      string
	}{
		{name: "none"},
		{name: "smoke and out", args: []string{"--out", "e.json", "--smoke"}, smoke: true, out: "e.json"},
		{name: "out with =", args: []string{"--out=e.json"}, out: "e.json"},
		{name: "one dash", args: []string{"-kernel", "-smoke"}, smoke: true, kernel: true},
		{name: "a router flag", args: []string{"--port", "80"}, err: "flag provided but not defined: -port"},
		{name: "--out without a file", args: []string{"--smoke", "--out"}, err: "flag needs an argument: -out"},
		{name: "serve", args: []string{"--serve", "/model", "--load-timeout=90s", "--smoke"}, smoke: true, serve: "/model", load: 90 * time.Second},
		{name: "serve with = and a download", args: []string{"--serve=BAAI/bge-small-en-v1.5", "--allow-download"},
			serve: "BAAI/bge-small-en-v1.5", download: true},
		{name: "a load timeout that is no duration", args: []string{"--load-timeout", "soon"},
			err: `invalid value "soon" for flag -load-timeout: "soon" is not a duration from 1s to 1h, such as 5m or 90s`},
		{name: "a load timeout under a second", args: []string{"--load-timeout", "10ms"},
			err: `invalid value "10ms" for flag -load-timeout: "10ms" is not a duration from 1s to 1h, such as 5m or 90s`},
		{name: "an argument after the flags", args: []string{"--smoke", "x"}, err: `jetbake-probe takes flags only, not "x"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := parseArgs(tt.args, nil)
			if tt.err != "" {
				require.EqualError(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.smoke, cfg.smoke)
			require.Equal(t, tt.kernel, cfg.kernel)
			require.Equal(t, tt.out, cfg.out)
			require.Equal(t, tt.serve, cfg.serve)
			require.Equal(t, tt.download, cfg.allowDownload)
			require.Equal(t, tt.load, cfg.loadTimeout)
		})
	}
}

// TestProbeUsageError: a bad argument is one line on stderr, exit 2,
// before anything runs; a long one is quoted cut. --help is exit 0.
func TestProbeUsageError(t *testing.T) {
	root := orinRoot(t)
	long := strings.Repeat("x", 100000)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--model-id", "x"}, "jetbake-probe: flag provided but not defined: -model-id; run it as: " + usage + "\n"},
		{[]string{"--smoke", long}, `jetbake-probe: jetbake-probe takes flags only, not "` + long[:80] + `"... (100000 bytes); run it as: ` + usage + "\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), tt.args, eptest.BaseEnv(root), &stdout, &stderr, probeSetup{now: probeTime(), arch: "arm64"})
		require.Equal(t, 2, code)
		require.Empty(t, stdout.String())
		require.Equal(t, tt.want, stderr.String())
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(t.Context(), []string{"--help"}, nil, &stdout, &stderr, probeSetup{}))
	require.Contains(t, stdout.String(), "usage: "+usage+"\n")
	require.Empty(t, stderr.String())
}

// TestProbeOutErrorsNameNoTemporaryFile writes the evidence into a folder
// that does not exist and over a folder: the message names the file asked
// for, never the temporary file beside it.
func TestProbeOutErrorsNameNoTemporaryFile(t *testing.T) {
	root := orinRoot(t)
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "taken"), 0o755))
	for _, tt := range []struct {
		out, want string
		code      int
	}{
		{filepath.Join(dir, "nodir", "ev.json"), "cannot write the evidence: the folder " + filepath.Join(dir, "nodir") + " does not exist: mount one", 2},
		{filepath.Join(dir, "taken"), "cannot write the evidence: " + filepath.Join(dir, "taken") + ": ", 1},
	} {
		var stdout, stderr bytes.Buffer
		code := run(t.Context(), []string{"--out", tt.out}, eptest.BaseEnv(root), &stdout, &stderr, probeSetup{now: probeTime(), arch: "arm64"})
		require.Equal(t, tt.code, code, stderr.String())
		require.Contains(t, stderr.String(), tt.want)
		require.NotContains(t, stderr.String(), "/."+filepath.Base(tt.out), "the temporary file beside it")
	}
}
