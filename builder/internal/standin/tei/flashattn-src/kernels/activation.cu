// GELU (tanh approximation) over a float tensor, for the stand-in
// candle-flash-attn (jetbake's test bed; written for it).
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
