// GELU (tanh approximation) and the mean pooling of token embeddings under
// the attention mask, an embedding model's last steps, for the stand-in
// candle-flash-attn (jetbake's test bed; written for it). One thread an
// element, and one an embedding dimension.
#include "kernels.h"

__global__ void gelu_f32(const float *in, float *out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        float inner = 0.7978845608f * (x + 0.044715f * x * x * x);
        out[i] = 0.5f * x * (1.0f + tanhf(inner));
    }
}

void launch_gelu_f32(const float *in, float *out, int n, cudaStream_t stream) {
    int threads = 256;
    gelu_f32<<<(n + threads - 1) / threads, threads, 0, stream>>>(in, out, n);
}

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
