package imagebuild

// Paths of jetbake's own files in every image.
const (
	// EntrypointPath is the entrypoint binary, the image's ENTRYPOINT.
	EntrypointPath = "/usr/local/bin/jetbake-entrypoint"
	// CUDAProbePath is the helper that asks the CUDA driver for the GPU.
	CUDAProbePath = "/usr/local/bin/jetbake-cudaprobe"
	// ProbePath writes hardware evidence (docker run --entrypoint jetbake-probe).
	ProbePath = "/usr/local/bin/jetbake-probe"
)

// KeyToolVersion is the label and annotation that holds the version of the
// jetbake that built the image, apart from the revision of the user's
// repository (org.opencontainers.image.revision).
const KeyToolVersion = "io.jetbake.version"
