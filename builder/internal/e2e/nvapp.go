package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// AppNVChecks are the app images' runs through NVIDIA's runtime (images
// keyed AppReleasePrefix + release, by their first tag), as the router's
// rows: the app check (--gate: torch finds CUDA and the GPU) on an Orin
// and a Thor, with the host's stand-in libcuda mounted by the runtime from
// its CSV views; the JetPack 6.2 image on a Thor, refused with the tag
// that runs there; and the runtime's own requirement check turned back on
// for the 6.2 image (its container's CUDA 12.9) on JetPack 6.2's driver
// (CUDA 12.6), which it refuses before the container exists.
func AppNVChecks(b *NVBed, tags map[string]string) []NVCheck {
	gate := []string{"--gate"}
	jp62, jp70 := AppReleasePrefix+"jetpack6.2", AppReleasePrefix+"jetpack7.0"
	return []NVCheck{
		{Check: Check{Release: jp62, Host: "orin-jp6", Args: gate, WantApp: true,
			WantOutput: []string{"cuda available: True", "device: Orin", "op: 24.0 finite True"}}},
		{Check: Check{Release: jp70, Host: "thor-jp7.0", Args: gate, WantApp: true,
			WantOutput: []string{"cuda available: True", "device: Thor", "op: 24.0 finite True"}}},
		{Check: Check{Release: jp62, Host: "thor-jp7.0", Args: gate, WantFailure: tags[jp70]}},
		requireCheck(jp62, "orin-jp6", b.Fakes["orin-jp6"], "12.9", ""),
	}
}

// appReleases are the app releases among tags' keys, sorted.
func appReleases(tags map[string]string) []string {
	var out []string
	for r := range tags {
		if strings.HasPrefix(r, AppReleasePrefix) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// RunAppNVIDIARuntime runs the app's images of tags (AppReleasePrefix +
// release to reference) through NVIDIA's runtime: AppNVChecks, on a
// Docker engine of its own under work, stopped before it returns.
func RunAppNVIDIARuntime(ctx context.Context, env *Env, work string, tags map[string]string) ([]NVOutcome, error) {
	return runThroughNVIDIA(ctx, env, work, tags, appReleases(tags), func(nv *NVBed, images map[string]string) []NVCheck {
		return AppNVChecks(nv, tags)
	})
}

// runThroughNVIDIA lays out the fake hosts under work, starts a Docker
// engine whose "nvidia" runtime is theirs, pulls the image of each of
// releases from the registry (tags: release to reference), writes
// orin-jp6's CDI spec and runs the checks.
func runThroughNVIDIA(ctx context.Context, env *Env, work string, tags map[string]string, releases []string,
	checks func(nv *NVBed, images map[string]string) []NVCheck) (outcomes []NVOutcome, err error) {
	nv, err := NewNVBed(ctx, filepath.Join(work, "nv"), env)
	if err != nil {
		return nil, err
	}
	d, err := StartDockerd(ctx, filepath.Join(work, "dockerd"), WithRuntime("nvidia", nv.RuntimePath()))
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, d.Close()) }()
	images := map[string]string{}
	for _, release := range releases {
		ref, ok := tags[release]
		if !ok {
			return nil, fmt.Errorf("no image of %s was built", release)
		}
		res, err := d.Docker(ctx, "pull", "--quiet", "--platform", "linux/arm64", ref)
		if err != nil {
			return nil, err
		}
		if res.ExitCode != 0 {
			return nil, fmt.Errorf("docker pull %s: exit %d: %s", ref, res.ExitCode, strings.TrimSpace(res.Stderr))
		}
		images[release] = ref
	}
	if err := nv.GenerateCDI(ctx, nv.Hosts["orin-jp6"]); err != nil {
		return nil, err
	}
	return RunNVChecks(ctx, d, nv, images, checks(nv, images)), nil
}
