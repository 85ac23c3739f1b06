package progress

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
)

// ReleaseTiming is one release's share of the router builds: where they
// ran and how much of them BuildKit found in its cache. A fresh runner
// that imports a complete cache shows every router step cached.
type ReleaseTiming struct {
	// Name is the release.
	Name string `json:"name"`
	// BuildPlatform is the native platform of the node it was built on.
	BuildPlatform string `json:"build_platform,omitempty"`
	// Emulated says whether its routers compiled under emulation (no worker
	// of the node runs linux/arm64 natively).
	Emulated bool `json:"emulated"`
	// BuildPath is the router stage's path: native, cross or qemu.
	BuildPath string `json:"build_path,omitempty"`
	// CrossBuildBase is, on the cross path, what the routers compiled in:
	// the prebuilt image, or the base a recipe builds FROM its image.
	CrossBuildBase string `json:"cross_build_base,omitempty"`
	// RouterSteps is the number of the router stage's steps (every SM
	// target's), RouterCached how many of them BuildKit took from its cache.
	RouterSteps  int `json:"router_steps"`
	RouterCached int `json:"router_cached"`
}

// buildPlatform is where a release was built, as NoteRelease heard it.
type buildPlatform struct {
	native    string
	path      string
	emulated  bool
	crossBase string
}

// NoteRelease records the native platform of the node the release is built
// on, the router stage's path (native, cross or qemu) and whether its
// routers compile under emulation.
func (r *Recorder) NoteRelease(release, native, path string, emulated bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.platforms[release] = buildPlatform{native: native, path: path, emulated: emulated, crossBase: r.platforms[release].crossBase}
}

// NoteCrossBase records what the release's routers compile in on the cross
// path: its prebuilt cross build base, or the base its recipe builds.
func (r *Recorder) NoteCrossBase(release, base string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.platforms[release]
	p.crossBase = base
	r.platforms[release] = p
}

// releaseTimings counts each release's router steps (BuildKit vertices),
// for the releases that were built or had steps. The caller holds r.mu.
func (r *Recorder) releaseTimings() []ReleaseTiming {
	rows := map[string]*ReleaseTiming{}
	row := func(name string) *ReleaseTiming {
		if rows[name] == nil {
			p := r.platforms[name]
			rows[name] = &ReleaseTiming{Name: name, BuildPlatform: p.native, BuildPath: p.path, Emulated: p.emulated}
			if p.path == "cross" {
				rows[name].CrossBuildBase = p.crossBase
			}
		}
		return rows[name]
	}
	for name := range r.platforms {
		row(name)
	}
	// A step counts once, and as cached when BuildKit reported it cached:
	// a vertex taken from an imported cache is reported again, uncached,
	// each time its layers are fetched and unpacked.
	cached := map[[2]string]bool{}
	for _, s := range r.steps {
		if s.release != "" && s.phase == PhaseRouter {
			key := [2]string{s.release, s.vertex}
			cached[key] = cached[key] || s.cached
		}
	}
	for key, c := range cached {
		t := row(key[0])
		t.RouterSteps++
		if c {
			t.RouterCached++
		}
	}
	out := make([]ReleaseTiming, 0, len(rows))
	for _, t := range rows {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b ReleaseTiming) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// writeReleases prints one line per release: its build platform, whether
// it ran emulated, its router steps and how many were cached.
func (t *Timings) writeReleases(w io.Writer) error {
	if len(t.Releases) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nrelease\tbuild platform\tbuild path\temulated\trouter steps\tcached\t")
	for _, r := range t.Releases {
		emulated := "no"
		if r.Emulated {
			emulated = "yes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d\t\n", r.Name, r.BuildPlatform, cmp.Or(r.BuildPath, "-"), emulated, r.RouterSteps, r.RouterCached)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range t.Releases {
		if r.CrossBuildBase != "" {
			if _, err := fmt.Fprintf(w, "%s: cross in %s\n", r.Name, r.CrossBuildBase); err != nil {
				return err
			}
		}
	}
	return nil
}
