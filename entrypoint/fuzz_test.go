package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

func FuzzParseNvidiaSMI(f *testing.F) {
	for _, s := range []string{"8.6\n", "[N/A]\n", "N/A", "12.0\n8.9\n", "", "sm_87", "9.0a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseNvidiaSMI(data)
		if err == nil && !c.Valid() {
			t.Fatalf("parsed %q into invalid %+v", data, c)
		}
	})
}

func FuzzParseProbeOutput(f *testing.F) {
	f.Add([]byte(`{"major":8,"minor":7,"driver_version":12060}`))
	f.Add([]byte(`{"major":10,"minor":1,"driver_version":12090}` + "\nextra"))
	f.Add([]byte(`{"major":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parseProbeOutput(data)
		if err == nil && (!a.GPU.Valid() || a.Driver.Major < 1) {
			t.Fatalf("parsed %q into %+v", data, a)
		}
	})
}

func FuzzParseImage(f *testing.F) {
	for _, name := range []string{"jetpack6", "jetpack7.2", "desktop"} {
		data, err := os.ReadFile(filepath.Join("testdata", "images", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema_version":1,"router":"r","jetpack":"6","targets":[{"sm":"87","path":"/r"}]}`))
	f.Add([]byte(`{"schema_version":1,"router":"r","jetpack":"6","targets":[{"sm":"87","path":"/usr/local/bin/../../x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := imagespec.Parse(data)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\x1b\x00") {
				t.Fatalf("the error is not one escaped line: %q", msg)
			}
			return
		}
		for _, tg := range spec.Targets {
			if !imagespec.InBinaryDir(tg.Path) {
				t.Fatalf("accepted target path %q", tg.Path)
			}
		}
		img, err := parseImage(spec)
		if err != nil {
			return
		}
		if len(img.caps) != len(img.Targets) {
			t.Fatalf("%d capabilities for %d targets", len(img.caps), len(img.Targets))
		}
		for _, c := range img.caps {
			if !c.Valid() {
				t.Fatalf("invalid target %+v", c)
			}
			candidates(computecap.DefaultTable(), img, c)
			bestSibling(img, siblingQuery{gpu: &c})
		}
	})
}

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
