package standin

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/jetbake/jetbake/builder/internal/aptrepo"
)

// RecipeRelease is a release whose cross build base the test bed builds
// from the recipe (dockerfiles/Dockerfile-cross-base).
type RecipeRelease struct {
	// Name is the release's name in the matrix, "jetpack6.2": the key of
	// RecipeBed.Releases and the folder of its repositories.
	Name string
	// Args are the recipe's build arguments of the release from the table
	// of facts (computecap's RecipeArgs): CUDA_DEVEL_IMAGE
	// ("nvcr.io/nvidia/cuda:12.6.3-devel-ubuntu22.04"), UBUNTU_CODENAME,
	// CUDA_CROSS_PACKAGE and CROSS_GCC; the recipe's defaults where absent.
	Args map[string]string
	// Fault, when set, serves the release's repositories broken as a user
	// may meet them (RecipeFault).
	Fault RecipeFault
}

// RecipeFault is a way the release's repositories are broken.
type RecipeFault string

const (
	// FaultPortsWrongKey signs the ports archive with a key that is not
	// the one the devel image's ubuntu-archive-keyring holds: apt-get
	// update refuses it ("NO_PUBKEY …", "The repository '…' is not signed.").
	FaultPortsWrongKey RecipeFault = "ports-wrong-key"
	// FaultPortsNoSSL serves a ports archive without libssl-dev:arm64 (and
	// the OpenSSL it depends on): apt-get install fails with "Unable to
	// locate package libssl-dev:arm64".
	FaultPortsNoSSL RecipeFault = "ports-no-libssl-dev"
)

// RecipeServed is what a matrix copy names for one release.
type RecipeServed struct {
	// DevelImage is the stand-in devel image as pushed,
	// REGISTRY/nvidia/cuda:12.6.3-devel-ubuntu22.04 (the image the table's
	// CUDA_DEVEL_IMAGE names, in the test registry, as the other stand-in
	// bases are): the release's CUDA_DEVEL_IMAGE.
	DevelImage string
	// BuildArgs are UBUNTU_ARCHIVE, UBUNTU_PORTS and CUDA_CROSS_REPO, the
	// release's repositories on 127.0.0.1: the matrix copy's
	// cross_build_base.build_args.
	BuildArgs map[string]string
}

// RecipeBed is the stand-in of what a build of the recipe reaches: the
// stand-in devel images in the registry and the repositories on 127.0.0.1.
type RecipeBed struct {
	// Releases are what each release's build names, by RecipeRelease.Name.
	Releases map[string]RecipeServed

	server *aptrepo.Server
	dir    string
}

// Close stops the repositories and removes their folder.
func (b *RecipeBed) Close() error {
	err := b.server.Close()
	return errors.Join(err, os.RemoveAll(b.dir))
}

// RecipeBedOption is an option of CrossRecipeBed.
type RecipeBedOption func(*recipeBedOptions)

type recipeBedOptions struct{ addr string }

// WithRepoAddr serves the repositories on addr ("127.0.0.1:PORT", e.g.
// RecipeBed.Addr of an earlier run) instead of a free port: the build
// arguments, and so BuildKit's cache of the recipe's RUN step in a kept
// buildkitd, come out the same.
func WithRepoAddr(addr string) RecipeBedOption { return func(o *recipeBedOptions) { o.addr = addr } }

// Addr is the repositories' address, "127.0.0.1:PORT" (WithRepoAddr).
func (b *RecipeBed) Addr() string { return strings.TrimPrefix(b.server.URL, "http://") }

// recipeKeys are the test keys of the bed's repositories and the keyrings
// the stand-in devel images carry.
type recipeKeys struct {
	ubuntu, cuda, wrong  *aptrepo.Key
	ubuntuRing, cudaRing []byte
}

func newRecipeKeys() (recipeKeys, error) {
	var k recipeKeys
	var err error
	for _, p := range []struct {
		key  **aptrepo.Key
		name string
	}{{&k.ubuntu, "jetbake test bed: Ubuntu archive"}, {&k.cuda, "jetbake test bed: CUDA repository"},
		{&k.wrong, "jetbake test bed: not the archive's key"}} {
		if *p.key, err = aptrepo.NewKey(p.name); err != nil {
			return k, err
		}
	}
	if k.ubuntuRing, err = k.ubuntu.Keyring(); err != nil {
		return k, err
	}
	k.cudaRing, err = k.cuda.Keyring()
	return k, err
}

// CrossRecipeBed pushes the stand-in nvidia/cuda devel image of each
// release to registry (host:port, as Push pushes the other stand-in bases:
// nvcr.io's repository path under registry) and serves each release's
// repositories on 127.0.0.1 until Close or ctx ends: its Ubuntu archive
// (amd64 and all; suites CODENAME, -updates and -security, components main
// and universe) and ports archive (arm64), holding Debian's real packages
// that the recipe's apt-get line installs (`make deps`: Debian 12 for
// jammy, 13 for noble) and the stand-in curl, and NVIDIA's cross repository
// (flat) with the release's cross package, each signed with the key whose
// keyring the devel image carries where the recipe's defaults name it.
// A release's build of the recipe takes CUDA_DEVEL_IMAGE = DevelImage and
// BuildArgs over its table arguments; nothing else of the recipe changes.
// Building the images and packages the first time takes a few minutes
// (cached in k.Cache after). An error names what is missing and how to get
// it (`make deps`). Call it as
//
//	bed, err := kit.CrossRecipeBed(ctx, env.Registry, []standin.RecipeRelease{{Name: "jetpack6.2", Args: args}})
//	defer bed.Close()
//	served := bed.Releases["jetpack6.2"] // served.DevelImage, served.BuildArgs
//
// with args the table's recipe arguments of the release
// (computecap's RecipeArgs).
func (k Kit) CrossRecipeBed(ctx context.Context, registry string, releases []RecipeRelease, opts ...RecipeBedOption) (*RecipeBed, error) {
	o := recipeBedOptions{addr: "127.0.0.1:0"}
	for _, opt := range opts {
		opt(&o)
	}
	keys, err := newRecipeKeys()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "jetbake-recipe-repos-")
	if err != nil {
		return nil, err
	}
	bed := &RecipeBed{Releases: map[string]RecipeServed{}, dir: dir}
	paths := map[string][3]string{}
	pushed := map[string]string{}
	for _, rel := range releases {
		r, err := parseRecipeArgs(rel.Args)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("release %s: %w", rel.Name, err)
		}
		ref, ok := pushed[r.develTag]
		if !ok {
			if ref, err = k.pushDevel(ctx, registry, r, keys); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("release %s: %w", rel.Name, err)
			}
			pushed[r.develTag] = ref
		}
		p, err := k.writeRecipeRepos(ctx, dir, rel, r, keys)
		if err != nil {
			os.RemoveAll(dir)
			return nil, fmt.Errorf("release %s: %w", rel.Name, err)
		}
		paths[rel.Name] = p
		bed.Releases[rel.Name] = RecipeServed{DevelImage: ref}
	}
	srv, err := aptrepo.ServeAt(ctx, dir, o.addr)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	bed.server = srv
	for n, p := range paths {
		s := bed.Releases[n]
		s.BuildArgs = map[string]string{"UBUNTU_ARCHIVE": srv.URL + "/" + p[0], "UBUNTU_PORTS": srv.URL + "/" + p[1],
			"CUDA_CROSS_REPO": srv.URL + "/" + p[2]}
		bed.Releases[n] = s
	}
	return bed, nil
}

// pushDevel pushes r's stand-in devel image as a one-platform index (as
// NVIDIA's multi-arch nvidia/cuda tags are) and returns its reference.
func (k Kit) pushDevel(ctx context.Context, registry string, r recipeRelease, keys recipeKeys) (string, error) {
	img, err := k.develImage(r, keys)
	if err != nil {
		return "", err
	}
	ref := registry + "/nvidia/cuda:" + r.develTag
	dst, err := name.ParseReference(ref, name.Insecure)
	if err != nil {
		return "", err
	}
	platform := v1.Platform{OS: "linux", Architecture: "amd64"}
	idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &platform}})
	if err := remote.WriteIndex(dst, idx, remote.WithContext(ctx)); err != nil {
		return "", fmt.Errorf("push the stand-in devel image %s: %w", ref, err)
	}
	return ref, nil
}

// writeRecipeRepos writes rel's three repositories under dir and returns
// their paths: the Ubuntu archive, the ports archive, NVIDIA's cross
// repository.
func (k Kit) writeRecipeRepos(ctx context.Context, dir string, rel RecipeRelease, r recipeRelease, keys recipeKeys) ([3]string, error) {
	paths := [3]string{rel.Name + "/ubuntu", rel.Name + "/ubuntu-ports", rel.Name + "/cuda-cross"}
	deps, err := k.recipeDeps(r.codename)
	if err != nil {
		return paths, err
	}
	debs, err := filepath.Glob(filepath.Join(deps, "debs", "*.deb"))
	if err != nil {
		return paths, err
	}
	gcc := "gcc-" + r.gcc + "-aarch64-linux-gnu_"
	var archive, ports []string
	hasGCC := false
	for _, d := range debs {
		base := filepath.Base(d)
		hasGCC = hasGCC || strings.HasPrefix(base, gcc)
		switch {
		case strings.HasSuffix(base, "_arm64.deb"):
			if rel.Fault == FaultPortsNoSSL && (strings.HasPrefix(base, "libssl")) {
				continue
			}
			ports = append(ports, d)
		default:
			archive = append(archive, d)
		}
	}
	if !hasGCC {
		return paths, fmt.Errorf("the test bed's %s packages (%s) have no gcc-%s-aarch64-linux-gnu: CROSS_GCC %s is not the cross compiler the stand-in archive carries",
			r.codename, deps, r.gcc, r.gcc)
	}
	curl, err := k.curlPackage(ctx, r)
	if err != nil {
		return paths, err
	}
	curlDeb, err := k.buildDeb(ctx, curl)
	if err != nil {
		return paths, err
	}
	archive = append(archive, curlDeb)
	cross, err := k.crossPackages(ctx, r)
	if err != nil {
		return paths, err
	}
	var crossDebs []string
	for _, p := range cross {
		deb, err := k.buildDeb(ctx, p)
		if err != nil {
			return paths, err
		}
		crossDebs = append(crossDebs, deb)
	}
	suites := []string{r.codename, r.codename + "-updates", r.codename + "-security"}
	portsKey := keys.ubuntu
	if rel.Fault == FaultPortsWrongKey {
		portsKey = keys.wrong
	}
	for _, repo := range []aptrepo.Repo{
		{Path: paths[0], Suites: suites, Components: []string{"main", "universe"}, Arch: "amd64", Debs: archive, Signer: keys.ubuntu},
		{Path: paths[1], Suites: suites, Components: []string{"main", "universe"}, Arch: "arm64", Debs: ports, Signer: portsKey},
		{Path: paths[2], Debs: crossDebs, Signer: keys.cuda},
	} {
		if err := aptrepo.Write(ctx, dir, repo); err != nil {
			return paths, err
		}
	}
	return paths, nil
}
