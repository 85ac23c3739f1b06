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

// UnprovenCUDA is the table, newest line first. TEI's CUDA 13 support
// depends on its cudarc version (0.13 loads libcublas.so.12 by name), and
// only Thor runs CUDA 13 among the Jetsons until JetPack 7.2 (Orin).
var UnprovenCUDA = []Unproven{
	{MinCUDA: CUDAVersion{Major: 13}, ProvenOn: Capability{Major: 11, Minor: 0},
		Why: "TEI's CUDA 13 support is unproven (cudarc 0.13 loads libcublas.so.12 by name): below supported until a router built for CUDA 13 has run on a Jetson Thor"},
}

// UnprovenFor returns the row that applies to a release built with cuda.
func UnprovenFor(cuda CUDAVersion) (Unproven, bool) {
	for _, u := range UnprovenCUDA {
		if !cuda.Less(u.MinCUDA) {
			return u, true
		}
	}
	return Unproven{}, false
}
