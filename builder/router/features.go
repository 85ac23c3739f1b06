// Package router holds the facts jetbake checks about building the router
// it ships for, text-embeddings-inference (TEI): which of its cargo features
// compile for which GPU, and the features that choose cudarc's linking mode,
// under the names of the build args of Dockerfile-jetson that carry them.
// They are facts about one router's source, not about Jetsons, so they are
// kept apart from computecap's table; builder/matrix and builder/plan apply
// them to a matrix and to a build arg given on the command line.
//
// Sources (https://github.com/huggingface/text-embeddings-inference):
// router/Cargo.toml and backends/candle/Cargo.toml (the features),
// Dockerfile-cuda (the features TEI's own images build with) and issue 709
// (cudarc's build script without a linking feature).
package router

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// FeaturesBuildArg is the build argument that carries the router's cargo
// features to its build stage, e.g. "candle-cuda" or "candle-cuda-volta".
const FeaturesBuildArg = "CARGO_FEATURES"

// Feature is one cargo feature of text-embeddings-inference that compiles
// CUDA kernels, and the oldest GPU those kernels build for.
type Feature struct {
	// Name is the cargo feature, e.g. "candle-cuda".
	Name string
	// Min is the oldest compute capability the feature's kernels compile for.
	Min computecap.Capability
	// Why says what needs Min, for error messages.
	Why string
}

// cudaFeatures is the table of TEI's CUDA features, most capable first,
// from its Cargo manifests and Dockerfile-cuda: candle-cuda builds
// flash-attention v2 (sm_80 and newer), candle-cuda-turing flash-attention
// v1 (sm_75), candle-cuda-volta no flash-attention (Volta and Xavier, sm_70
// and sm_72). CheckFeatures and FeaturesError.Instead are its readers.
var cudaFeatures = []Feature{
	{Name: "candle-cuda", Min: computecap.Capability{Major: 8, Minor: 0}, Why: "its flash-attention v2 kernels need sm_80 or newer"},
	{Name: "candle-cuda-turing", Min: computecap.Capability{Major: 7, Minor: 5}, Why: "its flash-attention v1 kernels need sm_75 or newer"},
	{Name: "candle-cuda-volta", Min: computecap.Capability{Major: 7, Minor: 0}, Why: "it needs sm_70 or newer"},
}

// FeaturesError says that a feature list cannot be compiled for a GPU.
type FeaturesError struct {
	// Feature is the feature that cannot be compiled.
	Feature Feature
	// Target is the GPU it was asked for.
	Target computecap.Capability
}

// Error names the feature and why it cannot be compiled for the target.
func (e *FeaturesError) Error() string {
	return fmt.Sprintf("cannot be compiled with cargo feature %s: %s", e.Feature.Name, e.Feature.Why)
}

// Instead names the features of the table that do compile for the target,
// most capable first.
func (e *FeaturesError) Instead() []string {
	var out []string
	for _, f := range cudaFeatures {
		if !e.Target.Canonical().Less(f.Min) {
			out = append(out, f.Name)
		}
	}
	return out
}

// CheckFeatures reports whether every CUDA feature of the list (separated by
// commas or spaces, as cargo's -F takes them) compiles for target. Features
// the table does not know are not checked.
func CheckFeatures(target computecap.Capability, features string) error {
	for _, name := range strings.FieldsFunc(features, func(r rune) bool { return r == ',' || r == ' ' }) {
		for _, f := range cudaFeatures {
			if f.Name == name && target.Canonical().Less(f.Min) {
				return &FeaturesError{Feature: f, Target: target}
			}
		}
	}
	return nil
}

// LinkingBuildArg is the build argument that chooses cudarc's linking mode
// in Dockerfile-jetson: static-linking or dynamic-linking (CheckLinking).
const LinkingBuildArg = "CUDA_LINKING"

// linkingModes are TEI's router features that turn cudarc's linking on
// (router/Cargo.toml): without one, cudarc's build script panics (TEI
// issue 709). static-linking needs only the driver at run time.
var linkingModes = []string{"static-linking", "dynamic-linking"}

// CheckLinking reports whether mode is one of TEI's linking features.
func CheckLinking(mode string) error {
	if slices.Contains(linkingModes, mode) {
		return nil
	}
	return fmt.Errorf("is not a linking mode of TEI's router: without static-linking or dynamic-linking, cudarc's build script panics (TEI issue 709)")
}
