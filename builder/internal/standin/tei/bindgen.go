package tei

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// bindgenCUDA is what bindgen_cuda 0.1.5's compute_cap() does in the build
// script of candle-kernels (and candle-flash-attn, candle-layer-norm, ...):
// it runs `nvcc --list-gpu-code`, keeps the lines "sm_N" whose N is a
// number (arch-specific ones such as sm_90a are skipped), and panics when
// CUDA_COMPUTE_CAP is not among them: Thor is sm_101 under CUDA 12.8 and
// 12.9 and sm_110 from 13.0, and CUDA 13 no longer builds Xavier's sm_72.
// The panics are bindgen_cuda's, in its words.
func bindgenCUDA(workspace string, p *BuildPlan, h Host, computeCap int) error {
	crate, checkout := lockedCrate(workspace, "candle-kernels")
	panicAt := func(line, msg string) error {
		return &BuildScriptError{Crate: crate,
			Script: filepath.Join(filepath.Dir(p.Output), "build", checkout+"-9c1a7e", "build-script-build"),
			Source: "$CARGO_HOME/registry/src/index.crates.io-1949cf8c6b5b557f/bindgen_cuda-0.1.5/src/lib.rs:" + line, Message: msg}
	}
	var out []byte
	_, err := h.LookPath("nvcc")
	if err == nil && h.Output != nil {
		out, err = h.Output("nvcc", "--list-gpu-code")
	}
	if err != nil || h.Output == nil {
		return panicAt("507:18", "`nvcc` failed. Ensure that you have CUDA installed and that `nvcc` is in your PATH.: Os { code: 2, kind: NotFound, message: \"No such file or directory\" }")
	}
	var codes []int
	for _, line := range strings.Split(string(out), "\n") {
		parts := strings.Split(line, "_")
		if len(parts) > 1 && slices.Contains(parts, "sm") {
			if n, err := strconv.Atoi(parts[1]); err == nil && n >= 0 {
				codes = append(codes, n)
			}
		}
	}
	slices.Sort(codes)
	if len(codes) == 0 {
		return panicAt("521:52", "no gpu codes parsed from nvcc")
	}
	if !slices.Contains(codes, computeCap) {
		list := make([]string, len(codes))
		for i, c := range codes {
			list[i] = strconv.Itoa(c)
		}
		return panicAt("527:13", fmt.Sprintf("nvcc cannot target gpu arch %d. Available nvcc targets are [%s].", computeCap, strings.Join(list, ", ")))
	}
	return nil
}
