// A fixture where the table moved elsewhere: no compute_cap_matching here.
pub fn compatible_compute_cap(runtime: usize, compile: usize) -> bool {
    crate::table::accepts(runtime, compile)
}
