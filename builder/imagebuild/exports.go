package imagebuild

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client"
	"github.com/tonistiigi/fsutil"

	"github.com/jetbake/jetbake/builder/imagebuild/dockertar"
	"github.com/jetbake/jetbake/builder/refs"
)

// tmpSuffix marks a local output that is still being written; it is renamed
// into place only when the rules of finish allow it.
const tmpSuffix = ".jetbake-partial"

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
	local, err := b.localOutputs(j)
	if err != nil {
		return client.SolveOpt{}, noCleanup, err
	}
	if local.layoutDir == "" {
		return opt, noCleanup, nil
	}
	attrs := j.exportAttrs()
	attrs["name"] = strings.Join(j.release.Tags, ",")
	attrs["tar"] = "false"
	opt.Exports = append(opt.Exports, client.ExportEntry{Type: client.ExporterOCI, Attrs: attrs, OutputDir: local.layoutDir})
	return opt, local.cleanup, nil
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

// localOutputs is where a release's --output files are written while it builds.
type localOutputs struct {
	layoutDir   string         // the OCI layout BuildKit exports to, or ""
	partial     []string       // every path written, under its temporary name
	afterExport []func() error // docker conversions, then scratch removal
}

// localOutputs plans the release's local outputs. BuildKit takes one OCI
// store export per solve, and its docker exporter cannot write an index:
// every local output comes from one OCI layout, the oci output's own folder
// when there is one, and docker tarballs are converted from it.
func (b *Builder) localOutputs(j *releaseJob) (*localOutputs, error) {
	lo := &localOutputs{}
	for _, out := range b.opts.outputs {
		if out.Type == "oci" {
			lo.layoutDir = outputPath(out, j.release.Name, j.multiOutput) + tmpSuffix
			lo.partial = append(lo.partial, lo.layoutDir)
		}
	}
	if len(b.opts.outputs) > 0 && lo.layoutDir == "" {
		scratch := filepath.Join(os.TempDir(), fmt.Sprintf("jetbake-layout-%s-%d", j.release.Name, os.Getpid()))
		lo.layoutDir = scratch
		lo.partial = append(lo.partial, scratch)
		lo.afterExport = append(lo.afterExport, func() error { return os.RemoveAll(scratch) })
	}
	for _, out := range b.opts.outputs {
		if out.Type != "docker" {
			continue
		}
		dest := outputPath(out, j.release.Name, j.multiOutput) + tmpSuffix
		lo.partial = append(lo.partial, dest)
		convert := func() error { return dockertar.Write(lo.layoutDir, dest, j.release.Tags) }
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

// cleanup finishes the outputs after a successful export and returns them,
// or removes them all after a failure.
func (lo *localOutputs) cleanup(ok bool) ([]string, error) {
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

// outputPath is where a release's local output goes: DEST itself for a single
// release, DEST/<release> (oci) or DEST-<release>.tar (docker) for several.
func outputPath(out Output, release string, multi bool) string {
	if !multi {
		return out.Dest
	}
	if out.Type == "oci" {
		return filepath.Join(out.Dest, release)
	}
	ext := filepath.Ext(out.Dest)
	return strings.TrimSuffix(out.Dest, ext) + "-" + release + ".tar"
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

// localsKey names the local folders of localMounts by their absolute paths.
func (j *releaseJob) localsKey(entrypointDir string) string {
	h := sha256.New()
	for _, dir := range []string{j.contextDir, j.dockerfileDir, entrypointDir} {
		abs, err := filepath.Abs(dir)
		if err != nil || dir == "" {
			abs = dir
		}
		fmt.Fprintf(h, "%s\x00", abs)
	}
	return "jetbake-" + hex.EncodeToString(h.Sum(nil))[:16]
}
