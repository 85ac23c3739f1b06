// Mean pooling of token embeddings under the attention mask, as an
// embedding model's last step, for the stand-in candle-flash-attn
// (jetbake's test bed; written for it). One thread an embedding dimension.
#include "kernels.h"

__global__ void mean_pool_f32(const float *hidden, const unsigned int *mask, float *pooled, int tokens, int dim) {
    int d = blockIdx.x * blockDim.x + threadIdx.x;
    if (d >= dim) {
        return;
    }
    float sum = 0.0f;
    int kept = 0;
    for (int t = 0; t < tokens; t++) {
        if (mask[t]) {
            sum += hidden[(size_t)t * dim + d];
            kept++;
        }
    }
    pooled[d] = kept > 0 ? sum / (float)kept : 0.0f;
}

void launch_mean_pool_f32(const float *hidden, const unsigned int *mask, float *pooled, int tokens, int dim,
                          cudaStream_t stream) {
    int threads = 128;
    mean_pool_f32<<<(dim + threads - 1) / threads, threads, 0, stream>>>(hidden, mask, pooled, tokens, dim);
}
