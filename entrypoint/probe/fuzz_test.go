package main

import (
	"strings"
	"testing"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
)

func FuzzParseKernelOutput(f *testing.F) {
	for _, s := range []string{
		`{"pass":true,"sm":"8.7","driver_version":12060,"kernel":"jetbake_axpb","ptx_target":"sm_50","elements":4096,"jit_ms":0.8,"kernel_ms":0.05,"total_ms":260.4}`,
		`{"pass":false,"sm":"8.7","step":"cuModuleLoadDataEx","error":"CUDA_ERROR_INVALID_PTX","code":218}`,
		`{"pass":false,"sm":"8.7","elements":4096,"step":"results","non_finite":1,"first_bad":{"index":2048,"got":"NaN","want":"0.25"}}`,
		`{"pass":false,"step":"cuInit","error":"CUDA_ERROR_/home","code":-1}`, "", "{}\n{}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := parseKernelOutput(data)
		if err != nil {
			return
		}
		k := out.evidence()
		for _, text := range []string{out.failure(k), k.Step, k.Error, k.SM} {
			for _, r := range text {
				if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .,:;()_'+=-", r)) {
					t.Fatalf("%q from %q holds %q", text, data, r)
				}
			}
		}
		if k.SM != "" {
			if c, err := computecap.Parse(k.SM); err != nil || c.String() != k.SM {
				t.Fatalf("SM %q from %q", k.SM, data)
			}
		}
		if k.Error != "" && !evidencespec.IsCUDAErrorName(k.Error) {
			t.Fatalf("error %q from %q", k.Error, data)
		}
		for _, v := range []float64{k.JITMillis, k.KernelMillis, k.TotalMillis} {
			if !(v >= 0 && v <= 3_600_000) {
				t.Fatalf("time %v from %q", v, data)
			}
		}
	})
}
