package labellerimage

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/moby/buildkit/client"
	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/exporter/containerimage/exptypes"
	gateway "github.com/moby/buildkit/frontend/gateway/client"
	"github.com/moby/buildkit/session"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/tonistiigi/fsutil"

	"github.com/jetbake/jetbake/builder/refs"
)

// Entrypoint is where the image holds jetbake, its entrypoint: the
// labelling DaemonSet gives only the arguments (fleet.Labeller).
const Entrypoint = "/usr/local/bin/jetbake"

// Cmd is the image's default command after Entrypoint: the labels of the
// host mounted at /host, on standard output (docker run -v /:/host:ro).
func Cmd() []string { return []string{"doctor", "--sysroot", "/host", "--node-labels", "-"} }

// Source is the project the image is made from, its source label.
const Source = "https://github.com/jetbake/jetbake"

// options are what Push is given besides the image and its binaries.
type options struct {
	epoch             time.Time
	status            chan *client.SolveStatus
	session           []session.Attachable
	noCache           bool
	version, revision string
}

// Option configures Push.
type Option func(*options)

// WithEpoch stamps every file, the configs and the history with t (the
// version's commit time, SOURCE_DATE_EPOCH), so that two pushes of the same
// binaries give the same digest. The default is 1970.
func WithEpoch(t time.Time) Option { return func(o *options) { o.epoch = t.UTC() } }

// WithStatus sends BuildKit's progress to ch, which the build closes.
func WithStatus(ch chan *client.SolveStatus) Option { return func(o *options) { o.status = ch } }

// WithSession adds session attachables, such as the registry credentials
// of the Docker config.
func WithSession(a ...session.Attachable) Option {
	return func(o *options) { o.session = append(o.session, a...) }
}

// WithNoCache builds the layers anew, without BuildKit's cache.
func WithNoCache(noCache bool) Option { return func(o *options) { o.noCache = noCache } }

// WithVersion labels the image with jetbake's version and commit.
func WithVersion(version, revision string) Option {
	return func(o *options) { o.version, o.revision = version, revision }
}

// Result is what was pushed.
type Result struct {
	// Ref is the reference pushed to; Digest the index's digest.
	Ref    string `json:"ref"`
	Digest string `json:"digest"`
	// Pinned is Ref with Digest, what a manifest names.
	Pinned string `json:"pinned"`
	// Binaries are the binaries the index holds, by platform.
	Binaries []Binary `json:"binaries"`
	// SourceDateEpoch is the time every file and config carries.
	SourceDateEpoch int64 `json:"source_date_epoch"`
}

// RefError is a reference that cannot be pushed to.
type RefError struct {
	// Ref is the reference as given; Err why it is not one.
	Ref string
	Err error
}

// Error names the reference and the form it needs.
func (e *RefError) Error() string {
	return fmt.Sprintf("%q is not an image reference to push to (%v): want REGISTRY/REPOSITORY:TAG, e.g. %s:v0.3.0", e.Ref, e.Err, Repository)
}

// BadInput marks the error as bad input.
func (e *RefError) BadInput() bool { return true }

// CheckRef fails with a *RefError unless ref is a tag reference.
func CheckRef(ref string) error {
	if _, err := name.NewTag(ref, name.StrictValidation); err != nil {
		return &RefError{Ref: ref, Err: err}
	}
	return nil
}

// Push builds the labeller image of bins (checked by Check) on the
// BuildKit daemon of c and pushes it to ref as one index with a manifest
// per binary's platform, each one layer holding the binary at Entrypoint.
// A registry Push reaches over plain HTTP (loopback, private addresses) is
// pushed to as BuildKit's exporter is told with registry.insecure, as
// `jetbake build --push` does.
func Push(ctx context.Context, c *client.Client, ref string, bins []Binary, opts ...Option) (*Result, error) {
	o := options{epoch: time.Unix(0, 0).UTC()}
	for _, opt := range opts {
		opt(&o)
	}
	if err := CheckRef(ref); err != nil {
		return nil, err
	}
	mounts := map[string]fsutil.FS{}
	for _, b := range bins {
		fs, err := fsutil.NewFS(filepath.Dir(b.Path))
		if err != nil {
			return nil, fmt.Errorf("the folder of %s: %w", b.Path, err)
		}
		mounts[localName(b.Arch)] = fs
	}
	epoch := strconv.FormatInt(o.epoch.Unix(), 10)
	attrs := map[string]string{"name": ref, "push": "true", "oci-mediatypes": "true", "source-date-epoch": epoch}
	if refs.PlainHTTP(ref) {
		attrs["registry.insecure"] = "true"
	}
	var platforms []string
	for _, b := range bins {
		platforms = append(platforms, b.Platform())
	}
	solveOpt := client.SolveOpt{
		LocalMounts: mounts,
		Session:     o.session,
		Exports:     []client.ExportEntry{{Type: client.ExporterImage, Attrs: attrs}},
		// The platforms the result holds: the exporter warns when the
		// requested ones (the daemon's by default) are not those.
		FrontendAttrs: map[string]string{"platform": strings.Join(platforms, ",")},
	}
	resp, err := c.Build(ctx, solveOpt, "jetbake", func(ctx context.Context, gc gateway.Client) (*gateway.Result, error) {
		return o.build(ctx, gc, bins)
	}, o.status)
	if err != nil {
		return nil, pushError(ref, err)
	}
	dgst := resp.ExporterResponse[exptypes.ExporterImageDigestKey]
	if dgst == "" {
		return nil, fmt.Errorf("push the labeller image %s: BuildKit reported no digest", ref)
	}
	return &Result{Ref: ref, Digest: dgst, Pinned: ref + "@" + dgst, Binaries: bins, SourceDateEpoch: o.epoch.Unix()}, nil
}

// localName is the session's folder of arch's binary.
func localName(arch string) string { return "jetbake-" + arch }

// build solves one image per binary and returns them as one
// multi-platform result, each with its config.
func (o options) build(ctx context.Context, gc gateway.Client, bins []Binary) (*gateway.Result, error) {
	res := gateway.NewResult()
	var ps exptypes.Platforms
	for _, b := range bins {
		p := ocispecs.Platform{OS: "linux", Architecture: b.Arch}
		def, err := o.layer(gc, b).Marshal(ctx, llb.Platform(p))
		if err != nil {
			return nil, err
		}
		r, err := gc.Solve(ctx, gateway.SolveRequest{Definition: def.ToPB()})
		if err != nil {
			return nil, err
		}
		ref, err := r.SingleRef()
		if err != nil {
			return nil, err
		}
		config, err := o.config(b)
		if err != nil {
			return nil, err
		}
		id := b.Platform()
		res.AddRef(id, ref)
		res.AddMeta(exptypes.ExporterImageConfigKey+"/"+id, config)
		ps.Platforms = append(ps.Platforms, exptypes.Platform{ID: id, Platform: p})
	}
	meta, err := json.Marshal(ps)
	if err != nil {
		return nil, err
	}
	res.AddMeta(exptypes.ExporterPlatformsKey, meta)
	for k, v := range o.labels() {
		res.AddMeta(exptypes.AnnotationIndexKey(k), []byte(v))
	}
	return res, nil
}

// layer is the image's one layer: the binary at Entrypoint, staged on
// scratch and then copied as a whole with the epoch on every file and
// folder (a copy sets a folder's time after its files are in), as
// jetbake's images lay out their own layer (package assembly).
func (o options) layer(gc gateway.Client, b Binary) llb.State {
	epoch := o.epoch
	local := llb.Local(localName(b.Arch), llb.SessionID(gc.BuildOpts().SessionID), llb.SharedKeyHint(localName(b.Arch)),
		llb.IncludePatterns([]string{filepath.Base(b.Path)}), llb.WithCustomName("jetbake for "+b.Platform()))
	root := &llb.ChownOpt{User: &llb.UserOpt{UID: 0}, Group: &llb.UserOpt{UID: 0}}
	stage := llb.Scratch().File(llb.Mkdir(filepath.Dir(Entrypoint), 0o755, llb.WithParents(true), llb.WithCreatedTime(epoch)).
		Copy(local, filepath.Base(b.Path), Entrypoint, &llb.CopyInfo{Mode: &llb.ChmodOpt{Mode: 0o755}, ChownOpt: root, CreatedTime: &epoch}),
		llb.WithCustomName("stage jetbake at "+Entrypoint))
	var noCache []llb.ConstraintsOpt
	if o.noCache {
		noCache = append(noCache, llb.IgnoreCache)
	}
	return llb.Scratch().File(llb.Copy(stage, "/", "/", &llb.CopyInfo{CopyDirContentsOnly: true, CreatedTime: &epoch}),
		append(noCache, llb.WithCustomName("stamp the layer with the commit's time"))...)
}

// config is the OCI image config of b's image: jetbake as the entrypoint,
// running the labels of /host by default, created at the epoch.
func (o options) config(b Binary) ([]byte, error) {
	created := o.epoch
	img := ocispecs.Image{
		Created:  &created,
		Platform: ocispecs.Platform{OS: "linux", Architecture: b.Arch},
		Config: ocispecs.ImageConfig{
			Entrypoint: []string{Entrypoint},
			Cmd:        Cmd(),
			Env:        []string{"PATH=" + filepath.Dir(Entrypoint)},
			Labels:     o.labels(),
		},
		RootFS: ocispecs.RootFS{Type: "layers"},
		History: []ocispecs.History{{Created: &created, CreatedBy: "COPY jetbake " + Entrypoint,
			Comment: "jetbake fleet --push-labeller"}},
	}
	return json.Marshal(img)
}

// labels are the image's labels, and its index's annotations.
func (o options) labels() map[string]string {
	l := map[string]string{
		ocispecs.AnnotationTitle:       "jetbake-labeller",
		ocispecs.AnnotationDescription: "jetbake doctor, which labels each Jetson node with what jetbake's workloads are placed by",
		ocispecs.AnnotationSource:      Source,
		ocispecs.AnnotationLicenses:    "Apache-2.0",
	}
	if o.version != "" {
		l[ocispecs.AnnotationVersion] = o.version
	}
	if o.revision != "" {
		l[ocispecs.AnnotationRevision] = o.revision
	}
	return l
}

// pushError is the push's failure: a registry whose name did not resolve
// (the daemon's error reaches jetbake as text) in one sentence with its fix,
// as build says it of a base's registry; any other error as BuildKit gave it.
func pushError(ref string, err error) error {
	if described := refs.DescribeTextFault(err); described != err {
		return fmt.Errorf("push the labeller image %s: %w", ref, described)
	}
	return fmt.Errorf("make and push the labeller image %s: %w", ref, err)
}
