package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/evidence"
	"github.com/jetbake/jetbake/builder/internal/nvtoolkit"
	"github.com/jetbake/jetbake/builder/internal/standin/tei"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
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

// serveImages are the images of the serving runs through Docker.
type serveImages struct {
	// serving is the JetPack 6.2 image, digest its digest.
	serving, digest string
	// refusing is the same release built without jetson-compute-cap.sh.
	refusing string
}

// testServeThroughNVIDIA runs the probe with its serving check in the
// JetPack 6.2 image as `docker run --runtime nvidia -v MODEL:/model:ro
// --entrypoint /usr/local/bin/jetbake-probe`
// on the Orin of the NVIDIA runtime's bed: the router serves on the
// container's own loopback and the evidence reaches level serve; the
// compute-cap refusal (the image without jetson-compute-cap.sh), a model
// folder without config.json, a slow load and NaN in the vectors fail the
// serve check at their step.
func testServeThroughNVIDIA(t *testing.T, d *Dockerd, nv *NVBed, images serveImages, work string) {
	ctx := t.Context()
	model, noConfig := filepath.Join(work, "docker-model"), filepath.Join(work, "docker-model-no-config")
	require.NoError(t, WriteModel(model))
	require.NoError(t, WriteModel(noConfig, "config.json"))
	host := nv.Hosts["orin-jp6"]
	require.NoError(t, nv.Use(host, nvtoolkit.ModeCSV))
	tests := []struct {
		name, folder, load string
		refusing           bool
		env                []string
		step, stderr       string
	}{
		{name: "the router serves the model", folder: model, load: "2m"},
		{name: "the compute-cap refusal, before it listens", folder: model, load: "2m", refusing: true, step: evidencespec.ServeStepStart,
			stderr: "Could not start backend: " + RefusalOnOrin},
		{name: "a model folder without config.json", folder: noConfig, load: "2m", step: evidencespec.ServeStepStart,
			stderr: "Error: `config.json` not found"},
		{name: "a load slower than the bound", folder: model, load: "3s", env: []string{tei.KnobLoadMillis + "=60000"}, step: evidencespec.ServeStepHealth},
		{name: "NaN in the vectors", folder: model, load: "2m", env: []string{tei.KnobEmbed + "=nan"}, step: evidencespec.ServeStepFinite},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := NVCheck{Check: Check{Release: "jetpack6.2", Host: "orin-jp6", Args: ServeArgs(tt.load)},
				Env: tt.env, Volumes: []string{tt.folder + ":/model:ro"}, Entrypoint: ProbeEntrypoint}
			image := images.serving
			if tt.refusing {
				image = images.refusing
			} else {
				c.Env = append([]string{"JETBAKE_IMAGE_DIGEST=" + images.digest}, c.Env...)
			}
			res, err := d.Docker(ctx, NVRunArgs(image, host, nv.Fakes["orin-jp6"], c)...)
			require.NoError(t, err)
			ev, err := evidence.Parse([]byte(res.Stdout))
			require.NoError(t, err, "stdout: %s\nstderr: %s", res.Stdout, res.Stderr)
			require.NotNil(t, ev.Result.Serve, res.Stdout)
			require.Equal(t, tt.step, ev.Result.Serve.Step, "%s\nstderr: %s", checkNamed(ev, evidencespec.CheckServe).Detail, res.Stderr)
			require.Contains(t, res.Stderr, tt.stderr)
			if tt.step != "" {
				require.Equal(t, 1, res.ExitCode)
				return
			}
			requireServed(t, ev, res)
			require.Equal(t, images.digest, ev.Image.Digest)
			t.Logf("the evidence of the passing serve run (docker run --runtime nvidia, orin-jp6):\n%s", res.Stdout)
		})
	}
}
