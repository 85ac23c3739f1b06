package main

// The kernel of the --kernel check, written by hand in PTX so that the
// driver compiles it for the GPU it runs on (cuModuleLoadDataEx JIT-compiles
// PTX for the current context's device): y[i] = a*x[i] + b for i < n, one
// thread per value.
//
//   - .version 7.0 is CUDA 11.0's PTX ISA: every driver from CUDA 11.0 on
//     reads it, JetPack 5's CUDA 11.4 included (a driver refuses a newer ISA
//     than its own with CUDA_ERROR_UNSUPPORTED_PTX_VERSION).
//   - .target sm_50 is Maxwell, the oldest GPU that CUDA 12 and the CUDA 13
//     drivers (R580) still support. PTX runs on its target and every later
//     GPU, Tegra ones included (the driver JIT-compiles it for the GPU's own
//     SM; the Tegra rule that a binary runs only on its own SM is about
//     cubins), so Xavier (7.2), Orin (8.7), Thor (10.1 or 11.0) and every
//     desktop GPU from Maxwell on compile it.
//   - The registers are declared, the entry is .visible (cuModuleGetFunction
//     finds only visible entries), the parameters are in .param space, and
//     the pointers are converted from generic to global addresses with
//     cvta.to.global before ld.global and st.global, as nvcc and LLVM emit.
//
// PTX ISA: https://docs.nvidia.com/cuda/parallel-thread-execution/
// (release notes for the ISA of each CUDA release; cvta; fma.rn.f32).
// The stand-in driver (builder/internal/standin/cuda/libcuda.c) runs this
// kernel and no other.
const kernelPTX = `//
// jetbake-cudaprobe --kernel: y[i] = a*x[i] + b for i < n.
//
.version 7.0
.target sm_50
.address_size 64

.visible .entry jetbake_axpb(
	.param .u64 jetbake_axpb_param_y,
	.param .u64 jetbake_axpb_param_x,
	.param .f32 jetbake_axpb_param_a,
	.param .f32 jetbake_axpb_param_b,
	.param .u32 jetbake_axpb_param_n
)
{
	.reg .pred 	%p<2>;
	.reg .b32 	%r<6>;
	.reg .f32 	%f<5>;
	.reg .b64 	%rd<8>;

	mov.u32 	%r1, %ctaid.x;
	mov.u32 	%r2, %ntid.x;
	mov.u32 	%r3, %tid.x;
	mad.lo.s32 	%r4, %r1, %r2, %r3;
	ld.param.u32 	%r5, [jetbake_axpb_param_n];
	setp.ge.u32 	%p1, %r4, %r5;
	@%p1 bra 	DONE;
	ld.param.u64 	%rd1, [jetbake_axpb_param_y];
	ld.param.u64 	%rd2, [jetbake_axpb_param_x];
	ld.param.f32 	%f1, [jetbake_axpb_param_a];
	ld.param.f32 	%f2, [jetbake_axpb_param_b];
	cvta.to.global.u64 	%rd3, %rd1;
	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.u32 	%rd5, %r4, 4;
	add.s64 	%rd6, %rd4, %rd5;
	add.s64 	%rd7, %rd3, %rd5;
	ld.global.f32 	%f3, [%rd6];
	fma.rn.f32 	%f4, %f3, %f1, %f2;
	st.global.f32 	[%rd7], %f4;
DONE:
	ret;
}
`

// The kernel's name, target and launch.
const (
	kernelName   = "jetbake_axpb"
	kernelTarget = "sm_50"
	// elements is n, the number of values; blockSize threads per block.
	elements  = 4096
	blockSize = 256
	// coefA and coefB are a and b. With x[i] = i - n/2 every a*x[i] + b
	// is exact in float32 (at most 12 integer bits and 2 fractional
	// ones), whether the GPU fuses the multiply and add or not, so each
	// value must equal the expected one bit for bit.
	coefA = 1.5
	coefB = 0.25
)

// input is x[i].
func input(i int) float32 { return float32(i - elements/2) }

// expected is y[i], computed exactly in float64 and rounded once.
func expected(i int) float32 { return float32(coefA*float64(input(i)) + coefB) }
