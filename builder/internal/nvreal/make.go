package nvreal

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// Real device code for the test bed: a small PTX kernel of jetbake's,
// assembled by NVIDIA's ptxas into cubins and packed by NVIDIA's fatbinary
// into fat binaries, at `make deps` time (cmd/nvfatbins) and cached under
// bin/nvidia-fatbins; a fat binary missing there is made when it is asked
// for. CUDA 11.8's ptxas targets sm_35 to sm_90: Orin's sm_87 and Xavier's
// sm_72 are real, Thor's sm_110 and sm_121 stay the writer's
// (builder/fatbin/fatbintest).

// kernelPTX is the kernel every real cubin holds, out[i] = a*x[i] + y[i],
// written for target (sm_72) in PTX ISA 7.8, CUDA 11.8's.
func kernelPTX(target string) []byte {
	return []byte(`// jetbake's stand-in kernel: out[i] = a * x[i] + y[i]
.version 7.8
.target ` + target + `
.address_size 64

.visible .entry jetbake_saxpy(
	.param .u64 out,
	.param .u64 x,
	.param .u64 y,
	.param .f32 a,
	.param .u32 n
)
{
	.reg .pred %p<2>;
	.reg .b32 %r<6>;
	.reg .f32 %f<5>;
	.reg .b64 %rd<11>;

	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [x];
	ld.param.u64 %rd3, [y];
	ld.param.f32 %f1, [a];
	ld.param.u32 %r2, [n];
	mov.u32 %r3, %ctaid.x;
	mov.u32 %r4, %ntid.x;
	mov.u32 %r5, %tid.x;
	mad.lo.s32 %r1, %r3, %r4, %r5;
	setp.ge.u32 %p1, %r1, %r2;
	@%p1 bra DONE;
	cvta.to.global.u64 %rd4, %rd2;
	cvta.to.global.u64 %rd5, %rd3;
	cvta.to.global.u64 %rd6, %rd1;
	mul.wide.u32 %rd7, %r1, 4;
	add.s64 %rd8, %rd4, %rd7;
	add.s64 %rd9, %rd5, %rd7;
	add.s64 %rd10, %rd6, %rd7;
	ld.global.f32 %f2, [%rd8];
	ld.global.f32 %f3, [%rd9];
	fma.rn.f32 %f4, %f1, %f2, %f3;
	st.global.f32 [%rd10], %f4;
DONE:
	ret;
}
`)
}

// Image is one entry of a real fat binary: a cubin or PTX for an SM
// (72 for sm_72 and compute_72).
type Image struct {
	// PTX says PTX (compute_XX); else a cubin (sm_XX).
	PTX bool
	// SM is 72 or 87 (ptxas of CUDA 11.8 takes 35 to 90).
	SM int
}

// FatbinSpec is one real fat binary: its images in order and whether
// fatbinary compresses every one (--compress-all; without it, it
// compresses PTX only, as nvcc does).
type FatbinSpec struct {
	// Name is the file's name under bin/nvidia-fatbins, without .fatbin.
	Name        string
	Images      []Image
	CompressAll bool
}

// FlashAttn is candle-flash-attn's fat binary as bindgen_cuda's nvcc
// --gpu-architecture=sm_XX writes it: compute_XX PTX, then the sm_XX
// cubin (nvcc puts an arch's PTX before its cubin).
func FlashAttn(sm int) FatbinSpec {
	return FatbinSpec{Name: "flash-attn-sm_" + strconv.Itoa(sm), Images: []Image{{PTX: true, SM: sm}, {SM: sm}}}
}

// Torch87 is the Jetson PyTorch's libtorch_cuda module for
// TORCH_CUDA_ARCH_LIST 8.7: an sm_87 cubin, compressed (PyTorch's build
// passes -Xfatbin -compress-all).
func Torch87() FatbinSpec {
	return FatbinSpec{Name: "torch-sm_87", Images: []Image{{SM: 87}}, CompressAll: true}
}

// OracleSpecs are the real fat binaries the oracle test reads besides the
// stand-ins': both Jetson SMs in one module, one SM alone, PTX alone,
// compressed and not.
func OracleSpecs() []FatbinSpec {
	return []FatbinSpec{
		{Name: "oracle-sm_72-sm_87", Images: []Image{{SM: 72}, {SM: 87}, {PTX: true, SM: 87}}},
		{Name: "oracle-sm_72", Images: []Image{{SM: 72}}},
		{Name: "oracle-compute_72", Images: []Image{{PTX: true, SM: 72}}},
		{Name: "oracle-sm_72-sm_87-compressed", Images: []Image{{SM: 72}, {PTX: true, SM: 72}, {SM: 87}}, CompressAll: true},
	}
}

// AllSpecs are every real fat binary `make deps` makes.
func AllSpecs() []FatbinSpec {
	return append([]FatbinSpec{FlashAttn(72), FlashAttn(87), Torch87()}, OracleSpecs()...)
}

// FatbinPath is where spec's fat binary is cached.
func (p Parts) FatbinPath(spec FatbinSpec) string { return filepath.Join(p.Made, spec.Name+".fatbin") }

// Fatbin returns spec's fat binary, made with ptxas and fatbinary when it
// is not cached yet.
func (p Parts) Fatbin(ctx context.Context, spec FatbinSpec) ([]byte, error) {
	path := p.FatbinPath(spec)
	if data, err := os.ReadFile(path); err == nil {
		return data, nil
	}
	if err := os.MkdirAll(p.Made, 0o755); err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp(p.Made, ".make-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	args := []string{"--64", "--create=" + filepath.Join(work, "out.fatbin")}
	if spec.CompressAll {
		args = append(args, "--compress-all")
	}
	for _, im := range spec.Images {
		sm := strconv.Itoa(im.SM)
		ptx := filepath.Join(work, "kernel.sm_"+sm+".ptx")
		if err := os.WriteFile(ptx, kernelPTX("sm_"+sm), 0o644); err != nil {
			return nil, err
		}
		if im.PTX {
			args = append(args, "--image3=kind=ptx,sm="+sm+",file="+ptx)
			continue
		}
		cubin := filepath.Join(work, "kernel.sm_"+sm+".cubin")
		if err := run(ctx, p.Ptxas(), "-arch=sm_"+sm, "-m64", "-o", cubin, ptx); err != nil {
			return nil, err
		}
		args = append(args, "--image3=kind=elf,sm="+sm+",file="+cubin)
	}
	if err := run(ctx, p.Fatbinary(), args...); err != nil {
		return nil, err
	}
	if err := os.Rename(filepath.Join(work, "out.fatbin"), path); err != nil {
		return nil, err
	}
	return os.ReadFile(path)
}

func run(ctx context.Context, tool string, args ...string) error {
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %w: %s", filepath.Base(tool), strings.Join(args, " "), err, strings.TrimSpace(out.String()))
	}
	return nil
}
