package doctor

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteText writes the report as a short table, then each fix, then the verdict.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tSTATUS\tFOUND")
	for _, c := range r.Checks {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Name, c.Status, c.Detail)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fixes := 0
	for _, c := range r.Checks {
		if c.Fix == "" {
			continue
		}
		if fixes == 0 {
			fmt.Fprintln(w, "\nTo fix:")
		}
		fixes++
		fmt.Fprintf(w, "  %s (%s): %s\n", c.Name, c.Status, c.Fix)
	}
	verdict := "\nThis host can run jetbake images: docker run --runtime nvidia $(jetbake pick REPOSITORY)"
	if r.NVIDIARuntimeCheck != CheckDockerRuntime {
		verdict = "\nThis host can run jetbake images: in pods with runtimeClassName nvidia, as jetbake fleet writes them"
	}
	if !r.OK {
		verdict = "\nThis host cannot run jetbake images until the failed checks are fixed."
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
