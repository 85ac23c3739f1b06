package imagebuild

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild/bakekeys"
	"github.com/jetbake/jetbake/builder/imagebuild/buildaudit"
	"github.com/jetbake/jetbake/builder/imagebuild/dockercheck"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/imagebuild/smoke"
	"github.com/jetbake/jetbake/builder/inputfile"
)

// Outcome is how a release's build ended.
type Outcome string

// Outcomes of a release.
const (
	// Succeeded: built, pushed or written, and tagged where tags were asked for.
	Succeeded Outcome = "succeeded"
	// Failed: the build failed; nothing was tagged or written for it.
	Failed Outcome = "failed"
	// Untagged: built and pushed by digest, but not tagged because another release failed.
	Untagged Outcome = "built-not-tagged"
	// Skipped: not started because another release failed first and --continue-on-error was not given.
	Skipped Outcome = "skipped"
)

// Report is what a build did, per release; `--metadata-file` writes it as JSON.
type Report struct {
	// Revision is the source revision the images were built from.
	Revision string `json:"revision,omitempty"`
	// SourceDateEpoch is the timestamp every file and config carries.
	SourceDateEpoch int64 `json:"source_date_epoch"`
	// Releases are the selected releases in plan order.
	Releases []ReleaseReport `json:"releases"`
	// TagError says why tagging failed after every release was built, and
	// what was rolled back.
	TagError string `json:"tag_error,omitempty"`
	// Timings says where the build's time went, phase by phase.
	Timings *progress.Timings `json:"timings,omitempty"`
	// Daemons are the BuildKit nodes the build ran on, with their versions.
	Daemons []Daemon `json:"daemons,omitempty"`
}

// Daemon is a BuildKit node and the version it reports.
type Daemon struct {
	// Node is the node's name.
	Node string `json:"node"`
	// Version is buildkitd's version, e.g. "v0.34.2".
	Version string `json:"buildkit_version,omitempty"`
	// Revision is buildkitd's source revision.
	Revision string `json:"buildkit_revision,omitempty"`
}

// ReleaseReport is one release's result.
type ReleaseReport struct {
	// Name is the release name.
	Name string `json:"name"`
	// Kind is "app" for an app's release; routers leave it out.
	Kind string `json:"kind,omitempty"`
	// Outcome is how it ended.
	Outcome Outcome `json:"outcome"`
	// Facts is "declared" when the release rests on facts its matrix
	// declares rather than on jetbake's table (io.jetbake.facts).
	Facts string `json:"facts,omitempty"`
	// Error is the failure, when it failed.
	Error string `json:"error,omitempty"`
	// Digest is the image index digest, when built.
	Digest string `json:"digest,omitempty"`
	// Repository is where it was pushed by digest, when pushed.
	Repository string `json:"repository,omitempty"`
	// Tags are the references put on the digest (empty unless every release succeeded).
	Tags []string `json:"tags"`
	// Bases are the build and runtime bases as built from, with digests where known.
	Bases []Base `json:"bases"`
	// RouterSource is the commit the router was built from, when its
	// context is a git repository.
	RouterSource *RouterSource `json:"router_source,omitempty"`
	// Targets are the SM targets, as "8.7".
	Targets []string `json:"sm_targets"`
	// Annotations are the manifest and index annotations.
	Annotations map[string]string `json:"annotations,omitempty"`
	// Binaries are what the smoke run read from each router binary: its
	// DT_NEEDED libraries and its loader.
	Binaries []smoke.Binary `json:"binaries,omitempty"`
	// Audit is the build-time audit of the GPU code of the routers and of
	// the libraries they load, per SM target (see Audit).
	Audit []buildaudit.Audit `json:"audit,omitempty"`
	// Remembered is set when the release's smoke run and audit did not
	// run: Binaries and Audit are their passing verdict of an earlier build
	// on the same routers, runtime image and jetbake (see WithVerdicts).
	Remembered *RememberedVerdict `json:"remembered_verdict,omitempty"`
	// Findings are the warnings of BuildKit's Dockerfile checks on the
	// router's Dockerfile, per SM target, found while it was built.
	Findings []dockercheck.Finding `json:"findings,omitempty"`
	// Outputs are the local files or folders written for it.
	Outputs []string `json:"outputs,omitempty"`
	// DurationSeconds is the build's wall time.
	DurationSeconds float64 `json:"duration_seconds"`
	// Node is the BuildKit node that built it.
	Node string `json:"node,omitempty"`
	// BuildPlatform is the node's native platform, e.g. "linux/amd64".
	BuildPlatform string `json:"build_platform,omitempty"`
	// Emulated says whether the routers compiled under emulation: no
	// worker of the node runs linux/arm64 natively. Unset when the build
	// did not start.
	Emulated *bool `json:"emulated,omitempty"`
	// BuildPath is the router stage's path on that node: native, cross
	// (in the release's cross build base, on linux/amd64) or qemu.
	BuildPath string `json:"build_path,omitempty"`
	// CrossBuildBase is, on the cross path, what the routers compiled in:
	// the prebuilt image, or "the base RECIPE builds FROM IMAGE".
	CrossBuildBase string `json:"cross_build_base,omitempty"`
	// Retries are the earlier attempts on nodes that failed, with the reason.
	Retries []Retry `json:"retries,omitempty"`

	duration time.Duration
}

// Retry is an attempt that failed because its node did, not its build.
type Retry struct {
	// Node is the node that failed.
	Node string `json:"node"`
	// Reason is the error the node gave.
	Reason string `json:"reason"`
}

// Base is a base image of a release.
type Base struct {
	// Role is "build" or "runtime", or "app" for an app's framework
	// container.
	Role string `json:"role"`
	// Ref is the reference as written in the matrix.
	Ref string `json:"ref"`
	// Resolved is the reference actually pulled (mirror and lock applied).
	Resolved string `json:"resolved"`
	// Digest is the digest the build used, when known.
	Digest string `json:"digest,omitempty"`
	// Flavour is the base's CUDA build as read from the image: "tegra",
	// "sbsa", or "unknown" when it holds no marker of either; empty when
	// the base was not read (the release did not start).
	Flavour string `json:"flavour,omitempty"`
	// CUDA is the base's CUDA version as read from the image ("12.6.11"),
	// "none" when it names none; empty when not read.
	CUDA string `json:"cuda,omitempty"`
	// ReadFrom names where the flavour and CUDA were read: files of the
	// image ("/usr/local/cuda-12.6/version.json") or "config: CUDA_VERSION".
	ReadFrom []string `json:"read_from,omitempty"`
}

// setContents records what the base was read to hold; nil records nothing.
func (b *Base) setContents(info *baseinfo.Info) {
	if info == nil {
		return
	}
	b.Flavour, b.CUDA, b.ReadFrom = string(info.Flavour), info.CUDA, slices.Clone(info.From)
	if b.Flavour == "" {
		b.Flavour = "unknown"
	}
	if b.CUDA == "" {
		b.CUDA = "none"
	}
}

// Failed reports whether any release did not succeed.
func (r *Report) Failed() bool {
	for _, rel := range r.Releases {
		if rel.Outcome != Succeeded {
			return true
		}
	}
	return false
}

// Err summarizes the failures, or is nil when every release succeeded.
func (r *Report) Err() error {
	var failed []string
	var notDone []string
	for _, rel := range r.Releases {
		switch rel.Outcome {
		case Succeeded:
		case Failed:
			failed = append(failed, fmt.Sprintf("%s: %s", rel.Name, rel.Error))
		default:
			notDone = append(notDone, rel.Name+" ("+string(rel.Outcome)+")")
		}
	}
	if len(failed)+len(notDone) == 0 {
		return nil
	}
	if r.TagError != "" {
		return errors.New("every release was built and pushed by digest, but tagging failed: " + r.TagError)
	}
	msg := fmt.Sprintf("%d of %d releases failed", len(failed), len(r.Releases))
	if len(failed) > 0 {
		msg += ":\n  " + strings.Join(failed, "\n  ")
	}
	if len(notDone) > 0 {
		msg += "\nnot tagged: " + strings.Join(notDone, ", ")
	}
	return errors.New(msg + "\nno tag was put on for this run")
}

// WriteFile writes the report as indented JSON to path, atomically: a reader
// never sees half a file.
func (r *Report) WriteFile(path string) error {
	data, err := r.MarshalWithBakeKeys()
	if err != nil {
		return err
	}
	return inputfile.WriteFile(path, append(data, '\n'), 0o644)
}

// MarshalWithBakeKeys returns the report as JSON with, beside jetbake's own
// keys, one object per built release under its name holding the keys of
// `docker buildx bake --metadata-file` (containerimage.digest, image.name,
// containerimage.descriptor), so that pipelines written for bake read it.
func (r *Report) MarshalWithBakeKeys() ([]byte, error) {
	targets := make([]bakekeys.Target, len(r.Releases))
	for i, rel := range r.Releases {
		targets[i] = bakekeys.Target{Name: rel.Name, Digest: rel.Digest, Tags: rel.Tags, Repository: rel.Repository, Node: rel.Node}
	}
	return bakekeys.Marshal(r, targets)
}

func epochTime(epoch int64) time.Time { return time.Unix(epoch, 0).UTC() }
