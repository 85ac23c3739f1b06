package e2e

import (
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/runimage"
)

func TestOutcomeOK(t *testing.T) {
	passCheck := Check{Release: "jetpack6.2", Host: "orin-jp6", Args: []string{"--port", "8080"}, WantArch: "sm_87"}
	failCheck := Check{Release: "jetpack6.2", Host: "none", WantFailure: "--runtime nvidia"}
	appCheck := AppChecks("r/app")[0]
	gate := "cuda available: True\ndevice: Orin\nop: 24.0 finite True\n"
	ran := "router built for sm_87 (SM 87), compute cap: runtime 87 accepted by compile time 87\nlistening on port 80\nargs: --port 8080\n"
	tests := []struct {
		name    string
		outcome Outcome
		want    bool
	}{
		{name: "right binary with args", want: true,
			outcome: Outcome{Check: passCheck, Result: runimage.Result{Stdout: ran}}},
		{name: "no compute-cap gate passed",
			outcome: Outcome{Check: passCheck, Result: runimage.Result{Stdout: "router built for sm_87 (SM 87)\nargs: --port 8080\n"}}},
		{name: "wanted output", want: true,
			outcome: Outcome{Check: Check{WantArch: "sm_87", WantOutput: []string{"listening on port 80"}}, Result: runimage.Result{Stdout: ran}}},
		{name: "wanted output missing",
			outcome: Outcome{Check: Check{WantArch: "sm_87", WantOutput: []string{"listening on port 3000"}}, Result: runimage.Result{Stdout: ran}}},
		{name: "wrong binary",
			outcome: Outcome{Check: passCheck, Result: runimage.Result{Stdout: "router built for sm_110 (SM 110)\nargs: --port 8080\n"}}},
		{name: "arch is a prefix of another",
			outcome: Outcome{Check: Check{WantArch: "sm_8"}, Result: runimage.Result{Stdout: ran}}},
		{name: "argument lost",
			outcome: Outcome{Check: passCheck, Result: runimage.Result{Stdout: "router built for sm_87 (SM 87)\nargs: --port\n"}}},
		{name: "non-zero exit",
			outcome: Outcome{Check: passCheck, Result: runimage.Result{Stdout: ran, ExitCode: 1}}},
		{name: "could not run",
			outcome: Outcome{Check: passCheck, Result: runimage.Result{Stdout: ran}, Err: errors.New("runc failed")}},
		{name: "expected failure", want: true,
			outcome: Outcome{Check: failCheck, Result: runimage.Result{ExitCode: 1, Stderr: "jetbake: start the container with --runtime nvidia\n"}}},
		{name: "failure with another sentence",
			outcome: Outcome{Check: failCheck, Result: runimage.Result{ExitCode: 1, Stderr: "jetbake: no binary for SM 8.7\n"}}},
		{name: "expected failure but ran",
			outcome: Outcome{Check: failCheck, Result: runimage.Result{Stdout: ran, Stderr: "--runtime nvidia"}}},
		{name: "SIGILL", want: true,
			outcome: Outcome{Check: Check{WantExit: ExitSIGILL}, Result: runimage.Result{ExitCode: 132}}},
		{name: "another exit status",
			outcome: Outcome{Check: Check{WantExit: ExitSIGILL}, Result: runimage.Result{ExitCode: 1, Stderr: "Error"}}},
		{name: "app's gate", want: true,
			outcome: Outcome{Check: appCheck, Result: runimage.Result{Stdout: gate}}},
		{name: "app's gate without CUDA",
			outcome: Outcome{Check: appCheck, Result: runimage.Result{Stdout: "cuda available: False\n"}}},
		{name: "app's gate, non-zero exit",
			outcome: Outcome{Check: appCheck, Result: runimage.Result{Stdout: gate, ExitCode: 1}}},
		{name: "expected failure, run error",
			outcome: Outcome{Check: failCheck, Result: runimage.Result{ExitCode: 1, Stderr: "--runtime nvidia"}, Err: errors.New("x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.outcome.OK())
		})
	}
}

func TestOutcomeSummary(t *testing.T) {
	tests := []struct {
		name    string
		outcome Outcome
		want    string
	}{
		{name: "ran", outcome: Outcome{Result: runimage.Result{Stdout: "\nrouter built for sm_87 (SM 87)\nargs: x\n"}},
			want: "router built for sm_87 (SM 87)"},
		{name: "failed", outcome: Outcome{Result: runimage.Result{ExitCode: 3, Stderr: "  no binary \n"}},
			want: "exit 3: no binary"},
		{name: "error", outcome: Outcome{Err: errors.New("runc run: boom")}, want: "error: runc run: boom"},
		{name: "SIGILL", outcome: Outcome{Result: runimage.Result{ExitCode: 132}}, want: "exit 132: killed by SIGILL (illegal instruction)"},
		{name: "empty", outcome: Outcome{}, want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.outcome.Summary())
		})
	}
}

func TestDefaultChecks(t *testing.T) {
	needRoot(t)
	checks := DefaultChecks()
	var releases []string
	for _, c := range checks {
		if !slices.Contains(releases, c.Release) {
			releases = append(releases, c.Release)
		}
	}
	require.Equal(t, []string{"jetpack6.2", "jetpack7.2"}, releases)

	hostsByName, err := WriteHosts(t.Context(), t.TempDir(), t.TempDir())
	require.NoError(t, err)
	root, err := FindRepoRoot()
	require.NoError(t, err)
	shipped := readJSON(t, filepath.Join(root, "matrix.json"))
	var shippedNames []string
	for _, r := range shipped["releases"].([]any) {
		shippedNames = append(shippedNames, r.(map[string]any)["name"].(string))
	}

	all := DemoChecks()
	require.Equal(t, checks, all[:len(checks)], "the demo runs the default checks first")
	released := map[string]bool{}
	for _, c := range append(checks, ReleaseChecks()...) {
		if c.WantArch != "" {
			released[c.Release] = true
		}
	}
	require.Len(t, released, len(shippedNames), "every shipped release routes on some fake host: %v", released)
	for _, c := range all {
		require.Contains(t, hostsByName, c.Host, "check %+v", c)
		require.Contains(t, append(shippedNames, NoComputeCapRelease, NativeCPURelease, NoFlashGateRelease), c.Release, "check %+v", c)
		wants := 0
		for _, w := range []bool{c.WantArch != "", c.WantFailure != "" || c.WantExit != 0, c.WantServe} {
			if w {
				wants++
			}
		}
		require.Equal(t, 1, wants, "check %+v wants exactly one of an arch, a failure or a served model", c)
	}

	var wantArchs []string
	for _, c := range checks {
		if c.WantArch != "" {
			wantArchs = append(wantArchs, c.Host+"="+c.WantArch)
		}
	}
	require.Equal(t, []string{"orin-jp6=sm_87", "orin-jp6=sm_87", "orin-jp7.2=sm_87", "thor-jp7.2=sm_110", "orin-jp6.2.1=sm_87"}, wantArchs)
}

func TestRunChecksMissingParts(t *testing.T) {
	checks := []Check{
		{Release: "jetpack9", Host: "orin-jp6", WantArch: "sm_87"},
		{Release: "jetpack6.2", Host: "xavier", WantArch: "sm_72"},
	}
	images := map[string]Unpacked{"jetpack6.2": {Rootfs: "/nowhere"}}
	out := RunChecks(t.Context(), nil, images, map[string]runimage.Host{"orin-jp6": {Name: "orin-jp6"}}, checks)
	require.Len(t, out, 2)
	require.EqualError(t, out[0].Err, "no image for release jetpack9")
	require.EqualError(t, out[1].Err, "no fake host xavier")
	require.Equal(t, checks[0], out[0].Check)
	require.False(t, out[0].OK())
}
