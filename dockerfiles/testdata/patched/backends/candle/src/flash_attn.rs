// A fixture written for jetbake in the shape of text-embeddings-inference's
// backends/candle/src/flash_attn.rs (main, after jetson-compute-cap.sh 110): the runtime compute caps that
// run flash-attention v2.
use candle::Tensor;

pub(crate) fn flash_attn_varlen(
    q: &Tensor,
    runtime_compute_cap: usize,
) -> Result<Tensor, candle::Error> {
    if runtime_compute_cap == 75 {
        #[cfg(not(feature = "flash-attn-v1"))]
        candle::bail!("Flash attention v1 is not installed. Use `flash-attn-v1` feature.")
    } else if (80..90).contains(&runtime_compute_cap)
        || runtime_compute_cap == 90
        || runtime_compute_cap == 110 // Jetson
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
