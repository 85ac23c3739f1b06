package smoke

import (
	"strings"

	"github.com/moby/buildkit/client/llb"
	ocispecs "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/jetbake/jetbake/builder/imagebuild/progress"
)

// arm64 is the platform of every Jetson.
var arm64 = ocispecs.Platform{OS: "linux", Architecture: "arm64"}

// driverStubPaths are where NVIDIA's CUDA devel images keep the driver's
// link-time stub, stubs/libcuda.so (soname libcuda.so.1), first match wins.
var driverStubPaths = []string{
	"/usr/local/cuda/lib64/stubs/libcuda.so",
	"/usr/local/cuda/targets/*/lib/stubs/libcuda.so",
	"/usr/local/cuda-*/targets/*/lib/stubs/libcuda.so",
}

// StubOrigin says, for the judge's words when the loader finds no
// libcuda.so.1, which base lent the smoke run its driver stub, where in it
// the stub was looked for, and what to do about a base without one.
type StubOrigin struct {
	// Base names the base, e.g. "the build base nvcr.io/nvidia/cuda:...".
	Base  string
	Paths []string
	Fix   string
}

// Stub is the build base's CUDA driver stub, as libcuda.so.1 for the smoke
// run only, resolved in mode. Every linking mode of TEI's router needs the
// driver, which NVIDIA's runtime mounts from the Jetson and no runtime
// image has; the run loads the build base's stub instead, never in the
// image. The build base is arm64: where the router is cross-compiled,
// CrossStub takes the stub from the base it is compiled in instead, which
// needs neither QEMU nor the build base's pull.
func Stub(buildBase string, mode llb.ResolveMode) llb.State {
	var find strings.Builder
	find.WriteString("for f in " + strings.Join(driverStubPaths, " ") + "; do ")
	find.WriteString(`if [ -f "$f" ]; then cp "$f" /out/libcuda.so.1 && echo "$f" >/out/from; break; fi; done; exit 0`)
	return llb.Image(buildBase, llb.Platform(arm64), mode).
		Run(llb.Args([]string{"/bin/sh", "-c", find.String()}),
			llb.WithCustomName(progress.SmokePrefix+"the build base's CUDA driver stub, as libcuda.so.1 for the smoke run only")).
		AddMount("/out", llb.Scratch())
}

// BuildBaseStub is where Stub looks for the stub in buildBase.
func BuildBaseStub(buildBase string) StubOrigin {
	return StubOrigin{Base: "the build base " + buildBase, Paths: driverStubPaths, Fix: "use a CUDA devel image as build base"}
}

// CrossStubPath is where NVIDIA's CUDA cross package for the target folder
// targetDir (aarch64-linux, sbsa-linux) puts the target's driver stub: the
// file the cross path's link of the router reads for -lcuda, through the
// lib64 link Dockerfile-jetson's toolchain-cross stage makes.
func CrossStubPath(targetDir string) string {
	return "/usr/local/cuda/targets/" + targetDir + "/lib/stubs/libcuda.so"
}

// CrossStub is the driver stub of the cross build base (base) for targetDir: NVIDIA's aarch64 stub that the routers were
// linked against, copied by a file operation on the build machine, so the
// smoke run needs no pull of the arm64 build base and no QEMU run for it.
// A base without it gives an empty stub, and the judge says so, as for a
// build base without one.
func CrossStub(base llb.State, targetDir string) llb.State {
	from := CrossStubPath(targetDir)
	// The stubs folder's last letter as a class, a pattern that matches
	// only the stub's own path: BuildKit copies nothing, instead of
	// failing, for a pattern that matches nothing (AllowEmptyWildcard),
	// never for a plain path; its walk starts at the folder above the
	// first class, lib, so a base without the stubs folder gets an empty
	// stub too.
	pattern := strings.Replace(from, "/stubs/", "/stub[s]/", 1)
	return llb.Scratch().File(
		llb.Copy(base, pattern, "/libcuda.so.1", &llb.CopyInfo{AllowWildcard: true, AllowEmptyWildcard: true, FollowSymlinks: true}).
			Mkfile("/from", 0o644, []byte(from+"\n")),
		llb.WithCustomName(progress.SmokePrefix+"the cross build base's CUDA driver stub, as libcuda.so.1 for the smoke run only"))
}

// CrossBaseStub is where CrossStub looks for the stub in the cross build
// base that name says (as `jetbake plan` names it).
func CrossBaseStub(name, targetDir string) StubOrigin {
	base := "the cross build base " + name
	if strings.HasPrefix(name, "the ") { // a recipe's: "the base FILE builds FROM IMAGE"
		base = "the cross build base, " + name + ","
	}
	return StubOrigin{Base: base, Paths: []string{CrossStubPath(targetDir)},
		Fix: "install NVIDIA's CUDA cross package of the release (cuda-cross-aarch64-X-Y or cuda-cross-sbsa-X-Y) in it, which the router's link needs too"}
}
