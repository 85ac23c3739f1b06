package imagebuild

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// placeOutputs renames a succeeded release's finished outputs from their
// temporary names into place, or removes them when keep is false. A release
// whose output cannot be placed counts as failed.
func placeOutputs(rr *ReleaseReport, keep bool) {
	if rr.Outcome != Succeeded {
		return
	}
	var placed []string
	for _, tmp := range rr.Outputs {
		final := strings.TrimSuffix(tmp, tmpSuffix)
		if !keep {
			_ = os.RemoveAll(tmp)
			continue
		}
		if err := replace(tmp, final); err != nil {
			_ = os.RemoveAll(tmp)
			rr.Outcome, rr.Error = Failed, err.Error()
			continue
		}
		placed = append(placed, final)
	}
	rr.Outputs = placed
}

// replace moves tmp to final, where final may only be missing or an output
// jetbake could have written (an OCI layout or a file).
func replace(tmp, final string) error {
	if err := checkReplaceable(final); err != nil {
		return err
	}
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("replace output %s: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("move output into place: %w", err)
	}
	return nil
}

// checkReplaceable refuses to overwrite a folder that is not an OCI layout:
// `--output dest=.` must never delete someone's work.
func checkReplaceable(path string) error {
	info, err := os.Stat(path)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("output %s: %w", path, err)
	case !info.IsDir():
		return nil
	}
	if _, err := os.Stat(filepath.Join(path, "oci-layout")); err == nil {
		return nil
	}
	entries, err := os.ReadDir(path)
	if err == nil && len(entries) == 0 {
		return nil
	}
	return fmt.Errorf("output %s exists and is not an OCI layout: choose another dest, or remove it first", path)
}
