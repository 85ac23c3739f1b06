//go:build tools

// Package tools pins the BuildKit daemon and client that `make deps` builds
// into bin/ from the version required in go.mod, and keeps the module's other
// direct dependencies recorded while packages that use them are written.
// NVIDIA's container toolkit, which `make deps` builds too, is pinned in its
// own module, builder/internal/nvtoolkit/toolkit: in this go.mod it would move
// modules BuildKit and go-containerregistry depend on.
package tools

import (
	_ "github.com/containerd/platforms"
	_ "github.com/ebitengine/purego"
	_ "github.com/google/go-containerregistry/pkg/v1/remote"
	_ "github.com/moby/buildkit/cmd/buildctl"
	_ "github.com/moby/buildkit/cmd/buildkitd"
	_ "github.com/opencontainers/image-spec/specs-go/v1"
	_ "github.com/spf13/cobra"
	_ "github.com/stretchr/testify/require"
)
