package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/detect"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// BenchmarkDetectAndPick measures what the entrypoint does before exec on a
// Jetson Orin with the NVIDIA runtime: read image.json, detect (no libcuda,
// so no probe; no nvidia-smi), check L4T and pick the binary.
func BenchmarkDetectAndPick(b *testing.B) {
	root := eptest.NewSysroot(b, "orin-nano-jp6", "jetpack6")
	if err := os.Remove(filepath.Join(root, "usr", "bin", "nvidia-smi")); err != nil {
		b.Fatal(err)
	}
	cfg := newConfig(nil, eptest.BaseEnv(root))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		img, err := detect.LoadImage(cfg.Root, cfg.Table)
		if err != nil {
			b.Fatal(err)
		}
		h := detect.Detect(ctx, &cfg.Config, detect.WantDriver(&cfg.Config, img))
		if d := detect.Decide(&cfg.Config, img, h); d.Choice != "/usr/local/bin/router-87" {
			b.Fatalf("chose %q: %s", d.Choice, d.Failure)
		}
	}
}

// benchmarkStart measures the whole start, run() up to the exec, on the AGX
// Orin container sysroot with the real jetbake-cudaprobe and a stand-in
// libcuda.so.1 whose cuInit sleeps 400 ms, as a real GPU initialisation
// can. Without soc_id the entrypoint has no fast path and pays cuInit.
func benchmarkStart(b *testing.B, withSocID bool) {
	root := eptest.NewSysroot(b, "agx-orin-container", "jetpack6")
	eptest.InstallLibcuda(b, root, "/usr/lib/aarch64-linux-gnu/nvidia")
	if !withSocID {
		if err := os.Remove(filepath.Join(root, host.SocIDPath)); err != nil {
			b.Fatal(err)
		}
	}
	env := eptest.BaseEnv(root, "JETBAKE_CUDAPROBE="+eptest.Build(b).CUDAProbe, "FAKE_CUDA_INIT_SLEEP_MS=400",
		"FAKE_CUDA_MAJOR=8", "FAKE_CUDA_MINOR=7", "FAKE_CUDA_DRIVER_VERSION=12060")
	var chosen string
	exec := func(path string, _, _ []string) error { chosen = path; return nil }
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if code := run(ctx, nil, env, io.Discard, io.Discard, exec); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	if chosen != filepath.Join(root, "/usr/local/bin/router-87") {
		b.Fatalf("chose %q", chosen)
	}
}

// BenchmarkStartFastPath: the SM from soc_id and the table, the driver's
// version from cuDriverGetVersion (no cuInit). It must stay under 5 ms.
func BenchmarkStartFastPath(b *testing.B) { benchmarkStart(b, true) }

// BenchmarkStartFullDriverQuery: no soc_id, so the driver is asked in full
// and cuInit's 400 ms are paid.
func BenchmarkStartFullDriverQuery(b *testing.B) { benchmarkStart(b, false) }
