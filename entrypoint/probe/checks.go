package main

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"path"
	"strconv"
	"time"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// smokeTimeout bounds the smoke run of the chosen binary.
const smokeTimeout = 60 * time.Second

// errSignaled reports a smoke run ended by a signal.
var errSignaled = errors.New("killed by a signal")

// The checks below write their details only as evidencespec's phrases,
// filled with parsed values (evidencespec.Fill), never a path or text read
// on the host. builder/evidence refuses any other detail.

// imageCheck says whether the image description was read.
func imageCheck(err error) evidencespec.Check {
	c := evidencespec.Check{Name: "image-description", Status: evidencespec.Passed, Detail: evidencespec.DetailImageRead}
	if err != nil {
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailImageUnusable
	}
	return c
}

// archCheck says whether the entrypoint runs as arm64, as on every Jetson.
func archCheck(arch string) evidencespec.Check {
	c := evidencespec.Check{Name: "architecture", Status: evidencespec.Passed, Detail: evidencespec.DetailArchArm64}
	if arch != "arm64" {
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailArchUnknown
		if safeToken(arch) {
			c.Detail = evidencespec.Fill(evidencespec.DetailArchOther, arch)
		}
	}
	return c
}

// socCheck says whether the device tree or soc_id names a Jetson SoC.
func socCheck(dev *device) evidencespec.Check {
	c := evidencespec.Check{Name: "jetson-soc"}
	switch {
	case dev.conflict:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailSoCConflict
	case !dev.hasSoC:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailSoCNone
	default:
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailSoC, dev.soc.Name, dev.soc.Family)
	}
	return c
}

// deviceClassCheck says whether the module is in the allow-list.
func deviceClassCheck(dev *device) evidencespec.Check {
	c := evidencespec.Check{Name: "device-class"}
	switch {
	case !dev.hasSoC:
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailClassNoSoC
	case !dev.known:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailClassUnknown
	case dev.fromSoC:
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailClassFromSoC, dev.class)
	default:
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailClass, dev.class)
	}
	return c
}

// l4tCheck says whether the host's Jetson Linux release was read.
func l4tCheck(t *computecap.Table, h *detect.Host) evidencespec.Check {
	c := evidencespec.Check{Name: "l4t-release"}
	switch {
	case h.HasL4T:
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailL4T, h.L4T.String())
		if jp := t.JetPackName(h.L4T); jp != "" {
			c.Detail = evidencespec.Fill(evidencespec.DetailL4TJetPack, h.L4T.String(), jp)
		}
	case h.TegraRelease:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailL4TUnreadable
	default:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailL4TMissing
	}
	return c
}

// l4tMatchCheck says whether the host meets the image's host rule: its
// L4T release (JetPack 6 and earlier) or its driver's CUDA version (JetPack
// 7 and later). The check keeps its name for evidence readers.
func l4tMatchCheck(img *detect.ParsedDescription, h *detect.Host, d *detect.Decision) evidencespec.Check {
	c := evidencespec.Check{Name: "l4t-matches-image"}
	v := d.Verdict
	switch {
	case img == nil || img.L4TMajor == 0:
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailRuleNoL4T
	case v.Rule == "" || v.Unknown:
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailRuleUnknown
	case !v.OK:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.Fill(evidencespec.DetailRuleRefused, v.Host, v.Need)
	case v.CompatDir != "":
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailRuleCompat, v.Host, v.Need)
	default:
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailRuleMet, v.Host, v.Need)
	}
	return c
}

// driverCheck says whether the CUDA driver answered.
func driverCheck(h *detect.Host) evidencespec.Check {
	c := evidencespec.Check{Name: "cuda-driver", Status: evidencespec.Failed}
	switch h.DriverState {
	case detect.DriverVersionOnly:
		c.Status = evidencespec.Passed
		c.Detail = evidencespec.Fill(evidencespec.DetailDriverVersion, h.Driver.String())
	case detect.DriverAnswered:
		c.Status = evidencespec.Passed
		c.Detail = evidencespec.Fill(evidencespec.DetailDriverAnswered, h.GPU.String(), h.Driver.String())
	case detect.DriverNoLibrary:
		c.Detail = evidencespec.DetailDriverNoLibrary
	case detect.DriverNoProbe:
		c.Detail = evidencespec.DetailDriverNoProbe
	case detect.DriverFailed:
		c.Detail = driverFailure(h)
	default:
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailDriverNotAsked
	}
	return c
}

// driverFailure says why the driver gave no answer: it sees no GPU, with
// or without device nodes, or another error that --explain names.
func driverFailure(h *detect.Host) string {
	switch {
	case h.DriverSeesNoGPU() && len(h.Nodes) == 0:
		return evidencespec.DetailDriverNoDevice
	case h.DriverSeesNoGPU():
		return evidencespec.DetailDriverNoUse
	}
	return evidencespec.DetailDriverFailed
}

// gpuMatchCheck says whether the driver's GPU is the SoC's.
func gpuMatchCheck(h *detect.Host, dev *device) evidencespec.Check {
	c := evidencespec.Check{Name: "gpu-matches-soc"}
	switch {
	case h.From != detect.SourceDriver || !dev.hasSoC:
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailGPUNeeds
	case h.GPU.Canonical() != dev.soc.Capability.Canonical():
		c.Status, c.Detail = evidencespec.Failed, evidencespec.Fill(evidencespec.DetailGPUDiffers, h.GPU.String(), dev.soc.Name, dev.soc.Capability.String())
	default:
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailGPUMatches, h.GPU.String(), dev.soc.Name)
	}
	return c
}

// binaryCheck says whether a binary was chosen, or why not.
func binaryCheck(img *detect.ParsedDescription, h *detect.Host, d *detect.Decision) evidencespec.Check {
	c := evidencespec.Check{Name: "binary-chosen", Status: evidencespec.Failed}
	switch {
	case img == nil:
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailBinaryNoImage
	case d.Choice != "":
		c.Status = evidencespec.Passed
		c.Detail = evidencespec.Fill(evidencespec.DetailBinaryChosen, chosenBinary(img, d).SM, h.GPU.String())
	case h.DriverSeesNoGPU():
		c.Detail = evidencespec.DetailBinaryNoDevice
	case !h.Found():
		c.Detail = evidencespec.DetailBinaryNoGPU
	case !h.GPUAccess():
		c.Detail = evidencespec.DetailBinaryNoAccess
	case d.Verdict.Rule != "" && !d.Verdict.OK:
		c.Detail = evidencespec.Fill(evidencespec.DetailRuleRefused, d.Verdict.Host, d.Verdict.Need)
	default:
		c.Detail = evidencespec.Fill(evidencespec.DetailBinaryNone, h.GPU.String())
	}
	return c
}

// chosenBinary names the chosen binary by its SM and file name; nil when
// none was chosen.
func chosenBinary(img *detect.ParsedDescription, d *detect.Decision) *evidencespec.Binary {
	if img == nil || d.Choice == "" {
		return nil
	}
	for i, t := range img.Targets {
		if t.Path == d.Choice {
			b := &evidencespec.Binary{SM: img.Caps[i].String()}
			if name := path.Base(t.Path); safeToken(name) {
				b.Name = name
			}
			return b
		}
	}
	return nil
}

// smokeCheck runs the chosen binary with the image's smoke arguments
// (--version when it names none) when --smoke asks, its output going to
// stderr, and reports the exit status.
func smokeCheck(ctx context.Context, cfg *config, img *detect.ParsedDescription, d *detect.Decision, stderr io.Writer) (evidencespec.Check, *evidencespec.Smoke) {
	c := evidencespec.Check{Name: "smoke", Status: evidencespec.Skipped}
	switch {
	case !cfg.smoke:
		c.Detail = evidencespec.DetailSmokeNotAsked
		return c, nil
	case d.Choice == "":
		c.Detail = evidencespec.DetailSmokeNoBinary
		return c, nil
	}
	args := img.Smoke
	if len(args) == 0 {
		args = []string{"--version"}
	}
	run := &evidencespec.Smoke{}
	if allSafe(args) {
		run.Args = args
	}
	code, err := runSmoke(ctx, cfg.Root.Path(d.Choice), args, d.Env, stderr)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		c.Status, c.Detail = evidencespec.Failed, evidencespec.Fill(evidencespec.DetailSmokeTimeout, smokeTimeout.String())
	case errors.Is(err, errSignaled):
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailSmokeSignal
	case err != nil:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailSmokeStartFailed
	case code != 0:
		run.ExitCode = &code
		c.Status, c.Detail = evidencespec.Failed, evidencespec.Fill(evidencespec.DetailSmokeExited, strconv.Itoa(code))
	default:
		run.ExitCode = &code
		c.Status, c.Detail = evidencespec.Passed, evidencespec.Fill(evidencespec.DetailSmokeExited, "0")
	}
	return c, run
}

// runSmoke runs bin with args and env, and returns its exit status; an
// error means it could not be started or did not end in time.
func runSmoke(ctx context.Context, bin string, args []string, env detect.Environ, stderr io.Writer) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, smokeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, stderr, stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return -1, ctx.Err()
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if exit.ExitCode() < 0 {
			return -1, errSignaled
		}
		return exit.ExitCode(), nil
	}
	if err != nil {
		return -1, err
	}
	return 0, nil
}

// allSafe reports whether every argument is a safe token.
func allSafe(args []string) bool {
	for _, a := range args {
		if !safeToken(a) {
			return false
		}
	}
	return true
}
