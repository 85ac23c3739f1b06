//go:build tools

// Package toolkit pins NVIDIA's container toolkit, whose runtime the
// end-to-end tests and `make demo` run the built images through:
// nvidia-container-runtime (registered with dockerd as the "nvidia"
// runtime), nvidia-ctk (CDI spec generation, and the hooks under `nvidia-ctk
// hook`) and nvidia-cdi-hook (the hooks the runtime adds to each container).
// It is its own module because adding the toolkit to jetbake's go.mod moves
// modules that BuildKit and go-containerregistry depend on (golang.org/x/sys,
// x/net, x/crypto, x/sync, genproto's rpc, cyphar.com/go-pathrs); `make deps`
// builds bin/nvidia-container-runtime, bin/nvidia-ctk and bin/nvidia-cdi-hook
// from here (cgo: the runtime loads libcuda.so.1 for NVIDIA_REQUIRE_CUDA).
package toolkit

import (
	_ "github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-cdi-hook"
	_ "github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-container-runtime"
	_ "github.com/NVIDIA/nvidia-container-toolkit/cmd/nvidia-ctk"
)
