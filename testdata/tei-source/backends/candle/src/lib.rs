// Stand-in (jetbake test data): no Rust is compiled.
#[cfg(feature = "cuda")]
mod compute_cap;
#[cfg(feature = "cuda")]
mod flash_attn;
