package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkDetectAndPick measures what the entrypoint does before exec on a
// Jetson Orin with the NVIDIA runtime: read image.json, detect (no libcuda,
// so no probe; no nvidia-smi), check L4T and pick the binary.
func BenchmarkDetectAndPick(b *testing.B) {
	root := newSysroot(b, "orin-nano-jp6", "jetpack6")
	if err := os.Remove(filepath.Join(root, "usr", "bin", "nvidia-smi")); err != nil {
		b.Fatal(err)
	}
	cfg := newConfig(nil, baseEnv(root))
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		img, err := loadImage(cfg.root)
		if err != nil {
			b.Fatal(err)
		}
		h := detect(ctx, &cfg, wantDriver(&cfg, img))
		if d := decide(&cfg, img, h); d.Choice != "/usr/local/bin/router-87" {
			b.Fatalf("chose %q: %s", d.Choice, d.Failure)
		}
	}
}
