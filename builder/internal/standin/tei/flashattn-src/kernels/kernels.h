// The stand-in candle-flash-attn's kernels (jetbake's test bed; written for
// it, not candle's code): the host functions that launch them, declared
// for the entry point (flash_api.cu); bindgen_cuda compiles each .cu file
// in one nvcc run and archives them into libflashattention.a.
#pragma once
#include <cuda_runtime.h>

void launch_gelu_f32(const float *in, float *out, int n, cudaStream_t stream);
void launch_masked_softmax_f16(void *scores, const unsigned int *mask, int rows, int cols, cudaStream_t stream);
void launch_mean_pool_f32(const float *hidden, const unsigned int *mask, float *pooled, int tokens, int dim,
                          cudaStream_t stream);
