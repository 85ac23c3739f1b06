// Package dockerfiles carries jetbake's build files inside the jetbake
// binary: the compute-capability script that every router stage runs, and
// Dockerfile-jetson.
//
// Why embedded and passed as a named build context ("jetbake") rather than
// copied into the router's source: the router's build context is the
// router's own source (a git URL such as text-embeddings-inference at a tag),
// which jetbake must not change, and a jetbake installed with `go install`
// runs outside this checkout, where no dockerfiles/ folder exists. A named
// context is how BuildKit's Dockerfile frontend takes files from a second
// source: the Dockerfile says `COPY --from=jetbake jetson-compute-cap.sh ...`,
// and jetbake hands BuildKit these exact bytes for every build, the real
// router's and the stand-in's alike, so there is one script, never a copy.
// By hand: docker buildx build --build-context jetbake=dockerfiles ...
package dockerfiles

import _ "embed"

// ContextName is the name of the build context that holds Files, as the
// Dockerfiles' `COPY --from=` says it.
const ContextName = "jetbake"

// ComputeCapScript is the script's file name in the named context.
const ComputeCapScript = "jetson-compute-cap.sh"

//go:embed jetson-compute-cap.sh
var computeCapScript []byte

//go:embed Dockerfile-jetson
var dockerfileJetson []byte

// Files returns the named context's files by name: the compute-cap script
// (run it with sh; its mode is not relied on).
func Files() map[string][]byte {
	return map[string][]byte{ComputeCapScript: append([]byte(nil), computeCapScript...)}
}

// DockerfileJetson returns dockerfiles/Dockerfile-jetson as embedded in this binary.
func DockerfileJetson() []byte { return append([]byte(nil), dockerfileJetson...) }

// CrossBaseRecipe is the recipe's file name, as `jetbake init` writes it
// beside the matrix.
const CrossBaseRecipe = "Dockerfile-cross-base"

//go:embed Dockerfile-cross-base
var dockerfileCrossBase []byte

// DockerfileCrossBase returns dockerfiles/Dockerfile-cross-base as embedded
// in this binary: the recipe of a release's cross build base.
func DockerfileCrossBase() []byte { return append([]byte(nil), dockerfileCrossBase...) }
