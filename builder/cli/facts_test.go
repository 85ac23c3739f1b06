package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// facts prints the shipped table in the shape a matrix declares rows in:
// JSON that decodes back into the same rows, and text of one row a line.
func TestFactsCommand(t *testing.T) {
	r := run(t, "facts", "--format", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var got computecap.Facts
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &got))
	require.Equal(t, computecap.DefaultTable().Rows(), got)

	r = run(t, "facts")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "jetpacks: JetPack releases\n")
	require.Contains(t, r.stdout, `  {"jetpack":"7.2","l4t":"39.2.0","cuda":"13.2","ubuntu":"24.04","flavour":"sbsa","rule":"driver-cuda","sms":["8.7","11.0"],`)
	require.Contains(t, r.stdout, "cross_targets: cross build rows\n")

	r = run(t, "facts", "extra")
	require.Equal(t, 2, r.code)
}

// validate names the release that rests on declared facts, and the facts
// file, line and field of a row that contradicts the table.
func TestValidateDeclaredFacts(t *testing.T) {
	row := `{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04", "flavour": "sbsa", "rule": "driver-cuda",
      "sms": ["8.7", "11.0"], "driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/nvgpu", "family": "Orin", "driver": {"name": "nvgpu", "nodes": [["/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"], ["/dev/nvmap"]]}}, {"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor", "driver": {"name": "OpenRM", "nodes": [["/dev/nvidiactl"], ["/dev/nvidia0"]]}}]}`
	path := matrixCopy(t, func(doc map[string]any) {
		rel := map[string]any{}
		for k, v := range releaseOf(doc, 4) {
			rel[k] = v
		}
		rel["name"], rel["jetpack"], rel["l4t"], rel["cuda"] = "jetpack7.3", "7.3", "39.3.0", "13.3"
		rel["build_base"], rel["runtime_base"] = "nvcr.io/nvidia/cuda:13.3.0-devel-ubuntu24.04", "nvcr.io/nvidia/cuda:13.3.0-runtime-ubuntu24.04"
		delete(rel, "cross_build_base") // the table's cross recipe knows no CUDA 13.3 devel image: QEMU on amd64
		doc["releases"] = append(doc["releases"].([]any), rel)
		doc["facts"] = "jetson-facts.json"
	})
	factsFile := filepath.Join(filepath.Dir(path), "jetson-facts.json")
	require.NoError(t, os.WriteFile(factsFile, []byte("{\"jetpacks\": [\n  "+row+"\n]}\n"), 0o644))
	r := run(t, "validate", "-f", path)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, path+": 6 releases, 9 SM targets, 13 tags, on stage runtime-base: ok\n"+
		path+": release jetpack7.3 rests on declared facts (JetPack 7.3, in jetson-facts.json): io.jetbake.facts=declared\n", r.stdout)

	r = run(t, "plan", "-f", path, "--release", "jetpack7.3")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "  facts:        rests on declared facts (JetPack 7.3, in jetson-facts.json) (io.jetbake.facts=declared)\n")

	bad := row + ",\n  " +
		strings.NewReplacer(`"7.3"`, `"7.2"`, `"39.3.0"`, `"39.2.0"`, `"13.3"`, `"13.1"`).Replace(row)
	require.NoError(t, os.WriteFile(factsFile, []byte("{\"jetpacks\": [\n  "+bad+"\n]}\n"), 0o644))
	r = run(t, "validate", "-f", path)
	require.Equal(t, 1, r.code)
	require.Equal(t, factsFile+`:4:47: jetpacks[1].cuda: "13.1": contradicts jetbake's table, whose row for JetPack 7.2 has cuda "13.2" `+
		`(jetPackRows in computecap/facts.go); jetbake's row wins; fix: remove the declared row, or set cuda to "13.2" if NVIDIA's notes agree`+"\n", r.stderr)
}
