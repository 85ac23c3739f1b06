package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/jetbake/jetbake/builder/cli"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// StandinRouter is the stand-in router's folder, relative to the checkout.
const StandinRouter = "testdata/standin-router"

// AllowStandin grants a demo matrix read access to the stand-in router of
// the checkout at repoRoot, as a user grants a matrix a folder outside its
// repository: the demo matrices are written into temporary folders, so the
// router they name lies outside theirs. It is the package API's
// `--allow fs.read=PATH`; AllowStandinFlags is the flag itself.
func AllowStandin(repoRoot string) matrix.Option {
	return matrix.WithAllowRead(filepath.Join(repoRoot, StandinRouter))
}

// AllowStandinFlags is `--allow fs.read=<the stand-in router>` for the
// jetbake commands that read a demo matrix.
func AllowStandinFlags(repoRoot string) []string {
	return []string{"--" + cli.AllowFlag, "fs.read=" + filepath.Join(repoRoot, StandinRouter)}
}

// WriteDemoMatrix writes, at out, the real matrix.json with the stand-in
// router in place of the real one and the images going to registry: the
// demo and the tests build exactly the shipped releases, bases and tags.
// Each entry of mutate can change the matrix further (the tests add a release).
func WriteDemoMatrix(repoRoot, registry, out string, mutate ...func(m map[string]any)) error {
	data, err := os.ReadFile(filepath.Join(repoRoot, "matrix.json"))
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("matrix.json: %w", err)
	}
	router, ok := m["router"].(map[string]any)
	image, ok2 := m["image"].(map[string]any)
	if !ok || !ok2 {
		return fmt.Errorf("matrix.json: router or image is not an object")
	}
	routerDir := filepath.Join(repoRoot, StandinRouter)
	router["context"] = routerDir
	router["dockerfile"] = filepath.Join(routerDir, "Dockerfile")
	router["target"] = "router"
	router["output"] = "/out/router"
	image["repository"] = registry + "/jetbake/text-embeddings-router"
	delete(m, "$schema")
	for _, f := range mutate {
		f(m)
	}
	data, err = json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(out, data, 0o644)
}

// LoadPlan loads and plans a matrix file, with the matrix options given
// (AllowStandin for a demo matrix).
func LoadPlan(path string, opts ...matrix.Option) (*plan.Plan, error) {
	m, err := matrix.Load(path, opts...)
	if err != nil {
		return nil, err
	}
	return plan.New(m)
}

// NoComputeCapRelease is the only release of the matrix OnlyNoComputeCap writes.
const NoComputeCapRelease = "jetpack6.2-no-compute-cap"

// OnlyNoComputeCap keeps one release: a copy of jetpack6.2, named
// NoComputeCapRelease, whose router stage leaves out jetson-compute-cap.sh
// as upstream's Dockerfile does; on an Orin it must refuse to start with
// TEI's sentence. Its image is tagged "{version}-{release}", so that its
// tags are its own.
func OnlyNoComputeCap(m map[string]any) {
	for _, r := range m["releases"].([]any) {
		if r.(map[string]any)["name"] != "jetpack6.2" {
			continue
		}
		c := map[string]any{}
		for k, v := range r.(map[string]any) {
			c[k] = v
		}
		c["name"] = NoComputeCapRelease
		c["tags"] = []any{}
		c["build_args"] = map[string]any{"JETBAKE_TEST_NO_COMPUTE_CAP": "1"}
		m["releases"] = []any{c}
		break
	}
	m["image"].(map[string]any)["tags"] = []any{"{version}-{release}"}
}
