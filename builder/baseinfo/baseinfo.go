// Package baseinfo reads what CUDA a base image holds without running it:
// its version (CUDA's version.json, else the config's CUDA_VERSION) and its
// flavour (the CUDA tree's targets folder, aarch64-linux for Tegra or
// sbsa-linux for SBSA, else /etc/nv_tegra_release for an L4T image). It
// streams the linux/arm64 image's layers from the top, honours whiteouts,
// keeps only those few files and stops as soon as they are found; nothing
// is unpacked to disk.
package baseinfo

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/renameio/v2"

	"github.com/jetbake/jetbake/computecap"
)

// DefaultLimit is how many bytes of file content a read goes through
// before it stops with what it found (Info.Partial): more than the largest
// NVIDIA base image holds.
const DefaultLimit int64 = 32 << 30

// Info is what a base image holds, as read from it.
type Info struct {
	// Digest is the digest of the reference read: a multi-platform index's
	// for a tag such as nvidia/cuda's, else the image manifest's.
	Digest string `json:"digest"`
	// Flavour is the CUDA build: "tegra" or "sbsa"; "" when no marker was
	// found.
	Flavour computecap.Flavour `json:"flavour,omitempty"`
	// CUDA is the CUDA version as the image writes it, e.g. "12.6.3"; ""
	// when the image names none.
	CUDA string `json:"cuda,omitempty"`
	// L4T is the L4T version of /etc/nv_tegra_release, when the image has it.
	L4T string `json:"l4t,omitempty"`
	// From names where each fact was read: "/usr/local/cuda-12.6/version.json",
	// "config: CUDA_VERSION", "/usr/local/cuda-12.6/targets/aarch64-linux",
	// "/etc/nv_tegra_release".
	From []string `json:"from,omitempty"`
	// Partial is set when the read stopped at its limit before finding
	// every marker.
	Partial bool `json:"partial,omitempty"`
}

// CUDAVersion is the CUDA version's major and minor; false when the image
// names none.
func (i Info) CUDAVersion() (computecap.CUDAVersion, bool) {
	v, err := computecap.ParseCUDAVersion(i.CUDA)
	return v, err == nil
}

// Describe writes what was read for messages: "Tegra CUDA 12.6.3", "SBSA
// CUDA 13.0.1", "CUDA 12.6 of no known flavour", "Tegra without CUDA" or
// "no CUDA".
func (i Info) Describe() string {
	switch {
	case i.Flavour != "" && i.CUDA != "":
		return i.Flavour.Name() + " CUDA " + i.CUDA
	case i.CUDA != "":
		return "CUDA " + i.CUDA + " of no known flavour"
	case i.Flavour != "":
		return i.Flavour.Name() + " without CUDA"
	}
	return "no CUDA"
}

// Same reports whether two reads found the same flavour and CUDA.
func (i Info) Same(o Info) bool { return i.Flavour == o.Flavour && i.CUDA == o.CUDA }

// Reader reads base images from their registries.
type Reader struct {
	remote   []remote.Option
	cacheDir string
	limit    int64
}

// Option configures a Reader.
type Option func(*Reader)

// WithRemoteOptions sets the go-containerregistry options of every request
// (credentials, transport).
func WithRemoteOptions(opts ...remote.Option) Option {
	return func(r *Reader) { r.remote = opts }
}

// WithCacheDir keeps what was read in dir, by digest: the contents of a
// digest never change, so a later read of the same digest only resolves
// the reference. "" keeps nothing (the default).
func WithCacheDir(dir string) Option { return func(r *Reader) { r.cacheDir = dir } }

// DefaultCacheDir is the folder of the reads that WithCacheDir keeps, in
// the user's cache folder; "" when there is none (nothing is kept).
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "jetbake", "bases")
}

// WithLimit stops a read after limit bytes of file content (DefaultLimit).
func WithLimit(limit int64) Option { return func(r *Reader) { r.limit = limit } }

// New returns a Reader.
func New(opts ...Option) *Reader {
	r := &Reader{limit: DefaultLimit}
	for _, o := range opts {
		o(r)
	}
	return r
}

// arm64 is the platform of every Jetson image.
var arm64 = v1.Platform{OS: "linux", Architecture: "arm64"}

// Read reads the linux/arm64 image of ref, a reference as it is fetched
// (mirror and pin applied). go-containerregistry reaches loopback and
// private registries over plain HTTP by itself (name.Registry.Scheme).
func (r *Reader) Read(ctx context.Context, ref string) (Info, error) {
	parsed, err := name.ParseReference(ref)
	if err != nil {
		return Info{}, fmt.Errorf("read base %s: %w", ref, err)
	}
	opts := append([]remote.Option{remote.WithContext(ctx), remote.WithPlatform(arm64)}, r.remote...)
	desc, err := remote.Get(parsed, opts...)
	if err != nil {
		return Info{}, fmt.Errorf("read base %s: %w", ref, err)
	}
	if info, ok := r.cached(desc.Digest); ok {
		return info, nil
	}
	img, err := desc.Image()
	if err != nil {
		return Info{}, fmt.Errorf("read base %s: its linux/arm64 image: %w", ref, err)
	}
	info, err := ReadImage(img, r.limit)
	if err != nil {
		return Info{}, fmt.Errorf("read base %s: %w", ref, err)
	}
	info.Digest = desc.Digest.String()
	r.store(desc.Digest, info)
	return info, nil
}

// ReadImage reads img's CUDA, going through at most limit bytes of file
// content. Info.Digest is left empty.
func ReadImage(img v1.Image, limit int64) (Info, error) {
	cf, err := img.ConfigFile()
	if err != nil {
		return Info{}, fmt.Errorf("config: %w", err)
	}
	s, partial, err := scanImage(img, limit)
	if err != nil {
		return Info{}, err
	}
	info, err := s.info(cf.Config.Env)
	info.Partial = partial
	return info, err
}

// cacheFile is where the read of digest d is kept; the name carries the
// format's version.
func (r *Reader) cacheFile(d v1.Hash) string {
	return filepath.Join(r.cacheDir, "v1-"+d.Algorithm+"-"+d.Hex+".json")
}

// cached returns an earlier read of digest d.
func (r *Reader) cached(d v1.Hash) (Info, bool) {
	if r.cacheDir == "" {
		return Info{}, false
	}
	data, err := os.ReadFile(r.cacheFile(d))
	if err != nil {
		return Info{}, false
	}
	var info Info
	if json.Unmarshal(data, &info) != nil || info.Digest != d.String() || info.Partial {
		return Info{}, false
	}
	return info, true
}

// store keeps a complete read; a cache that cannot be written is only
// slower.
func (r *Reader) store(d v1.Hash, info Info) {
	if r.cacheDir == "" || info.Partial || strings.ContainsAny(d.Hex, "/\\.") {
		return
	}
	data, err := json.Marshal(info)
	if err != nil || os.MkdirAll(r.cacheDir, 0o755) != nil {
		return
	}
	_ = renameio.WriteFile(r.cacheFile(d), data, 0o644)
}
