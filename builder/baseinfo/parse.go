package baseinfo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// VersionJSON is the part of CUDA's version.json that names the toolkit:
//
//	{"cuda": {"name": "CUDA SDK", "version": "12.6.3"}, "cuda_cudart": {...}, ...}
//
// Every CUDA installation since 11.1 writes it at the top of its tree
// (/usr/local/cuda-X.Y/version.json); see NVIDIA's CUDA installation guide,
// https://docs.nvidia.com/cuda/cuda-installation-guide-linux/.
type VersionJSON struct {
	CUDA struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	} `json:"cuda"`
}

// ParseVersionJSON reads the CUDA version of a version.json: the version as
// written ("12.6.3") and parsed. It fails on text that is not a JSON
// object, on a missing "cuda" entry and on a version ParseCUDAVersion does
// not accept.
func ParseVersionJSON(data []byte) (string, computecap.CUDAVersion, error) {
	var doc VersionJSON
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return "", computecap.CUDAVersion{}, fmt.Errorf("not CUDA's version.json: %w", err)
	}
	if doc.CUDA.Version == "" {
		return "", computecap.CUDAVersion{}, errors.New(`not CUDA's version.json: no "cuda": {"version": ...} entry`)
	}
	v, err := computecap.ParseCUDAVersion(doc.CUDA.Version)
	if err != nil {
		return "", computecap.CUDAVersion{}, fmt.Errorf(`"cuda" version: %w`, err)
	}
	return doc.CUDA.Version, v, nil
}

// ParseTegraRelease reads the L4T version of an image's
// /etc/nv_tegra_release ("# R36 (release), REVISION: 4.3, ..." is 36.4.3),
// with the parser the entrypoint uses on a host.
func ParseTegraRelease(data []byte) (computecap.L4TVersion, error) {
	return host.ParseTegraRelease(data)
}

// cudaFromEnv is the value of CUDA_VERSION in an image config's Env, which
// NVIDIA's images set ("CUDA_VERSION=12.6.11"), or "".
func cudaFromEnv(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "CUDA_VERSION="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
