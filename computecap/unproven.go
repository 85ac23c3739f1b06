package computecap

// Unproven is a CUDA line the router has not been shown to run on: a
// release built with it stays below "supported" until evidence shows its
// router ran on the GPU named here.
type Unproven struct {
	// MinCUDA is the first CUDA version of the line, e.g. 13.0.
	MinCUDA CUDAVersion
	// ProvenOn is the GPU whose evidence lifts the limit: Thor (11.0).
	ProvenOn Capability
	// Why says it in one line, for `jetbake support` and validate.
	Why string
}

// unprovenCUDA is the table, newest line first; UnprovenFor reads it. TEI's CUDA 13 support
// depends on its cudarc version: TEI v1.8.0 to v1.9.3 (and main) pin cudarc
// 0.13.5 (a fork) and select its cuda-12020 bindings (the workspace
// Cargo.toml); cudarc has no CUDA 13 feature before 0.17.1 (cuda-13000).
// And only Thor runs CUDA 13 among the Jetsons until JetPack 7.2 (Orin).
var unprovenCUDA = []Unproven{
	{MinCUDA: CUDAVersion{Major: 13}, ProvenOn: Capability{Major: 11, Minor: 0},
		Why: "TEI's CUDA 13 support is unproven (TEI v1.8.0 to v1.9.3 pin cudarc 0.13.5, which has no CUDA 13 feature, cuda-13000 first being in cudarc 0.17.1, so its router compiles against CUDA 12.2 bindings): below supported until a router built for CUDA 13 has run on a Jetson Thor"},
}

// UnprovenFor returns (a copy of) the row that applies to a release built
// with cuda.
func UnprovenFor(cuda CUDAVersion) (Unproven, bool) {
	for _, u := range unprovenCUDA {
		if !cuda.Less(u.MinCUDA) {
			return u, true
		}
	}
	return Unproven{}, false
}
