// The stand-in candle-flash-attn's entry point and its attention kernel
// (jetbake's test bed; written for it, not candle's code): a masked row
// softmax over half-precision attention scores, one block a row, the row's
// maximum and sum reduced in shared memory. candle-flash-attn's Rust code
// calls run_mha in its archive; the stand-in of rustc's object code for the
// router refers to run_mha too, so the linker takes this object out of
// libflashattention.a, and with it the object of the kernels it launches
// (pooling.cu), whose fat binaries end up in the router's .nv_fatbin.
#include <cuda_fp16.h>
#include "kernels.h"

__global__ void masked_softmax_f16(__half *scores, const unsigned int *mask, int cols) {
    extern __shared__ float reduce[];
    __half *row = scores + (size_t)blockIdx.x * cols;
    float local_max = -1e30f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        if (mask[c]) {
            local_max = fmaxf(local_max, __half2float(row[c]));
        }
    }
    reduce[threadIdx.x] = local_max;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            reduce[threadIdx.x] = fmaxf(reduce[threadIdx.x], reduce[threadIdx.x + s]);
        }
        __syncthreads();
    }
    float row_max = reduce[0];
    __syncthreads();
    float local_sum = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        local_sum += mask[c] ? __expf(__half2float(row[c]) - row_max) : 0.0f;
    }
    reduce[threadIdx.x] = local_sum;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            reduce[threadIdx.x] += reduce[threadIdx.x + s];
        }
        __syncthreads();
    }
    float sum = reduce[0];
    for (int c = threadIdx.x; c < cols; c += blockDim.x) {
        float p = mask[c] ? __expf(__half2float(row[c]) - row_max) / sum : 0.0f;
        row[c] = __float2half(p);
    }
}

void launch_masked_softmax_f16(void *scores, const unsigned int *mask, int rows, int cols, cudaStream_t stream) {
    int threads = 128;
    masked_softmax_f16<<<rows, threads, threads * sizeof(float), stream>>>(static_cast<__half *>(scores), mask, cols);
}

extern "C" int run_mha(void *scores, const unsigned int *mask, const float *hidden, float *scratch, float *pooled,
                       int tokens, int dim, cudaStream_t stream) {
    launch_masked_softmax_f16(scores, mask, tokens, tokens, stream);
    launch_gelu_f32(hidden, scratch, tokens * dim, stream);
    launch_mean_pool_f32(scratch, mask, pooled, tokens, dim, stream);
    return (int)cudaGetLastError();
}
