package imageaudit

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/jetbake/jetbake/computecap"
)

// WriteText writes the table (file, cubins, PTX, the verdict per GPU) and
// the last sentence.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"FILE", "CUBINS", "PTX"}
	for _, g := range r.GPUs {
		head = append(head, "SM "+g.String())
	}
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, f := range r.Files {
		row := []string{f.Path, orDash(strings.Join(f.Cubins, ",")), orDash(strings.Join(f.PTX, ","))}
		for _, g := range r.GPUs {
			v, ok := f.Verdict(g)
			switch {
			case !ok:
				row = append(row, "-")
			case f.Error != "":
				row = append(row, "unreadable")
			case v.Verdict == computecap.Partial:
				row = append(row, "partial ("+strconv.Itoa(v.ModulesWithCode)+" of "+strconv.Itoa(f.Modules)+" fatbins)")
			case v.Module > 0:
				row = append(row, v.Verdict.String()+" (fatbin "+strconv.Itoa(v.Module)+" of "+strconv.Itoa(f.Modules)+")")
			default:
				row = append(row, v.Verdict.String())
			}
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, r.Sentence)
	return err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// WriteExplain writes, for each file and GPU, the verdict and why, and
// what was reported to work without NVIDIA's promise.
func (r *Report) WriteExplain(w io.Writer) error {
	for _, f := range r.Files {
		fmt.Fprintf(w, "%s: %s\n", f.Path, f.holds())
		if f.Relocatable != nil {
			fmt.Fprintf(w, "  __nv_relfatbin, not judged: %s\n", f.Relocatable.explain())
		}
		for _, v := range f.Verdicts {
			in := ""
			switch {
			case v.Module > 0 && v.Verdict == computecap.Partial:
				in = " (the first without code: " + v.module(f) + ", " + held(v.ModuleCubins, v.ModulePTX) + ")"
			case v.Module > 0:
				in = " (" + v.module(f) + ": " + held(v.ModuleCubins, v.ModulePTX) + ")"
			}
			fmt.Fprintf(w, "  SM %s: %s%s: %s\n", v.GPU, v.Verdict, in, v.Reason)
			for _, u := range v.Unpromised {
				fmt.Fprintf(w, "    its %s was reported to work on SM %s, but NVIDIA does not promise it (Tegra GPUs run only code built for their own SM): counted as no code\n",
					u, v.GPU)
			}
		}
	}
	for _, rc := range r.RelocatableOnly {
		fmt.Fprintf(w, "%s: not judged: %s\n", rc.Path, rc.explain())
	}
	for _, s := range r.Skipped {
		fmt.Fprintf(w, "not read: %s\n", s)
	}
	_, err := fmt.Fprintln(w, r.Sentence)
	return err
}

// WriteJSON writes the report as one JSON document.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Covers reports whether the audit found code for gpu in every CUDA file
// it judged for it (JIT included).
func (r *Report) Covers(gpu computecap.Capability) bool {
	for _, g := range r.PerGPU {
		if g.GPU == gpu {
			return g.Verdict != computecap.NoCode
		}
	}
	return false
}

// explain says what the relocatable copies hold and why they do not count.
func (rc RelocatableCode) explain() string {
	return fatbins(rc.Modules) + " of relocatable device code (" + held(rc.Cubins, rc.PTX) +
		"), copies that nvlink reads to device-link against the file and the CUDA runtime never loads"
}

// fatbins counts fat binaries: "1 fat binary", "225 fat binaries".
func fatbins(n int) string {
	if n == 1 {
		return "1 fat binary"
	}
	return strconv.Itoa(n) + " fat binaries"
}
