// The stand-in candle-flash-attn's entry point (jetbake's test bed; written
// for it, not candle's code). candle-flash-attn's Rust code calls run_mha
// in its archive; the stand-in of rustc's object code for the router refers
// to run_mha too, so the linker takes this object out of
// libflashattention.a, and with it the objects of the kernels it launches,
// whose fat binaries end up in the router's .nv_fatbin.
#include "kernels.h"

extern "C" int run_mha(void *scores, const unsigned int *mask, const float *hidden, float *scratch, float *pooled,
                       int tokens, int dim, cudaStream_t stream) {
    launch_masked_softmax_f16(scores, mask, tokens, tokens, stream);
    launch_gelu_f32(hidden, scratch, tokens * dim, stream);
    launch_mean_pool_f32(scratch, mask, pooled, tokens, dim, stream);
    return (int)cudaGetLastError();
}
