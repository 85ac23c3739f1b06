package computecap

import (
	"fmt"
	"strings"
)

// FeaturesBuildArg is the build argument that carries the router's cargo
// features to its build stage, e.g. "candle-cuda" or "candle-cuda-volta".
const FeaturesBuildArg = "CARGO_FEATURES"

// RouterFeature is one cargo feature of text-embeddings-inference that
// compiles CUDA kernels, and the oldest GPU those kernels build for.
type RouterFeature struct {
	// Name is the cargo feature, e.g. "candle-cuda".
	Name string
	// Min is the oldest compute capability the feature's kernels compile for.
	Min Capability
	// Why says what needs Min, for error messages.
	Why string
}

// RouterFeatures is the table of TEI's CUDA features, from its Cargo
// manifests and Dockerfile-cuda (huggingface/text-embeddings-inference):
// candle-cuda builds flash-attention v2 (sm_80 and newer), candle-cuda-turing
// flash-attention v1 (sm_75), candle-cuda-volta no flash-attention (Volta
// and Xavier, sm_70 and sm_72).
var RouterFeatures = []RouterFeature{
	{Name: "candle-cuda", Min: Capability{Major: 8, Minor: 0}, Why: "its flash-attention v2 kernels need sm_80 or newer"},
	{Name: "candle-cuda-turing", Min: Capability{Major: 7, Minor: 5}, Why: "its flash-attention v1 kernels need sm_75 or newer"},
	{Name: "candle-cuda-volta", Min: Capability{Major: 7, Minor: 0}, Why: "it needs sm_70 or newer"},
}

// FeaturesError says that a feature list cannot be compiled for a GPU.
type FeaturesError struct {
	// Feature is the feature that cannot be compiled.
	Feature RouterFeature
	// Target is the GPU it was asked for.
	Target Capability
}

func (e *FeaturesError) Error() string {
	return fmt.Sprintf("cannot be compiled with cargo feature %s: %s", e.Feature.Name, e.Feature.Why)
}

// Instead names the features of the table that do compile for the target,
// most capable first.
func (e *FeaturesError) Instead() []string {
	var out []string
	for _, f := range RouterFeatures {
		if !e.Target.Canonical().Less(f.Min) {
			out = append(out, f.Name)
		}
	}
	return out
}

// CheckFeatures reports whether every CUDA feature of the list (separated by
// commas or spaces, as cargo's -F takes them) compiles for target. Features
// the table does not know are not checked.
func CheckFeatures(target Capability, features string) error {
	for _, name := range strings.FieldsFunc(features, func(r rune) bool { return r == ',' || r == ' ' }) {
		for _, f := range RouterFeatures {
			if f.Name == name && target.Canonical().Less(f.Min) {
				return &FeaturesError{Feature: f, Target: target}
			}
		}
	}
	return nil
}

// LinkingBuildArg is the build argument that chooses cudarc's linking mode
// in Dockerfile-jetson: one of LinkingModes.
const LinkingBuildArg = "CUDA_LINKING"

// LinkingModes are TEI's router features that turn cudarc's linking on
// (router/Cargo.toml): without one, cudarc's build script panics (TEI
// issue 709). static-linking needs only the driver at run time.
var LinkingModes = []string{"static-linking", "dynamic-linking"}

// CheckLinking reports whether mode is one of LinkingModes.
func CheckLinking(mode string) error {
	for _, m := range LinkingModes {
		if m == mode {
			return nil
		}
	}
	return fmt.Errorf("is not a linking mode of TEI's router: without static-linking or dynamic-linking, cudarc's build script panics (TEI issue 709)")
}
