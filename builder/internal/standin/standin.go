// Package standin makes arm64 stand-ins for NVIDIA's base images, for the
// tests and `make demo` on machines that cannot pull nvcr.io: Debian's static
// busybox plus the files that identify each base (/etc/nv_tegra_release of its
// L4T, /usr/local/cuda/version.json of its CUDA), named like the real ones,
// and what the router needs from a base at run time: its Ubuntu's libssl
// soname and a CA bundle.
package standin

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/plan"
)

// Base describes one stand-in base image.
type Base struct {
	// Ref is the real image's reference, e.g. "nvcr.io/nvidia/l4t-jetpack:r36.4.0".
	Ref string
	// L4T is the Jetson Linux version it carries in /etc/nv_tegra_release, or "".
	L4T string
	// CUDA is the CUDA version in /usr/local/cuda/version.json.
	CUDA string
	// Index makes it a one-platform index, as NVIDIA's multi-arch nvidia/cuda tags are.
	Index bool
	// Libs are shared libraries (sonames) in /usr/lib/aarch64-linux-gnu, e.g.
	// "libssl.so.3": the stand-in router's build records the build base's
	// libssl and its loader looks for it in the runtime image.
	Libs []string
	// CABundle puts a CA bundle at CABundlePath, as ca-certificates does.
	CABundle bool
}

// CABundlePath is where Debian and Ubuntu's ca-certificates put the bundle,
// which the build's smoke check looks for.
const CABundlePath = imagebuild.CABundlePath

// SSLSoname is the libssl soname of an Ubuntu release: 1.1 on 20.04, 3 later.
func SSLSoname(ubuntu string) string {
	if ubuntu != "" && ubuntu < "22.04" {
		return "libssl.so.1.1"
	}
	return "libssl.so.3"
}

// applets are the busybox commands linked into /bin: enough for the
// stand-in router's build stage and for a shell in the image.
var applets = []string{"sh", "echo", "printf", "cat", "mkdir", "chmod", "cp", "ls", "env", "rm", "test", "true", "false", "uname", "sleep"}

// ForPlan lists the stand-ins that every base of p needs, once each.
func ForPlan(p *plan.Plan) []Base {
	seen := map[string]bool{}
	var out []Base
	add := func(ref string, rel plan.Release, withL4T bool) {
		if seen[ref] {
			return
		}
		seen[ref] = true
		b := Base{Ref: ref, CUDA: rel.CUDA, Index: strings.Contains(ref, "/nvidia/cuda:"),
			Libs: []string{SSLSoname(rel.Ubuntu)}, CABundle: true}
		if withL4T && strings.Contains(ref, "/l4t-") {
			b.L4T = rel.L4T
		}
		out = append(out, b)
	}
	for _, rel := range p.Releases {
		add(rel.BuildBase, rel, true)
		add(rel.RuntimeBase, rel, false)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref < out[j].Ref })
	return out
}

// Image builds the stand-in for b from the static arm64 busybox at busyboxPath.
func Image(busyboxPath string, b Base) (v1.Image, error) {
	busybox, err := os.ReadFile(busyboxPath)
	if err != nil {
		return nil, fmt.Errorf("read busybox (run 'make deps' to fetch Debian's arm64 busybox-static): %w", err)
	}
	layer, err := rootLayer(busybox, b)
	if err != nil {
		return nil, err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return nil, err
	}
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "arm64"
	cf.Created = v1.Time{Time: time.Unix(0, 0).UTC()}
	cf.Config.Env = []string{
		"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
		"CUDA_VERSION=" + b.CUDA,
	}
	cf.Config.Cmd = []string{"/bin/sh"}
	cf.Config.Labels = map[string]string{"io.jetbake.standin": b.Ref}
	return mutate.ConfigFile(img, cf)
}

// rootLayer is the stand-in's single layer.
func rootLayer(busybox []byte, b Base) (v1.Layer, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0)
	dir := func(name string) error {
		return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755, ModTime: epoch})
	}
	file := func(name string, mode int64, data []byte) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: mode, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return err
		}
		_, err := tw.Write(data)
		return err
	}
	for _, d := range []string{"bin/", "etc/", "etc/ssl/", "etc/ssl/certs/", "tmp/", "usr/", "usr/lib/", "usr/lib/aarch64-linux-gnu/",
		"usr/local/", "usr/local/bin/", "usr/local/cuda/"} {
		if err := dir(d); err != nil {
			return nil, err
		}
	}
	if err := file("bin/busybox", 0o755, busybox); err != nil {
		return nil, err
	}
	for _, a := range applets {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeSymlink, Name: "bin/" + a, Linkname: "busybox", Mode: 0o777, ModTime: epoch}); err != nil {
			return nil, err
		}
	}
	for _, lib := range b.Libs {
		if err := file("usr/lib/aarch64-linux-gnu/"+lib, 0o644, []byte("stand-in "+lib+"\n")); err != nil {
			return nil, err
		}
	}
	if b.CABundle {
		if err := file(strings.TrimPrefix(CABundlePath, "/"), 0o644, []byte("# stand-in CA bundle\n")); err != nil {
			return nil, err
		}
	}
	version := fmt.Sprintf("{\n  \"cuda\": {\"name\": \"CUDA SDK\", \"version\": %q}\n}\n", b.CUDA)
	if err := file("usr/local/cuda/version.json", 0o644, []byte(version)); err != nil {
		return nil, err
	}
	if b.L4T != "" {
		if err := file("etc/nv_tegra_release", 0o644, []byte(TegraRelease(b.L4T))); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	data := buf.Bytes()
	return tarball.LayerFromOpener(func() (ioReadCloser, error) { return nopCloser(data), nil })
}

// TegraRelease is the first line of /etc/nv_tegra_release for an L4T version such as "36.4.3".
func TegraRelease(l4t string) string {
	parts := strings.SplitN(l4t, ".", 2)
	rev := "0.0"
	if len(parts) == 2 {
		rev = parts[1]
	}
	return fmt.Sprintf("# R%s (release), REVISION: %s, GCID: 00000000, BOARD: generic, EABI: aarch64, DATE: Thu Jan  1 00:00:00 UTC 1970\n", parts[0], rev)
}

// Push pushes the stand-in for b to the registry at host (e.g.
// "127.0.0.1:5000"), under b's repository path without its registry.
func Push(busyboxPath, host string, b Base, opts ...remote.Option) (string, error) {
	img, err := Image(busyboxPath, b)
	if err != nil {
		return "", err
	}
	src, err := name.ParseReference(b.Ref)
	if err != nil {
		return "", fmt.Errorf("stand-in %q: %w", b.Ref, err)
	}
	dst, err := name.ParseReference(host+"/"+src.Context().RepositoryStr()+":"+src.Identifier(), name.Insecure)
	if err != nil {
		return "", err
	}
	if b.Index {
		idx := mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
			mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
		return dst.String(), remote.WriteIndex(dst, idx, opts...)
	}
	return dst.String(), remote.Write(dst, img, opts...)
}
