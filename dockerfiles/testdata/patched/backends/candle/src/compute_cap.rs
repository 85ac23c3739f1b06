// A fixture in the shape of text-embeddings-inference's compute_cap.rs with
// the Jetson arms already present, as in its Jetson pull request.
fn compute_cap_matching(runtime_compute_cap: usize, compile_compute_cap: usize) -> bool {
    match (runtime_compute_cap, compile_compute_cap) {
        (75, 75) => true,
        (80..=89, 80) => true,
        (87, 87) => true,  // Jetson Orin
        (110,110) => true,
        (_, _) => false,
    }
}
