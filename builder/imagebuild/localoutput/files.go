package localoutput

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/imagebuild/dockertar"
)

// Release is where a release's outputs are written while it builds.
type Release struct {
	// LayoutDir is the OCI layout BuildKit exports to, or "".
	LayoutDir   string
	partial     []string       // every path written, under its temporary name
	afterExport []func() error // docker conversions, then scratch removal
}

// Prepare plans the local outputs of release (tagged tags; multi when
// several releases share the outputs) and clears their temporary paths.
// BuildKit takes one OCI store export per solve, and its docker exporter
// cannot write an index: every local output comes from one OCI layout,
// the oci output's own folder when there is one, and docker tarballs are
// converted from it.
func Prepare(outs []Output, release string, tags []string, multi bool) (*Release, error) {
	lo := &Release{}
	for _, out := range outs {
		if out.Type == "oci" {
			lo.LayoutDir = Path(out, release, multi) + PartialSuffix
			lo.partial = append(lo.partial, lo.LayoutDir)
		}
	}
	if len(outs) > 0 && lo.LayoutDir == "" {
		scratch := filepath.Join(os.TempDir(), fmt.Sprintf("jetbake-layout-%s-%d", release, os.Getpid()))
		lo.LayoutDir = scratch
		lo.partial = append(lo.partial, scratch)
		lo.afterExport = append(lo.afterExport, func() error { return os.RemoveAll(scratch) })
	}
	for _, out := range outs {
		if out.Type != "docker" {
			continue
		}
		dest := Path(out, release, multi) + PartialSuffix
		lo.partial = append(lo.partial, dest)
		convert := func() error { return dockertar.Write(lo.LayoutDir, dest, tags) }
		lo.afterExport = append([]func() error{convert}, lo.afterExport...)
	}
	for _, p := range lo.partial {
		if err := os.RemoveAll(p); err != nil {
			return nil, fmt.Errorf("output %s: %w", p, err)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, fmt.Errorf("output %s: %w", p, err)
		}
	}
	return lo, nil
}

// Finish finishes the outputs after a successful export and returns them,
// under their temporary names, or removes them all after a failure.
func (lo *Release) Finish(ok bool) ([]string, error) {
	var err error
	for _, step := range lo.afterExport {
		if ok {
			if err = step(); err != nil {
				ok = false
			}
		}
	}
	var kept []string
	for _, p := range lo.partial {
		if _, statErr := os.Stat(p); statErr != nil {
			continue
		}
		if !ok {
			_ = os.RemoveAll(p)
			continue
		}
		kept = append(kept, p)
	}
	return kept, err
}

// Place renames a succeeded release's finished outputs (Finish) from
// their temporary names into place, or removes them when keep is false.
// The error is the last output that could not be placed; the others are
// placed all the same.
func Place(partial []string, keep bool) ([]string, error) {
	var placed []string
	var failed error
	for _, tmp := range partial {
		final := strings.TrimSuffix(tmp, PartialSuffix)
		if !keep {
			_ = os.RemoveAll(tmp)
			continue
		}
		if err := replace(tmp, final); err != nil {
			_ = os.RemoveAll(tmp)
			failed = err
			continue
		}
		placed = append(placed, final)
	}
	return placed, failed
}

// replace moves tmp to final, where final may only be missing or an output
// jetbake could have written (an OCI layout or a file).
func replace(tmp, final string) error {
	if err := CheckReplaceable(final); err != nil {
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

// CheckReplaceable refuses to overwrite a folder that is not an OCI layout:
// `--output dest=.` must never delete someone's work.
func CheckReplaceable(path string) error {
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
