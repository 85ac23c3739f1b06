// Package assembly lays out a Jetson image in LLB once its parts are
// built: jetbake's layer (the entrypoint and the probes) and the release's
// (its router binaries and image.json) over the runtime image, each stamped
// with the commit's time, and the one-platform result the exporter writes
// as an index with the image's annotations.
package assembly

import (
	"encoding/json"
	"fmt"
	"path"
	"time"

	"github.com/containerd/platforms"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/solver/pb"
	"github.com/moby/buildkit/util/apicaps"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

// Router is one router binary of a release: the stage that built it and
// where the image holds it.
type Router struct {
	// Stage is the router stage's result; Output the binary's path in it.
	Stage  llb.State
	Output string
	// Path is the binary's path in the image.
	Path string
}

// Layout is what an image is assembled from.
type Layout struct {
	// Image is the runtime image: the runtime base, or the runtime stage
	// built on it; Base is that stage's runtime base, nil without a stage.
	Image llb.State
	Base  *llb.State
	// Tools is the session's folder of jetbake's binaries; Binaries their
	// paths in the image (the entrypoint, the CUDA probe, the evidence
	// probe), each taken from the folder by its base name.
	Tools    llb.State
	Binaries []string
	// Routers are the release's router binaries, none for an app (whose
	// command is in its stage); SMs names the release's SM targets.
	Routers []Router
	SMs     string
	App     bool
	// Description is image.json's content.
	Description []byte
	// Epoch is the commit's time, on every file and folder of the layers.
	Epoch time.Time
	// NoCache rebuilds the layers.
	NoCache bool
	// Caps are the daemon's LLB capabilities.
	Caps apicaps.CapSet
}

// Layers lays out the runtime image: the runtime base plus two layers,
// first jetbake's own (the entrypoint and the two probes, the same bytes
// in every image of every release, so BuildKit compresses and pushes it
// once and a Jetson pulls it once), then the release's (every router
// binary and image.json). Each layer is one file operation on scratch
// (Stage): its files are put in place and then copied as a whole with the
// commit's time on every file and folder, inside the same operation (a
// copy sets a folder's time after its files are in, so adding files does
// not leave the build's time on it). They are reproducible as built and
// the exporter need not rewrite timestamps (which BuildKit redoes,
// uncached, on every export). They are merged onto the base rather than
// copied into it: the exporter reuses the base's layers and the staged
// layers as they are, and the base is never unpacked for the copy.
// Daemons without MergeOp get the copies into the base.
// Vertex names carry no release: they end up in the image's history, and
// a vertex shared by two releases must give both the same bytes; the
// progress display adds the release to what it shows.
func Layers(l Layout) llb.State {
	epoch := l.Epoch
	var noCache []llb.ConstraintsOpt
	if l.NoCache {
		noCache = append(noCache, llb.IgnoreCache)
	}
	tool := Stage(toolFiles(l), epoch, append(noCache, llb.WithCustomName("add the entrypoint, the CUDA probe and the evidence probe"))...)
	name := fmt.Sprintf("add the routers (%s) and %s", l.SMs, imagespec.Path)
	if l.App {
		name = "add " + imagespec.Path
	}
	release := Stage(releaseFiles(l), epoch, append(noCache, llb.WithCustomName(name))...)
	st := l.Image
	if l.Caps.Supports(pb.CapMergeOp) == nil {
		layers := []llb.State{st, tool, release}
		if l.Base != nil && l.Caps.Supports(pb.CapDiffOp) == nil {
			// The runtime stage's own changes, stamped like jetbake's layers:
			// its RUN steps leave the time of the build on every file they
			// write. (A file the stage deleted from the base stays.)
			changes := llb.Diff(*l.Base, st, llb.WithCustomName("the runtime stage's changes"))
			stamped := llb.Scratch().File(stamp(changes, epoch), append(noCache, llb.WithCustomName("stamp the runtime stage's changes with the commit's time"))...)
			layers = []llb.State{*l.Base, stamped, tool, release}
		}
		return llb.Merge(layers, llb.WithCustomName("merge onto the runtime base"))
	}
	return st.File(stamp(tool, epoch), append(noCache, llb.WithCustomName("copy the entrypoint, the CUDA probe and the evidence probe into the image"))...).
		File(stamp(release, epoch), append(noCache, llb.WithCustomName("copy the routers and image.json into the image"))...)
}

// Stage is one layer's files, put in place by files (a chain of file
// actions on scratch) and then copied as a whole with epoch on every file
// and folder, all in one file operation: one step, one snapshot.
func Stage(files *llb.FileAction, epoch time.Time, opts ...llb.ConstraintsOpt) llb.State {
	return llb.Scratch().File(stamp(files.WithState(llb.Scratch()), epoch), opts...)
}

// stamp copies everything of in with epoch on every file and folder.
func stamp(in llb.CopyInput, epoch time.Time) *llb.FileAction {
	return llb.Copy(in, "/", "/", &llb.CopyInfo{CopyDirContentsOnly: true, CreatedTime: &epoch})
}

// toolFiles puts jetbake's binaries in place, each taken from the session's
// folder by its base name, with a fixed mode: the files' modes on the
// building machine follow its umask.
func toolFiles(l Layout) *llb.FileAction {
	created := llb.WithCreatedTime(l.Epoch)
	exe := &llb.CopyInfo{Mode: &llb.ChmodOpt{Mode: 0o755}, CreatedTime: &l.Epoch}
	fa := llb.Mkdir(path.Dir(l.Binaries[0]), 0o755, llb.WithParents(true), created)
	dirs := map[string]bool{path.Dir(l.Binaries[0]): true}
	for _, b := range l.Binaries {
		if dir := path.Dir(b); !dirs[dir] {
			dirs[dir] = true
			fa = fa.Mkdir(dir, 0o755, llb.WithParents(true), created)
		}
		fa = fa.Copy(l.Tools, path.Base(b), b, exe)
	}
	return fa
}

// releaseFiles puts image.json and the release's routers in place.
func releaseFiles(l Layout) *llb.FileAction {
	created := llb.WithCreatedTime(l.Epoch)
	fa := llb.Mkdir(path.Dir(imagespec.Path), 0o755, llb.WithParents(true), created).
		Mkfile(imagespec.Path, 0o644, l.Description, created)
	dirs := map[string]bool{path.Dir(imagespec.Path): true}
	for _, r := range l.Routers {
		if dir := path.Dir(r.Path); !dirs[dir] {
			dirs[dir] = true
			fa = fa.Mkdir(dir, 0o755, llb.WithParents(true), created)
		}
		// FollowSymlinks: a router output that is a link puts the file it
		// points to in the image, the file the smoke run mounts and runs.
		fa = fa.Copy(r.Stage, r.Output, r.Path, &llb.CopyInfo{CreatedTime: &l.Epoch, FollowSymlinks: true})
	}
	return fa
}

// Result wraps ref, the image of platform, as a one-platform
// multi-platform result, so that the exporter writes an index, and puts
// annotations on the index and the manifest through the result's
// metadata, which every image exporter reads.
func Result(ref gateway.Reference, platform ocispecs.Platform, config []byte, annotations map[string]string) (*gateway.Result, error) {
	id := platforms.Format(platform)
	ps, err := json.Marshal(exptypes.Platforms{Platforms: []exptypes.Platform{{ID: id, Platform: platform}}})
	if err != nil {
		return nil, err
	}
	res := gateway.NewResult()
	res.AddRef(id, ref)
	res.AddMeta(exptypes.ExporterImageConfigKey+"/"+id, config)
	res.AddMeta(exptypes.ExporterPlatformsKey, ps)
	for k, v := range annotations {
		res.AddMeta(exptypes.AnnotationIndexKey(k), []byte(v))
		res.AddMeta(exptypes.AnnotationManifestKey(nil, k), []byte(v))
	}
	return res, nil
}
