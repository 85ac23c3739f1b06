package e2e

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// testNVIDIARuntime runs the built images through NVIDIA's real container
// runtime (csv mode, and cdi mode once) on every host line: the right binary
// with its arguments unchanged, --explain naming the CSV-mounted libcuda on
// the fast path and the driver path, every refusal sentence, the runtime's
// own requirement check, a run without the runtime and a broken driver.
// images maps each release of NVReleases to its image in engine d.
func testNVIDIARuntime(t *testing.T, d *Dockerd, nv *NVBed, images map[string]string) {
	ctx := t.Context()
	require.NoError(t, nv.GenerateCDI(ctx, nv.Hosts["orin-jp6"]))
	checks := NVChecks(nv, images)
	outcomes := RunNVChecks(ctx, d, nv, images, checks)
	require.Len(t, outcomes, len(checks))
	perHost := map[string]map[string]bool{}
	for _, o := range outcomes {
		require.Truef(t, o.OK(), "docker run %s on %s (%s): %s\nstdout: %s\nstderr: %s", o.Release, o.Host,
			o.RuntimeName(), o.Summary(), o.Result.Stdout, o.Result.Stderr)
		t.Logf("%-14s %-24s %-13s %s", o.Release, o.Host, o.RuntimeName(), o.Summary())
		if perHost[o.Host] == nil {
			perHost[o.Host] = map[string]bool{}
		}
		perHost[o.Host][kindOf(o.NVCheck)] = true
	}
	for _, l := range HostLines() {
		for _, kind := range []string{"run", "fast path", "driver path", "requirement check"} {
			require.True(t, perHost[l.Host][kind], "%s has no %s run", l.Host, kind)
		}
	}
	// The runtime mounted the driver at each line's own path.
	libs := map[string]bool{}
	for _, o := range outcomes {
		if o.Seen != nil {
			libs[o.Seen.Libcuda] = true
		}
	}
	require.Len(t, libs, 4, "R35 tegra/, R36 and R38 nvidia/, R39 nvgpu/ and openrm/: %v", libs)
}

// kindOf names what a check checks, for the coverage of the host lines.
func kindOf(c NVCheck) string {
	switch {
	case c.WantPath == "fast":
		return "fast path"
	case c.WantPath == "full":
		return "driver path"
	case len(c.Env) > 0 && strings.HasPrefix(c.Env[0], "NVIDIA_DISABLE_REQUIRE="):
		return "requirement check"
	case c.WantArch != "":
		return "run"
	}
	return "refusal"
}
