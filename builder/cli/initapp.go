package cli

import (
	_ "embed" // the app templates
	"path/filepath"
)

// AppPyTorch is the value of `init --app` that writes a PyTorch app's
// matrix and Dockerfile.
const AppPyTorch = "pytorch"

// pytorchMatrix is the matrix `jetbake init --app pytorch` writes: JetPack
// 6.2 on Orin on NVIDIA's 25.06-py3-igpu container, JetPack 7.0 on Thor on
// the unified SBSA 25.08-py3. REPOSITORY and SOURCE are replaced.
//
//go:embed initapp/pytorch.matrix.json
var pytorchMatrix string

// pytorchDockerfile is the Dockerfile written beside it, for an app with a
// pyproject.toml.
//
//go:embed initapp/pytorch.Dockerfile
var pytorchDockerfile []byte

// appStarter returns the starter matrix of an app framework and the
// Dockerfile init writes beside it.
func appStarter(app string) (string, []byte, error) {
	if app != AppPyTorch {
		return "", nil, usageErrorf("--app %q: jetbake knows %s; leave --app out for a router", app, AppPyTorch)
	}
	return pytorchMatrix, pytorchDockerfile, nil
}

// appDockerfile is where init writes an app's Dockerfile: beside the matrix.
func appDockerfile(matrixPath string) string {
	return filepath.Join(filepath.Dir(matrixPath), "Dockerfile")
}
