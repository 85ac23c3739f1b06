package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os/exec"
	"slices"
	"strconv"
	"time"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// kernelFlag asks jetbake-cudaprobe for the kernel check.
const kernelFlag = "--kernel"

// kernelTimeout bounds jetbake-cudaprobe --kernel: cuInit (seconds on some
// Jetsons), the driver's JIT compilation and the run.
const kernelTimeout = 60 * time.Second

// maxKernelOutput bounds what the entrypoint reads of the probe's output
// and passes on of its stderr.
const maxKernelOutput = 16 << 10

// kernelOutput is the line jetbake-cudaprobe --kernel prints, pass or not.
type kernelOutput struct {
	Pass      bool   `json:"pass"`
	SM        string `json:"sm"`
	Elements  int    `json:"elements"`
	Step      string `json:"step"`
	Error     string `json:"error"`
	Code      int    `json:"code"`
	Wrong     int    `json:"wrong"`
	NonFinite int    `json:"non_finite"`
	FirstBad  *struct {
		Index int    `json:"index"`
		Got   string `json:"got"`
		Want  string `json:"want"`
	} `json:"first_bad"`
	JITMillis    float64 `json:"jit_ms"`
	KernelMillis float64 `json:"kernel_ms"`
	TotalMillis  float64 `json:"total_ms"`
}

// kernelCheck runs the CUDA kernel check, jetbake-cudaprobe --kernel, on
// the host's driver (the library the cuda-driver check asked) and reports
// it, with the run's allow-listed values. The probe's own sentences go to
// stderr; the check's detail is built from fixed phrases and parsed values.
func kernelCheck(ctx context.Context, cfg *config, h *detect.Host, stderr io.Writer) (evidencespec.Check, *evidencespec.Kernel) {
	c := evidencespec.Check{Name: evidencespec.CheckCUDAKernel, Status: evidencespec.Skipped}
	probe := cfg.ProbePath()
	switch {
	case h.Libcuda == "":
		c.Detail = evidencespec.DetailKernelNoLibrary
		return c, nil
	case !detect.ProbeExists(probe):
		c.Detail = evidencespec.DetailKernelNoProbe
		return c, nil
	}
	out, exit, err := runKernelProbe(ctx, probe, cfg.Root.Path(h.Libcuda), cfg.Env, stderr)
	if err != nil {
		c.Status, c.Detail = evidencespec.Failed, err.Error()
		return c, nil
	}
	k := out.evidence()
	c.Status, c.Detail = evidencespec.Failed, out.failure(k)
	if exit == 0 && out.passed(k) {
		n := strconv.Itoa(k.Elements)
		c.Status = evidencespec.Passed
		c.Detail = evidencespec.Fill(evidencespec.DetailKernelPassed, k.SM, n, n, millis(k.JITMillis), millis(k.KernelMillis))
	}
	return c, k
}

// runKernelProbe runs jetbake-cudaprobe --kernel at probe (a real path) on
// the library at lib (a real path), within kernelTimeout or the caller's
// deadline when that comes sooner, passes its stderr on and reads its
// line. Its errors are the check's phrases, fit for the evidence; a
// timeout names the time the probe had, as runTool's do.
func runKernelProbe(ctx context.Context, probe, lib string, env detect.Environ, stderr io.Writer) (kernelOutput, int, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, kernelTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, probe, kernelFlag, lib)
	var stdout bytes.Buffer
	cmd.Env, cmd.WaitDelay = env, time.Second
	cmd.Stdout = &capWriter{w: &stdout, left: maxKernelOutput}
	cmd.Stderr = &capWriter{w: stderr, left: maxKernelOutput}
	exit, err := runOutcome(ctx, start, cmd.Run(),
		outcomePhrases{evidencespec.DetailKernelTimeout, evidencespec.DetailKernelSignal, evidencespec.DetailKernelNoStart})
	if err != nil {
		return kernelOutput{}, -1, err
	}
	out, perr := parseKernelOutput(stdout.Bytes())
	if perr != nil || exit > 1 {
		return kernelOutput{}, exit, errors.New(evidencespec.Fill(evidencespec.DetailKernelNoLine, strconv.Itoa(exit)))
	}
	return out, exit, nil
}

// outcomePhrases are a check's phrases for a child that did not run to
// an end: its timeout (with a {duration} slot), a signal, no start.
type outcomePhrases struct{ timeout, signal, noStart string }

// runOutcome reads a child's cmd.Run error, run under ctx since start:
// its exit status, or one of the check's phrases when it did not end by
// itself, naming the time it had.
func runOutcome(ctx context.Context, start time.Time, err error, p outcomePhrases) (int, error) {
	var ee *exec.ExitError
	switch {
	case ctx.Err() != nil:
		deadline, _ := ctx.Deadline()
		return -1, errors.New(evidencespec.Fill(p.timeout, detect.Roughly(deadline.Sub(start)).String()))
	case errors.As(err, &ee) && ee.ExitCode() < 0:
		return -1, errors.New(p.signal)
	case errors.As(err, &ee):
		return ee.ExitCode(), nil
	case err != nil:
		return -1, errors.New(p.noStart)
	}
	return 0, nil
}

// parseKernelOutput reads jetbake-cudaprobe --kernel's line; a step the
// entrypoint does not know is an error, since its evidence could not say
// what failed.
func parseKernelOutput(data []byte) (kernelOutput, error) {
	var out kernelOutput
	line, _, _ := bytes.Cut(data, []byte("\n"))
	if err := json.Unmarshal(line, &out); err != nil {
		return kernelOutput{}, err
	}
	if out.Step != "" && !slices.Contains(evidencespec.KernelSteps(), out.Step) {
		return kernelOutput{}, errors.New("unknown step " + computecap.QuoteShort(out.Step))
	}
	return out, nil
}

// evidence is the run's allow-listed values: the SM parsed, a CUDA error
// name only in its CUDA_ERROR_ form, counts and times bounded.
func (o *kernelOutput) evidence() *evidencespec.Kernel {
	k := &evidencespec.Kernel{Step: o.Step, Elements: bound(o.Elements), Wrong: bound(o.Wrong), NonFinite: bound(o.NonFinite),
		JITMillis: boundMillis(o.JITMillis), KernelMillis: boundMillis(o.KernelMillis), TotalMillis: boundMillis(o.TotalMillis)}
	if c, err := computecap.Parse(o.SM); err == nil && c.Valid() {
		k.SM = c.String()
	}
	if evidencespec.IsCUDAErrorName(o.Error) {
		k.Error = o.Error
	}
	return k
}

// passed reports whether the line is a pass that holds together.
func (o *kernelOutput) passed(k *evidencespec.Kernel) bool {
	return o.Pass && k.Step == "" && k.Wrong == 0 && k.NonFinite == 0 && k.Elements > 0 && k.SM != ""
}

// failure says what failed, with a hint for the CUDA errors a Jetson user
// meets.
func (o *kernelOutput) failure(k *evidencespec.Kernel) string {
	switch k.Step {
	case "":
		return evidencespec.DetailKernelIncoherent
	case "dlopen":
		return evidencespec.DetailKernelDlopen
	case "dlsym":
		return evidencespec.DetailKernelDlsym
	case evidencespec.KernelStepResults:
		return o.resultsFailure(k)
	}
	name, code := k.Error, strconv.Itoa(bound(o.Code))
	if name == "" {
		name = evidencespec.UnnamedCUDAError
	}
	if hint := evidencespec.KernelHints()[k.Error]; hint != "" {
		return evidencespec.Fill(evidencespec.DetailKernelStepHint, k.Step, name, code, hint)
	}
	return evidencespec.Fill(evidencespec.DetailKernelStep, k.Step, name, code)
}

// resultsFailure describes values that are wrong or not finite.
func (o *kernelOutput) resultsFailure(k *evidencespec.Kernel) string {
	on, first := "", ""
	if k.SM != "" {
		on = evidencespec.Fill(evidencespec.DetailKernelOn, k.SM)
	}
	if b := o.FirstBad; b != nil {
		got, gerr := strconv.ParseFloat(b.Got, 32)
		want, werr := strconv.ParseFloat(b.Want, 32)
		if gerr == nil && werr == nil && b.Index >= 0 && b.Index < k.Elements {
			first = evidencespec.Fill(evidencespec.DetailKernelFirst, strconv.Itoa(b.Index),
				strconv.FormatFloat(got, 'g', -1, 32), strconv.FormatFloat(want, 'g', -1, 32))
		}
	}
	return evidencespec.Fill(evidencespec.DetailKernelResults, strconv.Itoa(k.Wrong), strconv.Itoa(k.NonFinite), strconv.Itoa(k.Elements), on, first)
}

// bound keeps a count in 0 .. 1<<24.
func bound(n int) int { return max(0, min(n, 1<<24)) }

// boundMillis keeps a time in 0 .. one hour, to the microsecond.
func boundMillis(v float64) float64 {
	if math.IsNaN(v) || v < 0 {
		return 0
	}
	return math.Round(min(v, 3_600_000)*1000) / 1000
}

// millis writes a time in milliseconds, as "0.812 ms".
func millis(v float64) string { return strconv.FormatFloat(v, 'f', 3, 64) + " ms" }

// capWriter passes on at most left bytes to w and drops the rest, so that a
// child's output cannot fill the entrypoint's memory.
type capWriter struct {
	w    io.Writer
	left int
}

func (c *capWriter) Write(p []byte) (int, error) {
	if n := min(len(p), c.left); n > 0 {
		c.left -= n
		if _, err := c.w.Write(p[:n]); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
