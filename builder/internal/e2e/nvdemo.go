package e2e

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// RunNVIDIARuntime is the part of `make demo` that runs the pushed images
// through NVIDIA's runtime: it lays out the fake hosts under work, starts a
// Docker engine whose "nvidia" runtime is theirs, pulls each image of tags
// (release to reference) from the registry, writes orin-jp6's CDI spec and
// runs NVChecks. The engine is stopped before it returns.
func RunNVIDIARuntime(ctx context.Context, env *Env, work string, tags map[string]string) (outcomes []NVOutcome, err error) {
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
	for _, release := range NVReleases() {
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
	return RunNVChecks(ctx, d, nv, images, NVChecks(nv, images)), nil
}
