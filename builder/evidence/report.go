package evidence

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

// IssueMarkdown writes evidence as the body of an issue a person can paste:
// a title line, the image and host, the checks, and the evidence itself in
// a folded block that `jetbake evidence add` reads back.
func IssueMarkdown(ev *Evidence) (string, error) {
	raw, err := ev.Marshal()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Hardware evidence: %s on %s: %s\n\n", orDash(ev.Image.Release), orDash(ev.Host.DeviceClass), verdict(ev))
	b.WriteString("| | |\n|---|---|\n")
	for _, row := range summaryRows(ev) {
		fmt.Fprintf(&b, "| %s | %s |\n", row[0], cell(row[1]))
	}
	b.WriteString("\n### Checks\n\n| Check | Status | Detail |\n|---|---|---|\n")
	for _, c := range ev.Result.Checks {
		fmt.Fprintf(&b, "| %s | %s %s | %s |\n", cell(c.Name), statusMark(c.Status), c.Status, cell(c.Detail))
	}
	b.WriteString("\n<details><summary>Evidence JSON (for <code>jetbake evidence add</code>)</summary>\n\n```json\n")
	b.Write(raw)
	b.WriteString("```\n\n</details>\n")
	return b.String(), nil
}

// summaryRows are the label and value rows of the issue's first table.
func summaryRows(ev *Evidence) [][2]string {
	h := &ev.Host
	device := orDash(h.DeviceClass)
	if h.SoC != "" || h.ComputeCapability != "" {
		device += " (" + strings.Join(nonEmpty(h.SoC, sm(h.ComputeCapability)), ", ") + ")"
	}
	// An app has no router to serve: its app check takes that row.
	checkRow := [2]string{"Serving", serveText(ev.Result.Serve)}
	if ev.Image.Kind == evidencespec.KindApp {
		checkRow = [2]string{"App check", appText(ev)}
	}
	rows := [][2]string{
		{"Release", orDash(ev.Image.Release)},
		{"Image digest", code(ev.Image.Digest)},
		{"Tags", codeList(ev.Image.Tags)},
		{"jetbake revision", code(ev.Revision)},
		{"Device", device},
		{"L4T / JetPack", orDash(h.L4T) + " / " + orDash(h.JetPack)},
		{"CUDA driver", orDash(h.CUDADriver)},
		{"Architecture", orDash(h.Architecture)},
		{"Binary chosen", binaryText(ev.Result.Binary)},
		{"Build audit", buildAuditText(ev)},
		{"Smoke run", smokeText(ev.Result.Smoke)},
		{"CUDA kernel", kernelText(ev.Result.Kernel)},
		checkRow,
		{"Level", string(LevelOf(ev)) + ": " + levelTextOf(ev)},
		{"Collected", ev.At().UTC().Format("2006-01-02 15:04 UTC")},
	}
	return rows
}

// buildAuditText is the image's build-time audit per SM, as `jetbake
// evidence add` recorded it, or why there is none.
func buildAuditText(ev *Evidence) string {
	if s := auditText(ev.Audit); s != "" {
		return s
	}
	return "not recorded (the probe's own file: 'jetbake evidence add' records the build's audit in the evidence it stores)"
}

// appText describes an app image's app check: its status and detail.
func appText(ev *Evidence) string {
	for _, c := range ev.Result.Checks {
		if c.Name == evidencespec.CheckApp {
			return statusMark(c.Status) + " " + string(c.Status) + ": " + c.Detail
		}
	}
	return "not run (a jetbake-probe of an app image runs it by itself)"
}

// levelTextOf says in words what ev's level proves, for its kind.
func levelTextOf(ev *Evidence) string {
	l := LevelOf(ev)
	if ev.Image.Kind != evidencespec.KindApp {
		return LevelText(l)
	}
	switch {
	case l == LevelSmoke && ev.passed(evidencespec.CheckApp):
		return "the image starts and the app's torch computed on the GPU; the cuda-kernel check did not run (add --kernel)"
	case l == LevelKernel:
		return "a CUDA kernel ran on the GPU; the app check did not pass"
	}
	return LevelText(l)
}

// kernelText describes the CUDA kernel check's run.
func kernelText(k *Kernel) string {
	switch {
	case k == nil:
		return "not run (add --kernel)"
	case k.Step != "":
		s := "failed at " + code(k.Step)
		if k.Error != "" {
			s += " with " + code(k.Error)
		}
		return s
	}
	return strconv.Itoa(k.Elements) + " values exact on SM " + k.SM + " (JIT " + ms(k.JITMillis) + ", kernel " + ms(k.KernelMillis) + ")"
}

// serveText describes the serving check's run.
func serveText(s *Serve) string {
	if s == nil {
		return "not run (add --serve MODEL_DIR)"
	}
	model := "a local model"
	if s.ModelID != "" {
		model = code(s.ModelID)
	}
	out := model + ", " + strconv.Itoa(s.Dimensions) + " dimensions"
	if s.DType != "" {
		out += ", " + s.DType
	}
	if s.Step != "" {
		return out + ": failed at " + code(s.Step) + " after " + strconv.Itoa(s.Requests) + " requests"
	}
	return out + ": " + strconv.Itoa(s.Requests) + " requests, load " + ms(s.LoadMillis) + ", p50 " + ms(s.P50Millis) + ", p95 " + ms(s.P95Millis)
}

// ms writes a time in milliseconds, as "3.1 ms".
func ms(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " ms" }

// verdict is "pass" or "not a pass".
func verdict(ev *Evidence) string {
	if ev.Result.Pass {
		return "pass"
	}
	return "not a pass"
}

// statusMark is the sign shown before a status.
func statusMark(s Status) string {
	switch s {
	case Passed:
		return "✅"
	case Failed:
		return "❌"
	}
	return "⏭️"
}

// binaryText names the chosen binary.
func binaryText(b *Binary) string {
	if b == nil {
		return "none"
	}
	if b.Name == "" {
		return "SM " + b.SM
	}
	return code(b.Name) + " (SM " + b.SM + ")"
}

// smokeText describes the smoke run.
func smokeText(s *Smoke) string {
	if s == nil {
		return "not run"
	}
	args := code(strings.Join(s.Args, " "))
	if s.ExitCode == nil {
		return args + " did not exit"
	}
	return args + " exited " + strconv.Itoa(*s.ExitCode)
}

// sm writes "SM 8.7", or "" for "".
func sm(c string) string {
	if c == "" {
		return ""
	}
	return "SM " + c
}

// nonEmpty returns the non-empty strings.
func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

// orDash returns s, or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// code writes s as inline code, or "-" when it is empty.
func code(s string) string {
	if s == "" {
		return "-"
	}
	return "`" + strings.ReplaceAll(s, "`", "") + "`"
}

// codeList writes each item as inline code, separated by line breaks.
func codeList(items []string) string {
	if len(items) == 0 {
		return "-"
	}
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = code(s)
	}
	return strings.Join(out, "<br>")
}

// cell makes s safe in a Markdown table cell.
func cell(s string) string {
	return strings.NewReplacer("|", `\|`, "\n", " ", "\r", " ").Replace(s)
}

// shortDigest writes "sha256:c2efadaaded6".
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}
