package standin

import (
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// nvccScript is the stand-in nvcc of a devel base of CUDA release cuda,
// installed in the CUDA tree's bin/: it answers --list-gpu-code with the
// real architectures that release's nvcc lists, one a line as NVIDIA's
// does (from the facts table's toolchain rows, computecap.GPUCodes, the
// rule `jetbake validate` applies too), and --version. candle's kernel
// crates run it through bindgen_cuda before they compile, and fail on an
// SM it does not list.
//
// With -c it writes the host object of a kernel file as nvcc does, through
// the host compiler: -ccbin/--compiler-bindir (a folder holding gcc, or
// the compiler itself), else gcc on PATH, with the -Xcompiler options; the
// device code is not compiled. With --lib it archives objects as nvcc
// does, with the host compiler's archiver (`CC -print-prog-name=ar` cr),
// and, as nvcc, fails without a host compiler even so. It takes the CUDA target folder from
// --target-directory/-target-dir, else hostTargetDir, the folder of the
// machine the toolkit runs on (x86_64-linux in a cross build base), and
// fails when the CUDA tree has no targets/<folder>. NVCC_PREPEND_FLAGS and
// NVCC_APPEND_FLAGS go before and after the command line, as nvcc reads
// them (CUDA 11.5 and later), which is how a build passes options that
// bindgen_cuda has none for. The stand-in builds' gcc (tool.sh) writes no
// object; a real one, Debian's aarch64-linux-gnu-gcc in a cross build
// base, writes a real one of its architecture.
func nvccScript(cuda, hostTargetDir string) ([]byte, error) {
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
	fmt.Fprintf(&b, "# nvcc of CUDA %s (jetbake stand-in): answers --list-gpu-code and --version as NVIDIA's does;\n", v)
	b.WriteString("# -c writes a kernel file's host object through the host compiler; device code is not compiled.\n")
	b.WriteString("case \"$1\" in\n")
	fmt.Fprintf(&b, "--list-gpu-code) printf '%%s\\n' %s; exit 0 ;;\n", strings.Join(codes, " "))
	fmt.Fprintf(&b, "--version | -V) printf 'nvcc: NVIDIA (R) Cuda compiler driver\\nCuda compilation tools, release %s, V%s.0 (jetbake stand-in)\\n'; exit 0 ;;\n", v, v)
	b.WriteString("esac\n")
	fmt.Fprintf(&b, "tdir=%s\n", hostTargetDir)
	b.WriteString(nvccCompile)
	return []byte(b.String()), nil
}

// nvccCompile is the stand-in nvcc's -c.
const nvccCompile = `cuda=$(dirname "$(dirname "$0")")
# shellcheck disable=SC2086 # the variables hold options, split as nvcc splits them
set -- ${NVCC_PREPEND_FLAGS:-} "$@" ${NVCC_APPEND_FLAGS:-}
compile= lib= out= ccbin= src= xflags= objects=
while [ $# -gt 0 ]; do
	case $1 in
	-c | --compile) compile=1 ;;
	-lib | --lib) lib=1 ;;
	*.o) objects="$objects $1" ;;
	-o | --output-file) out=$2; shift ;;
	-ccbin | --compiler-bindir) ccbin=$2; shift ;;
	--compiler-bindir=*) ccbin=${1#*=} ;;
	-target-dir | --target-directory) tdir=$2; shift ;;
	--target-directory=*) tdir=${1#*=} ;;
	-Xcompiler | --compiler-options) xflags="$xflags $(echo "$2" | tr , ' ')"; shift ;;
	--default-stream | -I | -D | -U) shift ;;
	*.cu) src=$1 ;;
	esac
	shift
done
if [ -z "$compile" ] && [ -z "$lib" ]; then
	echo "nvcc fatal   : the jetbake stand-in nvcc compiles with -c and archives with --lib only" >&2
	exit 1
fi
if [ ! -d "$cuda/targets/$tdir" ]; then
	echo "nvcc fatal   : Could not find target directory '$cuda/targets/$tdir' (jetbake stand-in)" >&2
	exit 1
fi
cc=gcc
if [ -n "$ccbin" ]; then
	if [ -d "$ccbin" ]; then cc=$ccbin/gcc; else cc=$ccbin; fi
fi
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "$cc: No such file or directory" >&2
	echo "nvcc fatal   : Failed to preprocess host compiler properties." >&2
	exit 1
fi
if [ -n "$lib" ]; then
	# shellcheck disable=SC2086 # the objects, as nvcc passes them
	exec "$("$cc" -print-prog-name=ar)" cr "$out" $objects
fi
[ -n "$out" ] || out=$(basename "$src" .cu).o
name=$(basename "$src" .cu | tr -c 'A-Za-z0-9_\n' _)
# shellcheck disable=SC2086
printf 'int jetbake_host_stub_%s(void) { return 0; }\n' "$name" | "$cc" $xflags -x c -c -o "$out" - || exit 1
`
