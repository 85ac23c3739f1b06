package standin

import (
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// nvccScript is the stand-in nvcc of a devel base of CUDA release cuda: it
// answers --list-gpu-code with the real architectures that release's nvcc
// lists, one a line as NVIDIA's does (from the facts table's toolchain
// rows, computecap.GPUCodes, the rule `jetbake validate` applies too), and
// --version; it compiles nothing. candle's kernel crates run it through
// bindgen_cuda before they compile, and fail on an SM it does not list.
func nvccScript(cuda string) ([]byte, error) {
	v, err := computecap.ParseCUDAVersion(cuda)
	if err != nil {
		return nil, fmt.Errorf("stand-in nvcc: %w", err)
	}
	var codes []string
	for _, c := range computecap.GPUCodes(v) {
		codes = append(codes, c.SM())
	}
	var b strings.Builder
	b.WriteString("#!/bin/sh\n")
	fmt.Fprintf(&b, "# nvcc of CUDA %s (jetbake stand-in): answers --list-gpu-code and --version as NVIDIA's does; compiles nothing.\n", v)
	b.WriteString("case \"$1\" in\n")
	fmt.Fprintf(&b, "--list-gpu-code) printf '%%s\\n' %s ;;\n", strings.Join(codes, " "))
	fmt.Fprintf(&b, "--version | -V) printf 'nvcc: NVIDIA (R) Cuda compiler driver\\nCuda compilation tools, release %s, V%s.0 (jetbake stand-in)\\n' ;;\n", v, v)
	b.WriteString("*) echo \"nvcc fatal   : the jetbake stand-in nvcc compiles nothing: $*\" >&2; exit 1 ;;\n")
	b.WriteString("esac\n")
	return []byte(b.String()), nil
}
