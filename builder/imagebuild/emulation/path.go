package emulation

import (
	"fmt"

	gateway "github.com/moby/buildkit/frontend/gateway/client"
)

// Path is how a node builds a release's router stage.
type Path string

// The paths: natively on an arm64 node, cross-compiled on an amd64 node in
// the release's cross build base (dockerfiles/Dockerfile-jetson's
// toolchain-cross and router-cross stages on $BUILDPLATFORM), or the
// build base run under QEMU.
const (
	PathNative Path = "native"
	PathCross  Path = "cross"
	PathQEMU   Path = "qemu"
)

// Choice is a node's path for one release and why, which `jetbake plan`
// and --timings say once.
type Choice struct {
	Path Path
	// Reason says why, in one clause: "the node runs linux/arm64 natively".
	Reason string
}

// ChoosePath chooses the router stage's path of a release on a node with
// workers: native when a worker runs linux/arm64 natively; on an amd64
// node, forced ("cross" or "qemu", from the matrix's build_path or
// jetbake build --build-path) when set, else cross when the release has a
// cross build base, else QEMU (with today's warning, see Notice). Cross on
// a node whose native platform is not amd64, or forced without a cross
// base, is an error: the cross base and its compilers are x86_64 programs.
func ChoosePath(workers []gateway.WorkerInfo, hasCrossBase bool, forced string) (Choice, error) {
	if NativeArm64(workers) {
		return Choice{Path: PathNative, Reason: "the node runs linux/arm64 natively"}, nil
	}
	native := NativePlatform(workers)
	switch Path(forced) {
	case PathQEMU:
		return Choice{Path: PathQEMU, Reason: "build_path forces QEMU"}, nil
	case PathCross:
		if !hasCrossBase {
			return Choice{}, fmt.Errorf("build_path \"cross\": the release has no cross_build_base: add one (docs/matrix.md#cross-builds) or build with --build-path qemu")
		}
		if native != "linux/amd64" {
			return Choice{}, fmt.Errorf("build_path \"cross\": the node's native platform is %s, and a cross build base runs on linux/amd64 only", native)
		}
		return Choice{Path: PathCross, Reason: "build_path forces the cross build base"}, nil
	case "":
	default:
		return Choice{}, fmt.Errorf("build path %q: use cross or qemu", forced)
	}
	if hasCrossBase && native == "linux/amd64" {
		return Choice{Path: PathCross, Reason: "the node is linux/amd64 and the release has a cross_build_base"}, nil
	}
	if hasCrossBase {
		return Choice{Path: PathQEMU, Reason: "the node's native platform is " + native + ", and the cross build base runs on linux/amd64 only"}, nil
	}
	return Choice{Path: PathQEMU, Reason: "the node does not run linux/arm64 natively and the release has no cross_build_base"}, nil
}

// Auto is the value of jetbake build --build-path that lets every
// release's path be chosen (ChoosePath), whatever its build_path says.
const Auto = "auto"

// Forced is the path a build forces: flag (jetbake build --build-path)
// over the release's build_path; "" lets ChoosePath choose, as flag Auto
// does. An app's stage has no cross path, so only QEMU can be forced on it.
func Forced(release, flag string, app bool) string {
	forced := release
	switch flag {
	case "":
	case Auto:
		forced = ""
	default:
		forced = flag
	}
	if app && forced != string(PathQEMU) {
		return ""
	}
	return forced
}

// Describe says a path in the words of `jetbake plan`'s build path line:
// crossBase is the release's cross build base as the build names it, dir
// its CUDA target folder.
func Describe(c Choice, crossBase, dir string) string {
	switch c.Path {
	case PathCross:
		return fmt.Sprintf("cross in %s (targets/%s): %s", crossBase, dir, c.Reason)
	case PathQEMU:
		return "QEMU: " + c.Reason
	}
	return "native: " + c.Reason
}
