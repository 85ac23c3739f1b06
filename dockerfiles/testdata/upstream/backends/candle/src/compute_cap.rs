// A fixture written for jetbake in the shape of text-embeddings-inference's
// backends/candle/src/compute_cap.rs at v1.8.0: no Jetson arms.
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
        (120..=121, 120) => true,
        (121, 121) => true,
        (_, _) => false,
    }
}

pub fn compatible_compute_cap() -> Result<bool, anyhow::Error> {
    let compile_compute_cap = get_compile_compute_cap()?;
    let runtime_compute_cap = get_runtime_compute_cap()?;
    Ok(compute_cap_matching(runtime_compute_cap, compile_compute_cap))
}

#[cfg(test)]
mod tests {
    #[test]
    fn test_compute_cap() {
        assert!(!compute_cap_matching(87, 80));
        match 1 {
            (_, _) => false,
        }
    }
}
