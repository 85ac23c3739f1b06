package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// appTimeout bounds the app check's python: importing torch (seconds on a
// Jetson's eMMC), cuInit, and a first CUDA kernel.
const appTimeout = 3 * time.Minute

// venvPython is where the matrix's app Dockerfiles put the app's python.
const venvPython = "/opt/venv/bin/python"

// pytorchSnippet is the pytorch app check: the gate of a PyTorch app on a
// Jetson (CUDA available, torch's CUDA, the device, a small CUDA matrix
// product with finite output). It prints one JSON line, also when a step
// raises, then raises again so that the traceback reaches stderr.
const pytorchSnippet = `import json, sys
out = {"step": "import"}
try:
    import torch
    out["cuda"] = torch.version.cuda
    out["step"] = "available"
    out["available"] = bool(torch.cuda.is_available())
    if out["available"]:
        out["step"] = "device"
        out["device"] = torch.cuda.get_device_name(0)
        out["capability"] = "%d.%d" % torch.cuda.get_device_capability(0)
        out["step"] = "matmul"
        a = torch.ones(4, 4, device="cuda")
        out["finite"] = bool((a @ a).isfinite().all().item())
    out["step"] = ""
except BaseException as e:
    lines = str(e).strip().splitlines()
    out["error"] = (type(e).__name__ + ": " + lines[0] if lines else type(e).__name__)[:300]
    print(json.dumps(out), flush=True)
    raise
print(json.dumps(out), flush=True)
`

// appOutput is the line the snippet prints.
type appOutput struct {
	Step       string  `json:"step"`
	CUDA       *string `json:"cuda"`
	Available  bool    `json:"available"`
	Device     string  `json:"device"`
	Capability string  `json:"capability"`
	Finite     bool    `json:"finite"`
	Error      string  `json:"error"`
}

// appCheck runs the app check an app image names, with the app's python,
// and reports it. The python's output goes to stderr, with a last line
// that names the error; the detail is built from fixed phrases.
func appCheck(ctx context.Context, cfg *config, img *detect.ParsedDescription, d *detect.Decision, dev *device, stderr io.Writer) evidencespec.Check {
	c := evidencespec.Check{Name: evidencespec.CheckApp, Status: evidencespec.Failed}
	switch {
	case img.Check != evidencespec.AppCheckPyTorch:
		c.Detail = evidencespec.DetailAppUnknown
		return c
	case d.Choice == "":
		c.Status, c.Detail = evidencespec.Skipped, evidencespec.DetailAppNoBinary
		return c
	}
	python := appPython(cfg, img)
	if python == "" {
		c.Detail = evidencespec.DetailAppNoPython
		return c
	}
	out, lastErr, err := runApp(ctx, cfg.Root.Path(python), d.Env, stderr)
	if err != nil {
		c.Detail = err.Error()
		return c
	}
	if out.Error != "" || out.Step != "" {
		line := cmp(out.Error, lastErr)
		fmt.Fprintf(stderr, "%s: the app check failed at %s: %s\n", name, evidencespec.AppSteps()[out.Step], quoteLine(line))
		c.Detail = evidencespec.Fill(evidencespec.DetailAppFailed, evidencespec.AppSteps()[out.Step], evidencespec.AppError(line))
		return c
	}
	c.Status, c.Detail = out.judge(dev)
	return c
}

// judge is the status and detail of a snippet that ran to its end.
func (o *appOutput) judge(dev *device) (evidencespec.Status, string) {
	cuda, sm := "", ""
	if o.CUDA != nil {
		if v, err := computecap.ParseCUDAVersion(*o.CUDA); err == nil {
			cuda = v.String()
		}
	}
	if c, err := computecap.Parse(o.Capability); err == nil && c.Valid() {
		sm = c.String()
	}
	family, jetson := jetsonGPU(o.Device, sm, dev)
	switch {
	case o.CUDA == nil:
		return evidencespec.Failed, evidencespec.DetailAppCPUTorch
	case cuda == "" || !o.Available && o.Device != "":
		return evidencespec.Failed, evidencespec.DetailAppIncoherent
	case !o.Available:
		return evidencespec.Failed, evidencespec.Fill(evidencespec.DetailAppNoCUDA, cuda)
	case !jetson:
		return evidencespec.Failed, evidencespec.DetailAppNotJetson
	case !o.Finite:
		return evidencespec.Failed, evidencespec.Fill(evidencespec.DetailAppNonFinite, sm)
	}
	return evidencespec.Passed, evidencespec.Fill(evidencespec.DetailAppPassed, cuda, family, sm)
}

// jetsonGPU reports whether torch's device (its name and SM) is the GPU of
// the host's Jetson SoC, and the SoC's family as a detail writes it.
func jetsonGPU(device, sm string, dev *device) (string, bool) {
	if !dev.hasSoC || sm == "" || sm != dev.soc.Capability.Canonical().String() {
		return "", false
	}
	family := strings.Split(dev.soc.Family, "/")
	named := strings.Contains(device, "Tegra")
	for _, f := range family {
		named = named || strings.Contains(device, f)
	}
	return family[0], named
}

// appPython is the app's python in the image: the one next to the
// command (a venv's bin), the venv's at /opt/venv, else python3 on PATH;
// "" when there is none.
func appPython(cfg *config, img *detect.ParsedDescription) string {
	var dirs []string
	if len(img.Command) > 0 && path.IsAbs(img.Command[0]) {
		dirs = append(dirs, path.Dir(path.Clean(img.Command[0])))
	}
	dirs = append(dirs, path.Dir(venvPython))
	if p, _ := cfg.Root.Find("python", dirs, host.Executable); p != "" {
		return p
	}
	p, _ := cfg.Root.Find("python3", filepath.SplitList(cfg.Env.Get("PATH")), host.Executable)
	return p
}

// runApp runs the snippet with python (a real path) within appTimeout,
// passes its output on to stderr, bounded, and reads its line; it returns
// the last line of its stderr too. Its errors are the check's phrases.
func runApp(ctx context.Context, python string, env detect.Environ, stderr io.Writer) (appOutput, string, error) {
	ctx, cancel := context.WithTimeout(ctx, appTimeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, python, "-c", pytorchSnippet)
	var stdout, errTail bytes.Buffer
	cmd.Env, cmd.WaitDelay = env, time.Second
	cmd.Stdout = &capWriter{w: &stdout, left: maxKernelOutput}
	cmd.Stderr = io.MultiWriter(&capWriter{w: stderr, left: maxKernelOutput}, &tailWriter{buf: &errTail})
	exit, err := runOutcome(ctx, start, cmd.Run(), outcomePhrases{evidencespec.DetailAppTimeout, evidencespec.DetailAppSignal, evidencespec.DetailAppNoStart})
	if err != nil {
		return appOutput{}, "", err
	}
	last := lastLine(errTail.String())
	var out appOutput
	line, _, _ := bytes.Cut(stdout.Bytes(), []byte("\n"))
	if json.Unmarshal(line, &out) != nil || evidencespec.AppSteps()[out.Step] == "" && out.Step != "" ||
		exit != 0 && out.Error == "" || exit == 0 && out.Error != "" {
		if last != "" {
			fmt.Fprintf(stderr, "%s: the app check's python exited %d: %s\n", name, exit, quoteLine(last))
		}
		return appOutput{}, "", errors.New(evidencespec.Fill(evidencespec.DetailAppNoLine, strconv.Itoa(min(max(exit, 0), 255))))
	}
	return out, last, nil
}

// lastLine is the last line of s that is not empty, trimmed.
func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tailWriter keeps the last 4 KiB written to it.
type tailWriter struct{ buf *bytes.Buffer }

func (t *tailWriter) Write(p []byte) (int, error) {
	const keep = 4 << 10
	t.buf.Write(p)
	if n := t.buf.Len(); n > keep {
		t.buf.Next(n - keep)
	}
	return len(p), nil
}

// cmp is a, or b when a is empty.
func cmp(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// quoteLine quotes an error line of the python's for stderr, at most 300
// bytes, escaping what a terminal would act on.
func quoteLine(s string) string { return strconv.Quote(s[:min(len(s), 300)]) }
