// Package detect is how jetbake-entrypoint and jetbake-probe see the host
// and the image: it reads the host as a container sees it (package
// computecap/host), finds the GPU's compute capability from the sources
// in order (JETBAKE_COMPUTE_CAP, the CUDA driver through jetbake-cudaprobe,
// nvidia-smi, the device tree, soc_id) or on a Jetson from soc_id and the
// table of Jetson facts with the driver asked only for its CUDA version
// (the fast path), reads /etc/jetbake/image.json, applies the host rule and
// chooses the image's binary for the GPU, or says in one sentence why not.
//
// It imports only the standard library, computecap, computecap/host and
// imagespec: the entrypoint that imports it stays small and static.
// jetbake-entrypoint's documentation describes the sources, the paths and
// the sentences.
package detect
