package evidencespec

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestValidDetail admits the probe's phrases with parsed values and refuses
// free text, however harmless its characters look: a host name, an
// address, a path, a serial number fits no slot.
func TestValidDetail(t *testing.T) {
	good := map[string][]string{
		"image-description": {"read and valid"},
		"architecture":      {"arm64, as every Jetson", "amd64 is not arm64: no Jetson runs it"},
		"jetson-soc":        {"tegra234, Jetson Orin"},
		"device-class":      {"Jetson Orin Nano Super", "Jetson Orin (other module)", "Jetson AGX Orin (the module's part number and board name are not visible)"},
		"l4t-release":       {"L4T R36.4.3, JetPack 6.2", "L4T R38.2.0"},
		"l4t-matches-image": {
			"the host has L4T R36.4.3 (JetPack 6.2); the image needs L4T R36.4 or a later R36 release",
			"the host has a driver for CUDA 13.0 on L4T R38.2.0 (JetPack 7.0) but the image needs a driver for CUDA 13.2 or a later 13.x",
			"the host has a driver for CUDA 13.0; the image's forward-compatibility libraries cover a driver for CUDA 13.2 or a later 13.x",
		},
		"cuda-driver":     {"the driver reports CUDA 12.6", "the driver reports SM 8.7 and CUDA 12.6"},
		"gpu-matches-soc": {"SM 8.7 is the GPU of tegra234", "the driver reports SM 11.0 but tegra234 has SM 8.7"},
		"binary-chosen":   {"a binary for SM 8.7 runs on SM 8.7", "no binary of the image runs on SM 11.0"},
		"smoke":           {"the chosen binary exited 0", "the chosen binary exited 127", "no exit within 1m0s"},
		"image-digest":    {"from JETBAKE_IMAGE_DIGEST"},
		"cuda-kernel": {
			"a PTX kernel JIT-compiled by the driver ran on SM 8.7: 8192 of 8192 values exact (JIT 12.345 ms, kernel 0.812 ms)",
			"cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): the driver's JIT could not compile the kernel for this GPU",
			"cuInit failed: CUDA error (999)",
			"3 wrong and 0 not finite of 8192 values",
			"3 wrong and 1 not finite of 8192 values on SM 8.7 (first at index 17: got 1.5, want -2e+06)",
			"the CUDA probe gave no answer within 1m0s", "the CUDA probe gave no answer within 100ms",
			"the CUDA probe gave no answer within 1.25s",
			"not run: libcuda.so.1 not found: start the container with --runtime nvidia",
		},
		CheckApp: {
			"torch for CUDA 12.9 sees the Jetson Thor GPU (SM 11.0) and a CUDA matrix product on it is finite",
			"a CUDA matrix product failed: " + AppError("RuntimeError: CUDA error: named symbol not found"),
			"import torch failed: " + AppUnknownError,
			"the app check's python exited 1 without a result line: run the image's python for its error",
		},
	}
	for check, details := range good {
		for _, d := range details {
			require.True(t, ValidDetail(check, d), "%s: %q", check, d)
		}
	}
	bad := []struct{ check, detail string }{
		{"smoke", "ran on jetson-01.lab.example.com"},
		{"cuda-driver", "driver at 10.20.30.40 port 22"},
		{"cuda-driver", "the driver reports CUDA 10.20.30.40"},
		{"l4t-release", "L4T R36.4.3, JetPack jetson-01"},
		{"device-class", "Jetson lab-7 serial 1421522011234"},
		{"device-class", "Jetson Orin Nano SN1421522011234 Lab7 Rack3 Row9"},
		{"jetson-soc", "tegra234, Jetson jetson01"},
		{"architecture", "jetson01 is not arm64: no Jetson runs it"},
		{"smoke", "the chosen binary exited 0 on host alice"},
		{"smoke", "the chosen binary exited 12345"},
		{"binary-chosen", "a binary for SM 8.7 runs on SM 8.7 (home alice)"},
		{"l4t-matches-image", "the host has alice but the image needs bob"},
		{"image-description", "read /home/alice/image.json"},
		{"no-such-check", "read and valid"},
		{CheckApp, "a CUDA matrix product failed: RuntimeError at /home/alice/app.py"},
		{CheckApp, "import torch failed: CUDA error: no kernel image is available for execution on the device"},
		{CheckApp, "torch for CUDA 12.9 sees the Jetson jetson-01 GPU (SM 8.7) and a CUDA matrix product on it is finite"},
		{"smoke", ""},
		{"smoke", "read and valid"}, // a phrase of another check
		{"cuda-kernel", "cuInit failed: CUDA_ERROR_NO_DEVICE (100): see jetson-01.lab"},
		{"cuda-kernel", "dlopen /home/alice/libcuda.so failed: CUDA error (1)"},
		{"cuda-kernel", "3 wrong and 0 not finite of 8192 values on SM 10.20.30.40"},
		{"cuda-kernel", "the CUDA probe gave no answer within 0s"},
		{"cuda-kernel", "the CUDA probe gave no answer within 1.0s"}, // not as time.Duration writes it
		{"cuda-kernel", "the CUDA probe gave no answer within 1s 10.20.30.40"},
		{"cuda-kernel", "the CUDA probe gave no answer within 12345678901h"},
	}
	for _, tt := range bad {
		require.False(t, ValidDetail(tt.check, tt.detail), "%s: %q", tt.check, tt.detail)
	}
}

func TestFill(t *testing.T) {
	require.Equal(t, "tegra234, Jetson Orin", Fill(DetailSoC, "tegra234", "Orin"))
	require.Equal(t, "the driver reports SM 8.7 and CUDA 12.6", Fill(DetailDriverAnswered, "8.7", "12.6"))
	require.Equal(t, "the driver reports SM  and CUDA ", Fill(DetailDriverAnswered), "a slot without a value stays empty")
	require.False(t, ValidDetail("cuda-driver", Fill(DetailDriverAnswered)))
	for check, phrases := range Phrases() {
		for _, p := range phrases {
			require.Equal(t, strings.Count(p, "{"), strings.Count(p, "}"), "%s: %q", check, p)
		}
	}
}

func FuzzValidDetail(f *testing.F) {
	f.Add("smoke", "the chosen binary exited 0")
	f.Add("l4t-matches-image", "the host has L4T R36.4.3 (JetPack 6.2); the image needs L4T R36.4 or a later R36 release")
	f.Fuzz(func(t *testing.T, check, detail string) {
		if !ValidDetail(check, detail) {
			return
		}
		for _, r := range detail {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(" .,:;()_'+=-", r)
			if !ok {
				t.Fatalf("admitted %q with %q", detail, r)
			}
		}
		if strings.Contains(detail, "@") || strings.Contains(detail, "/") {
			t.Fatalf("admitted %q", detail)
		}
	})
}
