// Stand-in (jetbake test data). TEI's candle build script hands
// CUDA_COMPUTE_CAP to the compiler, which compute_cap.rs reads with env!;
// without the variable it asks nvidia-smi, which a build image has no GPU for.
fn main() {
    println!("cargo:rerun-if-env-changed=CUDA_COMPUTE_CAP");
    if let Ok(cap) = std::env::var("CUDA_COMPUTE_CAP") {
        if cap.parse::<usize>().is_ok() {
            println!("cargo:rustc-env=CUDA_COMPUTE_CAP={cap}");
        }
    }
}
