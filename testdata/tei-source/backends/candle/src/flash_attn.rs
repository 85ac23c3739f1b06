// The flash-attention gate in the shape of text-embeddings-inference
// v1.9.3's backends/candle/src/flash_attn.rs (jetbake test data): v2 runs
// only for the runtime compute caps the "else if" lists, so a Thor (110)
// fails at the backend's health check with "GPU with CUDA capability 110
// is not supported". Dockerfile-jetson runs dockerfiles/jetson-compute-cap.sh
// on it; the stand-in cargo compiles the gate into the router.
use candle::Tensor;

pub(crate) fn flash_attn_varlen(q: &Tensor, runtime_compute_cap: usize) -> Result<Tensor, candle::Error> {
    if runtime_compute_cap == 75 {
        #[cfg(not(feature = "flash-attn-v1"))]
        candle::bail!("Flash attention v1 is not installed. Use `flash-attn-v1` feature.")
    } else if (80..90).contains(&runtime_compute_cap)
        || runtime_compute_cap == 90
        || runtime_compute_cap == 100
        || runtime_compute_cap == 120
    {
        #[cfg(feature = "flash-attn")]
        {
            return Ok(q.clone());
        }
        #[cfg(not(feature = "flash-attn"))]
        candle::bail!("Flash attention is not installed. Use `flash-attn` feature.")
    }
    candle::bail!(
        "GPU with CUDA capability {} is not supported",
        runtime_compute_cap
    );
}
