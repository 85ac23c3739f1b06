package standin

import (
	"context"
	"path/filepath"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/jetbake/jetbake/builder/internal/runimage"
	"github.com/jetbake/jetbake/computecap"
)

// Unpacked is a stand-in container's root file system and configuration,
// ready for runimage.Runner.Run.
type Unpacked struct {
	Rootfs string
	Config *v1.ConfigFile
}

// UnpackPyTorch builds the stand-in PyTorch container of a JetPack line and
// unpacks it under dir.
func (k Kit) UnpackPyTorch(ctx context.Context, jetpack, dir string) (Unpacked, error) {
	line, err := PyTorchLineFor(jetpack)
	if err != nil {
		return Unpacked{}, err
	}
	img, err := k.PyTorchImage(ctx, line)
	if err != nil {
		return Unpacked{}, err
	}
	rootfs := filepath.Join(dir, "rootfs")
	if err := runimage.Unpack(img, rootfs); err != nil {
		return Unpacked{}, err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return Unpacked{}, err
	}
	return Unpacked{Rootfs: rootfs, Config: cf}, nil
}

// JetsonDriverDir is where JetPack puts libcuda, which NVIDIA's runtime
// mounts into a container and adds to its ld cache.
const JetsonDriverDir = "/usr/lib/aarch64-linux-gnu/nvidia"

// JetsonHost is a Jetson as `docker run --runtime nvidia` shows its GPU to
// a container: its driver, the stand-in libcuda.so.1 for gpu, reporting
// driver version cuda and device name, at JetsonDriverDir.
func (k Kit) JetsonHost(ctx context.Context, name string, gpu computecap.Capability, cuda computecap.CUDAVersion) (runimage.Host, error) {
	lib, err := BuildLibcuda(ctx, k.Cache, Driver{Arch: ARM64, GPU: gpu, CUDA: cuda, DeviceName: name})
	if err != nil {
		return runimage.Host{}, err
	}
	return runimage.Host{Name: name, Libs: []runimage.HostLib{{Source: lib, Path: JetsonDriverDir + "/libcuda.so.1.1",
		Links: []string{"libcuda.so.1"}}}}, nil
}
