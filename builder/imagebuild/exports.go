package imagebuild

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client"
	"github.com/tonistiigi/fsutil"

	"github.com/jetbake/jetbake/builder/imagebuild/localoutput"
	"github.com/jetbake/jetbake/builder/refs"
)

// solveOpt is the release's session: its file systems, exports and caches.
// cleanup(true) finishes and returns the partial outputs written (still under
// their temporary names); cleanup(false) removes them.
func (b *Builder) solveOpt(j *releaseJob) (client.SolveOpt, func(ok bool) ([]string, error), error) {
	noCleanup := func(bool) ([]string, error) { return nil, nil }
	mounts, err := j.localMounts(b.opts.entrypointDir)
	if err != nil {
		return client.SolveOpt{}, noCleanup, err
	}
	opt := client.SolveOpt{
		LocalMounts: mounts,
		Session:     b.opts.sessionAttach,
		FrontendAttrs: map[string]string{
			"build-arg:SOURCE_DATE_EPOCH": strconv.FormatInt(j.opts.epoch, 10),
			"platform":                    platforms.Format(arm64Platform()),
		},
	}
	opt.CacheImports, opt.CacheExports = b.opts.cache.Release(j.release)
	if b.opts.controls.SBOM != "" {
		// As buildx sends --sbom: BuildKit's controller runs the scanner on
		// the image and attaches its SPDX document (control.go, "attest:sbom").
		opt.FrontendAttrs["attest:sbom"] = b.opts.controls.SBOM
	}
	if b.opts.controls.Provenance != "" {
		// As buildx sends it: BuildKit's controller attaches the attestation
		// to each image it exports.
		opt.FrontendAttrs["attest:provenance"] = b.opts.controls.Provenance
	}
	if b.opts.push {
		attrs := j.exportAttrs()
		attrs["name"] = j.plan.Repository
		attrs["push"] = "true"
		attrs["push-by-digest"] = "true"
		if refs.PlainHTTP(j.plan.Repository) {
			attrs["registry.insecure"] = "true"
		}
		opt.Exports = append(opt.Exports, client.ExportEntry{Type: client.ExporterImage, Attrs: attrs})
	}
	local, err := localoutput.Prepare(b.opts.outputs, j.release.Name, j.release.Tags, j.multiOutput)
	if err != nil {
		return client.SolveOpt{}, noCleanup, err
	}
	if local.LayoutDir == "" {
		return opt, noCleanup, nil
	}
	attrs := j.exportAttrs()
	attrs["name"] = strings.Join(j.release.Tags, ",")
	attrs["tar"] = "false"
	opt.Exports = append(opt.Exports, client.ExportEntry{Type: client.ExporterOCI, Attrs: attrs, OutputDir: local.LayoutDir})
	return opt, local.Finish, nil
}

// exportAttrs are the attributes every exporter of the release shares. No
// rewrite-timestamp: the two layers jetbake adds are built with the commit's
// time already (see runtimeState), and the base's layers are the base's.
func (j *releaseJob) exportAttrs() map[string]string {
	return map[string]string{
		"oci-mediatypes":    "true",
		"source-date-epoch": strconv.FormatInt(j.opts.epoch, 10),
	}
}

// localMounts are the folders the session offers: the router's context and
// Dockerfile, and the entrypoint binaries.
func (j *releaseJob) localMounts(entrypointDir string) (map[string]fsutil.FS, error) {
	mounts := map[string]fsutil.FS{}
	add := func(name, dir string) error {
		fs, err := fsutil.NewFS(dir)
		if err != nil {
			return fmt.Errorf("release %s: %s folder %s: %w", j.release.Name, name, dir, err)
		}
		mounts[name] = fs
		return nil
	}
	if j.contextDir != "" {
		if err := add(localContext, j.contextDir); err != nil {
			return nil, err
		}
	}
	if err := add(localDockerfile, j.dockerfileDir); err != nil {
		return nil, err
	}
	if entrypointDir == "" {
		return mounts, nil
	}
	if err := add(localEntrypoint, entrypointDir); err != nil {
		return nil, err
	}
	return mounts, nil
}
