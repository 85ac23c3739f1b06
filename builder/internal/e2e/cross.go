package e2e

import (
	"context"
	"fmt"

	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/plan"
)

// The cross path in the test bed: the shipped matrix names no
// cross_build_base, because no cross build base is published; the demo and
// the tests give each release the stand-in cross base of its line
// (standin.AddCrossBases), as a user adds theirs, and push it with the
// other stand-ins (PushStandins).

// CrossHostSSLRelease is the only release of the matrix
// WriteCrossHostSSLMatrix writes.
const CrossHostSSLRelease = "jetpack6.2-cross-host-openssl"

// CrossThorSMRelease is the only release of the matrix WriteCrossThorSMMatrix
// writes.
const CrossThorSMRelease = "jetpack6.2-cross-sm110"

// WriteCrossThorSMMatrix writes the matrix of one release,
// CrossThorSMRelease (a copy of jetpack6.2 with tags of its own, on its
// stand-in cross base, which carries NVIDIA's nvcc 11.8), built from
// Dockerfile-jetson compiling the router for sm_110 (written into dir):
// candle's kernel crates find 110 missing from nvcc's --list-gpu-code,
// and jetbake names the release, the SM and the CUDA it needs, with no tag.
func WriteCrossThorSMMatrix(repoRoot, registry, dir, out string) error {
	variant, err := onlyEdited(repoRoot, dir, CrossThorSMRelease, withThorSM)
	if err != nil {
		return err
	}
	return WriteCrossMatrix(repoRoot, registry, out, variant)
}

// HostSSLCrossBaseRef is where the test bed pushes the stand-in cross base
// of JetPack 6.2's line that holds the build machine's OpenSSL (libssl-dev
// installed instead of libssl-dev:arm64).
func HostSSLCrossBaseRef(registry string) string {
	return registry + "/jetbake/cross-build-base:cuda12.6-aarch64-linux-ubuntu22.04-host-openssl"
}

// WriteCrossMatrix writes the demo matrix (WriteDemoMatrix with mutate)
// with every release given its stand-in cross build base.
func WriteCrossMatrix(repoRoot, registry, out string, mutate ...func(map[string]any)) error {
	if err := WriteDemoMatrix(repoRoot, registry, out, mutate...); err != nil {
		return err
	}
	return editMatrix(out, func(m map[string]any) error { return standin.AddCrossBases(m, registry) })
}

// WriteCrossHostSSLMatrix writes the matrix of one release,
// CrossHostSSLRelease (a copy of jetpack6.2 with tags of its own), whose
// cross build base is HostSSLCrossBaseRef: the real aarch64 linker must
// refuse the x86_64 OpenSSL, and jetbake the release, with no tag.
func WriteCrossHostSSLMatrix(repoRoot, registry, out string) error {
	if err := WriteCrossMatrix(repoRoot, registry, out, onlyVariant(CrossHostSSLRelease)); err != nil {
		return err
	}
	return editMatrix(out, func(m map[string]any) error {
		base, ok := m["releases"].([]any)[0].(map[string]any)["cross_build_base"].(map[string]any)
		if !ok {
			return fmt.Errorf("%s: %s has no cross_build_base", out, CrossHostSSLRelease)
		}
		base["image"] = HostSSLCrossBaseRef(registry)
		return nil
	})
}

// PushHostSSLCrossBases pushes the cross bases of p as HostSSL stand-ins:
// the build machine's OpenSSL in place of the target's.
func (e *Env) PushHostSSLCrossBases(ctx context.Context, p *plan.Plan) error {
	kit := e.Kit()
	for _, b := range standin.ForPlan(p) {
		if !b.Cross {
			continue
		}
		b.HostSSL = true
		if _, err := kit.Push(ctx, e.Registry, b); err != nil {
			return fmt.Errorf("push stand-in for %s: %w", b.Ref, err)
		}
	}
	return nil
}

// editMatrix is EditMatrix with an edit that can fail.
func editMatrix(path string, edit func(map[string]any) error) error {
	var editErr error
	if err := EditMatrix(path, func(m map[string]any) { editErr = edit(m) }); err != nil {
		return err
	}
	return editErr
}
