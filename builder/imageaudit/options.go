package imageaudit

import (
	"github.com/google/go-containerregistry/pkg/authn"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

// Option changes how an image is opened and audited.
type Option func(*options)

type options struct {
	platform v1.Platform
	mirrors  refs.Mirrors
	remote   []remote.Option
	tempDir  string
	memLimit int64
	maxFile  int64
	limits   fatbin.Limits
	table    *computecap.Table
	progress func(string)
	gpusFor  func(path string, gpus []computecap.Capability) []computecap.Capability
}

func newOptions(opts []Option) options {
	o := options{platform: v1.Platform{OS: "linux", Architecture: "arm64"}, memLimit: 16 << 20, maxFile: 64 << 30,
		remote: []remote.Option{remote.WithAuthFromKeychain(authn.DefaultKeychain)}, table: computecap.DefaultTable(),
		progress: func(string) {}}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// WithPlatform sets the platform of a multi-platform image to audit;
// default linux/arm64, every Jetson's.
func WithPlatform(p v1.Platform) Option { return func(o *options) { o.platform = p } }

// WithMirrors reads registries through mirrors.
func WithMirrors(m refs.Mirrors) Option { return func(o *options) { o.mirrors = m } }

// WithRemoteOptions replaces the registry options (default: credentials
// from the Docker config and its helpers).
func WithRemoteOptions(opts ...remote.Option) Option { return func(o *options) { o.remote = opts } }

// WithTempDir sets where ELF files too large to hold in memory are
// spooled while they are read; default the system's.
func WithTempDir(dir string) Option { return func(o *options) { o.tempDir = dir } }

// WithMemoryLimit sets the largest ELF file read in memory (default 16
// MiB); larger ones are spooled to a temporary file, so that memory stays
// bounded whatever the layer and file sizes.
func WithMemoryLimit(n int64) Option { return func(o *options) { o.memLimit = n } }

// WithMaxFile sets the largest ELF file read (default 64 GiB); a larger
// one is reported, not read.
func WithMaxFile(n int64) Option { return func(o *options) { o.maxFile = n } }

// WithTable judges with another facts table (a future Jetson).
func WithTable(t *computecap.Table) Option { return func(o *options) { o.table = t } }

// WithProgress receives progress lines on long work.
func WithProgress(f func(line string)) Option { return func(o *options) { o.progress = f } }

// WithGPUsFor chooses, per file, which of the audited GPUs it must serve:
// a router binary built for one SM serves that SM only. Default: every GPU.
func WithGPUsFor(f func(path string, gpus []computecap.Capability) []computecap.Capability) Option {
	return func(o *options) { o.gpusFor = f }
}
