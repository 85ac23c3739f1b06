// The compute-capability gate in the shape of text-embeddings-inference
// v1.9.3's backends/candle/src/compute_cap.rs (jetbake test data): the table
// has no Jetson arm. Dockerfile-jetson runs dockerfiles/jetson-compute-cap.sh
// on it before the stand-in cargo compiles compute_cap_matching's arms into
// the router, which asks the CUDA driver for the GPU at start and refuses
// one the table does not accept.
use anyhow::Context;

pub fn get_compile_compute_cap() -> Result<usize, anyhow::Error> {
    env!("CUDA_COMPUTE_CAP")
        .parse::<usize>()
        .context("Could not retrieve compile time CUDA_COMPUTE_CAP")
}

fn compute_cap_matching(runtime_compute_cap: usize, compile_compute_cap: usize) -> bool {
    match (runtime_compute_cap, compile_compute_cap) {
        (75, 75) => true,
        (80..=89, 80) => true,
        (86..=89, 80..=86) => true,
        (89, 89) => true,
        (90, 90) => true,
        (100, 100) => true,
        (120, 120) => true,
        (_, _) => false,
    }
}
