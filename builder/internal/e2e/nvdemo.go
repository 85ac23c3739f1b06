package e2e

import (
	"context"
	"slices"
)

// RunNVIDIARuntime is the part of `make demo` that runs the pushed images
// through NVIDIA's runtime: it lays out the fake hosts under work, starts a
// Docker engine whose "nvidia" runtime is theirs, pulls each image of tags
// (release to reference) from the registry, writes orin-jp6's CDI spec and
// runs NVChecks, and AppNVChecks when tags has the app's images. The
// engine is stopped before it returns.
func RunNVIDIARuntime(ctx context.Context, env *Env, work string, tags map[string]string) ([]NVOutcome, error) {
	apps := appReleases(tags)
	return runThroughNVIDIA(ctx, env, work, tags, append(slices.Clone(NVReleases()), apps...), func(nv *NVBed, images map[string]string) []NVCheck {
		checks := NVChecks(nv, images)
		if len(apps) > 0 {
			checks = append(checks, AppNVChecks(nv, tags)...)
		}
		return checks
	})
}
