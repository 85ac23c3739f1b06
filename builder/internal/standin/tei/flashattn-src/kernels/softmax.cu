// A masked row softmax over half-precision attention scores, for the
// stand-in candle-flash-attn (jetbake's test bed; written for it). One
// block a row; the row's maximum and sum are reduced in shared memory.
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
