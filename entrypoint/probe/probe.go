package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/renameio/v2"

	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// probeSetup is what the probe takes from the process besides the config:
// the time and the architecture the entrypoint was built for, which tests fix.
type probeSetup struct {
	now  time.Time
	arch string
}

// probeMain runs --probe: it collects the evidence, writes it to stdout or
// --out, prints a one-line verdict on stderr and returns 0 when the result
// is a pass, 1 when not, 2 for bad arguments.
func probeMain(ctx context.Context, cfg *config, stdout, stderr io.Writer, ps probeSetup) int {
	if err := checkOutFolder(cfg.out); err != nil {
		fmt.Fprintf(stderr, "%s: cannot write the evidence: %v\n", name, err)
		return 2
	}
	ev := collectEvidence(ctx, cfg, stderr, ps)
	data, err := json.MarshalIndent(ev, "", "  ")
	if err != nil {
		return fail(stderr, "cannot write the evidence: "+err.Error())
	}
	data = append(data, '\n')
	where := ""
	if cfg.out == "" {
		_, err = stdout.Write(data)
	} else {
		err, where = writeFileAtomic(cfg.out, data), "; written to "+cfg.out
	}
	if err != nil {
		return fail(stderr, "cannot write the evidence: "+err.Error())
	}
	fmt.Fprintf(stderr, "%s: %s%s\n", name, verdict(ev), where)
	if !ev.Result.Pass {
		return 1
	}
	return 0
}

// collectEvidence detects as --explain does, with JETBAKE_COMPUTE_CAP and
// JETBAKE_SKIP_L4T_CHECK ignored (evidence must show what the host is,
// not what a user asked for), and runs every check: cuda-kernel only with
// --kernel, then for an app image the app check, before the smoke run, and
// serve only with --serve, after it.
// The evidence is an
// allow-listed profile (see package evidencespec): nothing else may be
// added, and TestProbeLeaksNoSecret plants secrets and looks for each.
func collectEvidence(ctx context.Context, cfg *config, stderr io.Writer, ps probeSetup) *evidencespec.Evidence {
	pc := *cfg
	pc.Env = cfg.Env.Without(detect.EnvOverride)
	pc.Explain, pc.SkipL4T = true, false
	pc.Full, pc.FullWhy = true, name+" asks the driver itself (cuInit) for its evidence"
	img, imgErr := detect.LoadImage(pc.Root, pc.Table)
	if img != nil {
		pc.Table = img.Table // with the facts the image declares
	}
	h := detect.Detect(ctx, &pc.Config, true)
	dev := deviceOf(h.Facts)
	var d detect.Decision
	if img != nil {
		d = detect.Decide(&pc.Config, img, h)
		if d.Verdict.Rule == "" {
			d.Verdict = detect.CheckHost(&pc.Config, img, h)
		}
	}
	ev := &evidencespec.Evidence{
		SchemaVersion: evidencespec.SchemaVersion,
		GeneratedAt:   ps.now.UTC().Format(time.RFC3339),
		Host:          hostProfile(&pc, h, &dev, ps.arch),
	}
	digest := imageProfile(ev, img, pc.Env)
	checks := []evidencespec.Check{
		imageCheck(imgErr), digest, archCheck(ps.arch), socCheck(&dev), deviceClassCheck(&dev),
		l4tCheck(pc.Table, h), l4tMatchCheck(img, h, &d), driverCheck(h), gpuMatchCheck(h, &dev), binaryCheck(img, h, &d),
	}
	if pc.kernel {
		kernel, run := kernelCheck(ctx, &pc, h, stderr)
		checks, ev.Result.Kernel = append(checks, kernel), run
	}
	if img != nil && img.Kind == evidencespec.KindApp {
		checks = append(checks, appCheck(ctx, &pc, img, &d, &dev, stderr))
	}
	ev.Result.Binary = chosenBinary(img, &d)
	smoke, run := smokeCheck(ctx, &pc, img, &d, stderr)
	ev.Result.Checks, ev.Result.Smoke = append(checks, smoke), run
	if pc.serve != "" {
		serve, run := serveCheck(ctx, &pc, &d, stderr)
		ev.Result.Checks, ev.Result.Serve = append(ev.Result.Checks, serve), run
	}
	ev.Result.Pass = allPassed(ev.Result.Checks)
	return ev
}

// hostProfile builds the host's profile from parsed values.
func hostProfile(cfg *config, h *detect.Host, dev *device, arch string) evidencespec.Host {
	p := evidencespec.Host{Architecture: arch, DeviceClass: dev.class}
	if h.HasL4T {
		p.L4T, p.JetPack = h.L4T.String(), cfg.Table.JetPackName(h.L4T)
	}
	if dev.hasSoC {
		p.SoC = dev.soc.Name
	}
	if h.Found() {
		p.ComputeCapability = h.GPU.String()
	}
	if h.HasDriver {
		p.CUDADriver = h.Driver.String()
	}
	return p
}

// imageProfile fills the image's release, tags, digest and revision, each
// only when it has a safe form, and returns the image-digest check.
func imageProfile(ev *evidencespec.Evidence, img *detect.ParsedDescription, env detect.Environ) evidencespec.Check {
	ev.Image.Tags = []string{}
	fromFile := ""
	if img != nil {
		if safeToken(img.Release) {
			ev.Image.Release = img.Release
		}
		if safeRevision(img.Revision) {
			ev.Revision = img.Revision
		}
		ev.Image.Tags, fromFile = safeRefs(img.Tags), img.Digest
		if img.Kind == evidencespec.KindApp {
			ev.Image.Kind = evidencespec.KindApp
		}
	}
	c := evidencespec.Check{Name: "image-digest"}
	fromEnv := strings.TrimSpace(env.Get(evidencespec.DigestFromEnv))
	switch {
	case fromEnv != "" && !validDigest(fromEnv):
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailDigestEnvBad
	case fromEnv != "" && fromFile != "" && fromFile != fromEnv:
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailDigestDiffers
	case fromEnv != "":
		ev.Image.Digest, ev.Image.DigestSource = fromEnv, evidencespec.DigestFromEnv
		c.Status, c.Detail = evidencespec.Passed, evidencespec.DetailDigestFromEnv
	case validDigest(fromFile):
		ev.Image.Digest, ev.Image.DigestSource = fromFile, evidencespec.DigestFromImage
		c.Status, c.Detail = evidencespec.Passed, evidencespec.DetailDigestFromImage
	case fromFile != "":
		c.Status, c.Detail = evidencespec.Failed, evidencespec.DetailDigestImageBad
	default:
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailDigestUnknown
	}
	return c
}

// allPassed reports whether every check passed.
func allPassed(checks []evidencespec.Check) bool {
	for _, c := range checks {
		if c.Status != evidencespec.Passed {
			return false
		}
	}
	return len(checks) > 0
}

// verdict is the one-line summary printed on stderr.
func verdict(ev *evidencespec.Evidence) string {
	if ev.Result.Pass {
		return "pass: all " + strconv.Itoa(len(ev.Result.Checks)) + " checks passed"
	}
	var failed, skipped []string
	for _, c := range ev.Result.Checks {
		switch c.Status {
		case evidencespec.Failed:
			failed = append(failed, c.Name)
		case evidencespec.Skipped:
			skipped = append(skipped, c.Name)
		}
	}
	parts := []string{}
	if len(failed) > 0 {
		parts = append(parts, "failed "+strings.Join(failed, ", "))
	}
	if len(skipped) > 0 {
		parts = append(parts, "skipped "+strings.Join(skipped, ", "))
	}
	return "not a pass: " + strings.Join(parts, "; ")
}

// writeFileAtomic writes data to path through a temporary file in the same
// folder, synced, and a rename (renameio), so that a reader never sees half
// a file, even after a crash. Its errors name path, never the temporary
// file.
func writeFileAtomic(path string, data []byte) error {
	if err := checkOutFolder(path); err != nil {
		return err
	}
	if err := renameio.WriteFile(path, data, 0o644, renameio.WithTempDir(filepath.Dir(path))); err != nil {
		var pe *fs.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			err = pe.Err
		case errors.As(err, &le):
			err = le.Err
		}
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}

// checkOutFolder refuses an --out file whose folder does not exist, before
// the probe runs; "" (stdout) passes.
func checkOutFolder(path string) error {
	if path == "" {
		return nil
	}
	dir := filepath.Dir(path)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return fmt.Errorf("the folder %s does not exist: mount one (docker run -v $PWD:/out ...) and write to /out/evidence.json", dir)
	}
	return nil
}

// fail prints the failure and returns exit status 1.
func fail(stderr io.Writer, msg string) int {
	fmt.Fprintf(stderr, "%s: %s\n", name, msg)
	return 1
}
