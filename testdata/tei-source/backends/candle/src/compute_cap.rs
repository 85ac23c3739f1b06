// The stand-in router's compute-capability table, in the form of
// text-embeddings-inference's backends/candle/src/compute_cap.rs at the
// version the matrix pins (v1.8.0): no Jetson arms. The stand-in build runs
// dockerfiles/jetson-compute-cap.sh on it, as the real build does, then
// compile-table.sh turns the function's arms into the stand-in router's gate.
// Written for jetbake; not TEI's code.
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
        (120..=121, 120) => true,
        (121, 121) => true,
        (_, _) => false,
    }
}
