// Package tei models the parts of text-embeddings-inference's build that
// the stand-in toolchain enforces, for the tests and `make demo`, which
// cannot run rustc, nvcc or a GPU: how cargo resolves the router's features
// (router/Cargo.toml), which cudarc linking mode results, which rustflags
// are in effect and so which CPU the binary is tuned for, and the
// compute-capability table of backends/candle/src/compute_cap.rs.
//
// The stand-in cargo (cmd/cargo) applies these rules to a TEI-shaped source
// tree and writes what it learnt, the Facts, onto a prebuilt router template
// (cmd/router), a real aarch64 ELF linked as TEI's router would be for that
// linking mode. The router reads its Facts back at start: the compute-cap
// gate, the CPU it needs, its version and commit.
package tei
