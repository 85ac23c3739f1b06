package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/e2e"
)

// appRun is what the app's builds gave the table: its images' tags (keyed
// e2e.AppReleasePrefix + release) and the two refused builds' sentences.
type appRun struct {
	repository string
	tags       map[string]string
	refused    []refusal
}

// refusal is a build jetbake refused before any tag, and its sentence.
type refusal struct {
	image, by, sentence string
}

// appBuilds builds the app as a user would, from a repository of its own
// (what `jetbake init --app pytorch` writes) with Debian's real pip under
// QEMU against the local package index, on the stand-in PyTorch bases: the
// app matrix's two releases in one build, then the variant whose pip
// shadows the vendor torch and the one that installs bitsandbytes' SBSA
// wheel, one release each, both of which must be refused.
func appBuilds(ctx context.Context, root string, env *e2e.Env, work, progress string, out io.Writer) (*appRun, error) {
	index, err := e2e.StartAppBed(ctx, env.Kit(), env.Registry)
	if err != nil {
		return nil, err
	}
	defer index.Close()
	fmt.Fprintf(out, "==> pushed the stand-in PyTorch bases (6.2 and 7.0) and started a package index on %s\n", index.URL)
	repo := filepath.Join(work, "obliteratus-jetson")
	run := &appRun{repository: env.Registry + "/" + e2e.AppRepository, tags: map[string]string{}}
	if err := e2e.WriteAppRepo(ctx, repo, index.URL, run.repository); err != nil {
		return nil, err
	}
	fmt.Fprintln(out, "==> jetbake build of the app (jetbake init --app pytorch, OBLITERATUS installed by pip from the index) on both releases")
	metadata := filepath.Join(work, "build-app.json")
	if err := appBuild(ctx, root, env.Registry, filepath.Join(repo, "matrix.json"), metadata, progress); err != nil {
		return nil, err
	}
	report, err := readReport(metadata)
	if err != nil {
		return nil, err
	}
	for _, rr := range report.Releases {
		if len(rr.Tags) == 0 {
			return nil, fmt.Errorf("the app's release %s has no tag: %s", rr.Name, rr.Error)
		}
		run.tags[e2e.AppReleasePrefix+rr.Name] = rr.Tags[0]
	}
	for _, v := range []struct {
		name, step, what, by, want string
		replace                    bool
	}{
		{name: e2e.AppShadow, step: e2e.AppShadowStep, replace: true, want: "--no-deps", by: "the vendor stack check",
			what: "pip installs a dependency that pulls PyPI's torch into the venv: the vendor stack check must refuse it"},
		{name: e2e.AppBitsandbytes, step: e2e.AppBitsandbytesStep, want: "audit: ", by: "the audit",
			what: "pip installs bitsandbytes' SBSA wheel: the audit must refuse it"},
	} {
		fmt.Fprintf(out, "==> jetbake build of %s (%s)\n", variantImage(v.name), v.what)
		r, err := refusedAppBuild(ctx, root, env.Registry, repo, work, progress, v.name, v.step, v.want, v.replace)
		if err != nil {
			return nil, err
		}
		r.by = v.by
		run.refused = append(run.refused, r)
	}
	return run, nil
}

// refusedAppBuild builds the app's variant name on JetPack 6.2, which
// jetbake must refuse with a sentence holding want, and returns it.
func refusedAppBuild(ctx context.Context, root, registry, repo, work, progress, name, step, want string, replace bool) (refusal, error) {
	path, err := e2e.AppVariant(repo, name, step, replace)
	if err != nil {
		return refusal{}, err
	}
	image := variantImage(name)
	metadata := filepath.Join(work, "build-app-"+name+".json")
	if err := appBuild(ctx, root, registry, path, metadata, progress, "--release", "jetpack6.2"); err == nil {
		return refusal{}, fmt.Errorf("jetbake build of %s succeeded: it must be refused", image)
	}
	r, err := readReport(metadata)
	if err != nil {
		return refusal{}, err
	}
	if len(r.Releases) != 1 || r.Releases[0].Outcome != imagebuild.Failed || len(r.Releases[0].Tags) > 0 ||
		!strings.Contains(r.Releases[0].Error, want) {
		return refusal{}, fmt.Errorf("jetbake build of %s failed, but not with the sentence it must (%q): %+v", image, want, r.Releases)
	}
	msg := r.Releases[0].Error
	if i := strings.Index(msg, want); want == "audit: " && i >= 0 {
		msg = msg[i:]
	}
	return refusal{image: image, sentence: msg}, nil
}

// variantImage is the tag, without its registry and namespace, that the
// app's variant name would have on JetPack 6.2.
func variantImage(name string) string {
	return e2e.AppRepository[strings.LastIndex(e2e.AppRepository, "/")+1:] + "-" + name + ":" + e2e.AppVersion + "-jetpack6.2"
}

// appBuild runs bin/jetbake build of the app's matrix, from its
// repository, with the demo's BuildKit state (and so its cache).
func appBuild(ctx context.Context, root, registry, matrixPath, metadata, progress string, args ...string) error {
	return jetbakeRun(ctx, root, filepath.Dir(matrixPath), append([]string{"build", "--matrix", matrixPath,
		"--mirror", "nvcr.io=" + registry, "--push", "--progress", progress, "--metadata-file", metadata,
		"--state-dir", filepath.Join(root, "bin", "state", "buildkitd"),
		"--entrypoint-dir", filepath.Join(root, "bin", "linux-arm64")}, args...)...)
}
