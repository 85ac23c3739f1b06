package main

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"path"
	"strconv"
	"time"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// smokeTimeout bounds the smoke run of the chosen binary.
const smokeTimeout = 60 * time.Second

// errSignaled reports a smoke run ended by a signal.
var errSignaled = errors.New("killed by a signal")

// The checks below write their details from fixed phrases and parsed
// values only: letters, digits, spaces and . , : ; ( ) _ ' + = -, never a
// path or text read on the host. builder/evidence refuses anything else.

// imageCheck says whether the image description was read.
func imageCheck(err error) evidencespec.Check {
	c := evidencespec.Check{Name: "image-description", Status: evidencespec.Passed, Detail: "read and valid"}
	if err != nil {
		c.Status, c.Detail = evidencespec.Failed, "the image description is missing or not usable: run --explain for why"
	}
	return c
}

// archCheck says whether the entrypoint runs as arm64, as on every Jetson.
func archCheck(arch string) evidencespec.Check {
	c := evidencespec.Check{Name: "architecture", Status: evidencespec.Passed, Detail: "arm64, as every Jetson"}
	if arch != "arm64" {
		c.Status, c.Detail = evidencespec.Failed, safeWord(arch)+" is not arm64: no Jetson runs it"
	}
	return c
}

// socCheck says whether the device tree or soc_id names a Jetson SoC.
func socCheck(dev *device) evidencespec.Check {
	c := evidencespec.Check{Name: "jetson-soc"}
	switch {
	case dev.conflict:
		c.Status, c.Detail = evidencespec.Failed, "the device tree and soc_id name different SoCs"
	case !dev.hasSoC:
		c.Status, c.Detail = evidencespec.Failed, "no Jetson SoC in the device tree or soc_id: this is not a Jetson"
	default:
		c.Status, c.Detail = evidencespec.Passed, dev.soc.Name+", Jetson "+dev.soc.Family
	}
	return c
}

// deviceClassCheck says whether the module is in the allow-list.
func deviceClassCheck(dev *device) evidencespec.Check {
	c := evidencespec.Check{Name: "device-class"}
	switch {
	case !dev.hasSoC:
		c.Status, c.Detail = evidencespec.Skipped, "no Jetson SoC"
	case !dev.known:
		c.Status, c.Detail = evidencespec.Failed, "the module is not one the entrypoint knows: add it to the SoC's row in compute_cap"
	case dev.fromSoC:
		c.Status, c.Detail = evidencespec.Passed, dev.class+" (the module's part number and board name are not visible)"
	default:
		c.Status, c.Detail = evidencespec.Passed, dev.class
	}
	return c
}

// l4tCheck says whether the host's Jetson Linux release was read.
func l4tCheck(h *hostInfo) evidencespec.Check {
	c := evidencespec.Check{Name: "l4t-release"}
	switch {
	case h.HasL4T:
		c.Status, c.Detail = evidencespec.Passed, "L4T R"+h.L4T.String()
		if jp := h.table.JetPackName(h.L4T); jp != "" {
			c.Detail += ", JetPack " + jp
		}
	case h.TegraRelease:
		c.Status, c.Detail = evidencespec.Failed, "nv_tegra_release does not read as an L4T release"
	default:
		c.Status, c.Detail = evidencespec.Failed, "no nv_tegra_release: start the container with --runtime nvidia"
	}
	return c
}

// l4tMatchCheck says whether the host meets the image's host rule: its
// L4T release (JetPack 6 and earlier) or its driver's CUDA version (JetPack
// 7 and later). The check keeps its name for evidence readers.
func l4tMatchCheck(img *image, h *hostInfo, d *decision) evidencespec.Check {
	c := evidencespec.Check{Name: "l4t-matches-image"}
	v := d.Verdict
	switch {
	case img == nil || img.l4tMajor == 0:
		c.Status, c.Detail = evidencespec.Skipped, "the image names no L4T release"
	case v.Rule == "" || v.Unknown:
		c.Status, c.Detail = evidencespec.Skipped, "the host's L4T release and driver are unknown"
	case !v.OK:
		c.Status, c.Detail = evidencespec.Failed, v.Reason()
	case v.CompatDir != "":
		c.Status, c.Detail = evidencespec.Passed, "the host has "+v.Host+"; the image's forward-compatibility libraries cover "+v.Need
	default:
		c.Status, c.Detail = evidencespec.Passed, "the host has "+v.Host+"; the image needs "+v.Need
	}
	return c
}

// driverCheck says whether the CUDA driver answered.
func driverCheck(h *hostInfo) evidencespec.Check {
	c := evidencespec.Check{Name: "cuda-driver", Status: evidencespec.Failed}
	switch h.DriverState {
	case driverVersionOnly:
		c.Status = evidencespec.Passed
		c.Detail = "the driver reports CUDA " + h.Driver.String()
	case driverAnswered:
		c.Status = evidencespec.Passed
		c.Detail = "the driver reports SM " + h.GPU.String() + " and CUDA " + h.Driver.String()
	case driverNoLibrary:
		c.Detail = libcudaName + " not found: start the container with --runtime nvidia"
	case driverNoProbe:
		c.Detail = probeName + " is missing next to the entrypoint"
	case driverFailed:
		c.Detail = "the CUDA driver did not answer: run --explain for its error"
	default:
		c.Status, c.Detail = evidencespec.Skipped, "the driver was not asked"
	}
	return c
}

// gpuMatchCheck says whether the driver's GPU is the SoC's.
func gpuMatchCheck(h *hostInfo, dev *device) evidencespec.Check {
	c := evidencespec.Check{Name: "gpu-matches-soc"}
	switch {
	case h.From != srcDriver || !dev.hasSoC:
		c.Status, c.Detail = evidencespec.Skipped, "needs the driver's answer and the SoC"
	case h.GPU.Canonical() != dev.soc.Capability.Canonical():
		c.Status, c.Detail = evidencespec.Failed, "the driver reports SM "+h.GPU.String()+" but "+dev.soc.Name+" has SM "+dev.soc.Capability.String()
	default:
		c.Status, c.Detail = evidencespec.Passed, "SM "+h.GPU.String()+" is the GPU of "+dev.soc.Name
	}
	return c
}

// binaryCheck says whether a binary was chosen, or why not.
func binaryCheck(img *image, h *hostInfo, d *decision) evidencespec.Check {
	c := evidencespec.Check{Name: "binary-chosen", Status: evidencespec.Failed}
	switch {
	case img == nil:
		c.Status, c.Detail = evidencespec.Skipped, "no image description"
	case d.Choice != "":
		c.Status = evidencespec.Passed
		c.Detail = "a binary for SM " + chosenBinary(img, d).SM + " runs on SM " + h.GPU.String()
	case !h.found():
		c.Detail = "no GPU found: start the container with --runtime nvidia"
	case !h.gpuAccess():
		c.Detail = "the container has no access to the GPU: start it with --runtime nvidia"
	case d.Verdict.Rule != "" && !d.Verdict.OK:
		c.Detail = d.Verdict.Reason()
	default:
		c.Detail = "no binary of the image runs on SM " + h.GPU.String()
	}
	return c
}

// chosenBinary names the chosen binary by its SM and file name; nil when
// none was chosen.
func chosenBinary(img *image, d *decision) *evidencespec.Binary {
	if img == nil || d.Choice == "" {
		return nil
	}
	for i, t := range img.Targets {
		if t.Path == d.Choice {
			b := &evidencespec.Binary{SM: img.caps[i].String()}
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
func smokeCheck(ctx context.Context, cfg *config, img *image, d *decision, stderr io.Writer) (evidencespec.Check, *evidencespec.Smoke) {
	c := evidencespec.Check{Name: "smoke", Status: evidencespec.Skipped}
	switch {
	case !cfg.smoke:
		c.Detail = "not run: add --smoke to run the chosen binary"
		return c, nil
	case d.Choice == "":
		c.Detail = "no binary was chosen"
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
	code, err := runSmoke(ctx, cfg.root.path(d.Choice), args, d.Env, stderr)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		c.Status, c.Detail = evidencespec.Failed, "no exit within "+smokeTimeout.String()
	case errors.Is(err, errSignaled):
		c.Status, c.Detail = evidencespec.Failed, "the chosen binary was killed by a signal"
	case err != nil:
		c.Status, c.Detail = evidencespec.Failed, "the chosen binary could not be started"
	case code != 0:
		run.ExitCode = &code
		c.Status, c.Detail = evidencespec.Failed, "the chosen binary exited "+strconv.Itoa(code)
	default:
		run.ExitCode = &code
		c.Status, c.Detail = evidencespec.Passed, "the chosen binary exited 0"
	}
	return c, run
}

// runSmoke runs bin with args and env, and returns its exit status; an
// error means it could not be started or did not end in time.
func runSmoke(ctx context.Context, bin string, args []string, env environ, stderr io.Writer) (int, error) {
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

// safeWord returns s when it is a safe token, else "this architecture".
func safeWord(s string) string {
	if safeToken(s) {
		return s
	}
	return "this architecture"
}
