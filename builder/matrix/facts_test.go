package matrix

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// jetPack73Row is a fictional JetPack 7.3 on Orin and Thor, a row as
// `jetbake facts --format json` prints one.
const jetPack73Row = `{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
      "flavour": "sbsa", "rule": "driver-cuda", "sms": ["8.7", "11.0"],
      "driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/nvgpu", "family": "Orin", "driver": {"name": "nvgpu", "nodes": [["/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"], ["/dev/nvmap"]]}},
                      {"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor", "driver": {"name": "OpenRM", "nodes": [["/dev/nvidiactl"], ["/dev/nvidia0"]]}}]}`

// with73 returns the shipped matrix with a JetPack 7.3 release and facts
// set to facts (a file name or rows; nil for none).
func with73(t *testing.T, facts any, tier string) []byte {
	t.Helper()
	doc := shippedTree(t)
	rel := map[string]any{}
	for k, v := range release(doc, 4) {
		rel[k] = v
	}
	rel["name"], rel["jetpack"], rel["l4t"], rel["cuda"], rel["tier"] = "jetpack7.3", "7.3", "39.3.0", "13.3", tier
	rel["build_base"] = "nvcr.io/nvidia/cuda:13.3.0-devel-ubuntu24.04"
	delete(rel, "cross_build_base") // the table's cross recipe knows no CUDA 13.3 devel image: QEMU on amd64
	rel["runtime_base"] = "nvcr.io/nvidia/cuda:13.3.0-runtime-ubuntu24.04"
	doc["releases"] = append(doc["releases"].([]any), rel)
	if facts != nil {
		doc["facts"] = facts
	}
	data, err := json.MarshalIndent(doc, "", "  ")
	require.NoError(t, err)
	return data
}

func rows(t *testing.T, doc string) any {
	t.Helper()
	var v any
	require.NoError(t, json.Unmarshal([]byte(doc), &v))
	return v
}

func TestUnknownJetPackNamesFacts(t *testing.T) {
	_, err := Parse(with73(t, nil, "candidate"))
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	fe := find(verr.Errors, "releases[5].jetpack", "unknown JetPack version")
	require.NotNil(t, fe, verr.Error())
	require.Contains(t, fe.Fix, "declare it under facts in the matrix")
}

func TestDeclaredJetPackInline(t *testing.T) {
	m, err := Parse(with73(t, rows(t, `{"jetpacks": [`+jetPack73Row+`]}`), "candidate"))
	require.NoError(t, err)
	r, ok := m.Release("jetpack7.3")
	require.True(t, ok)
	require.Equal(t, "rests on declared facts (JetPack 7.3, in the matrix)", m.FactsNote(r))
	r72, _ := m.Release("jetpack7.2")
	require.Empty(t, m.FactsNote(r72))
	require.True(t, m.Facts().DeclaredJetPack("7.3"))
	require.Empty(t, m.Warnings)
}

func TestDeclaredSupportedWarns(t *testing.T) {
	m, err := Parse(with73(t, rows(t, `{"jetpacks": [`+jetPack73Row+`]}`), "supported"))
	require.NoError(t, err)
	require.Len(t, m.Warnings, 1)
	require.Equal(t, "releases[5].tier", m.Warnings[0].Path)
	require.Contains(t, m.Warnings[0].Message, "release jetpack7.3 rests on declared facts (JetPack 7.3, in the matrix): only evidence from a real Jetson can back supported")
}

// writeFacts writes the matrix with facts in jetson-facts.json beside it.
func writeFacts(t *testing.T, facts string) string {
	t.Helper()
	dir := t.TempDir()
	doc := with73(t, "jetson-facts.json", "candidate")
	var tree map[string]any
	require.NoError(t, json.Unmarshal(doc, &tree))
	section(tree, "router")["context"] = "."
	section(tree, "router")["dockerfile"] = "Dockerfile"
	data, err := json.MarshalIndent(tree, "", "  ")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "matrix.json"), data, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM scratch AS router\nFROM ${RUNTIME_BASE} AS runtime-base\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "jetson-facts.json"), []byte(facts), 0o644))
	return filepath.Join(dir, "matrix.json")
}

func TestDeclaredFactsFile(t *testing.T) {
	path := writeFacts(t, "{\n  \"jetpacks\": [\n    "+jetPack73Row+"\n  ]\n}\n")
	m, err := Load(path)
	require.NoError(t, err)
	r, _ := m.Release("jetpack7.3")
	require.Equal(t, "rests on declared facts (JetPack 7.3, in jetson-facts.json)", m.FactsNote(r))
}

// A declared row that contradicts a built-in one: the built-in wins, and
// validate names the declared file, line and field, and the built-in row.
func TestDeclaredRowContradictsTable(t *testing.T) {
	row72 := strings.NewReplacer(`"7.3"`, `"7.2"`, `"39.3.0"`, `"39.2.0"`, `"13.3"`, `"13.1"`).Replace(jetPack73Row)
	path := writeFacts(t, "{\n  \"jetpacks\": [\n    "+jetPack73Row+",\n    "+row72+"\n  ]\n}\n")
	_, err := Load(path)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Len(t, verr.Errors, 1, verr.Error())
	factsFile := filepath.Join(filepath.Dir(path), "jetson-facts.json")
	require.Equal(t, factsFile+`:7:49: jetpacks[1].cuda: "13.1": contradicts jetbake's table, whose row for JetPack 7.2 has cuda "13.2" `+
		`(jetPackRows in computecap/facts.go); jetbake's row wins; fix: remove the declared row, or set cuda to "13.2" if NVIDIA's notes agree`,
		verr.Error())
}

// When jetbake's table gains a row the user declared, validate says the
// declaration can go.
func TestDeclaredRowTheTableHolds(t *testing.T) {
	row72 := strings.NewReplacer(`"7.3"`, `"7.2"`, `"39.3.0"`, `"39.2.0"`, `"13.3"`, `"13.2"`).Replace(jetPack73Row)
	path := writeFacts(t, "{\n  \"jetpacks\": [\n    "+jetPack73Row+",\n    "+row72+"\n  ]\n}\n")
	m, err := Load(path)
	require.NoError(t, err)
	require.Len(t, m.Warnings, 1)
	require.Equal(t, filepath.Join(filepath.Dir(path), "jetson-facts.json")+":7:5: warning: jetpacks[1]: jetbake's table now holds JetPack 7.2 as declared "+
		"(jetPackRows in computecap/facts.go); fix: remove the declared row: the declaration can go\n", WarningLines(path, m.Warnings))
}

func TestDeclaredFactsFileProblems(t *testing.T) {
	tests := []struct{ name, facts, want string }{
		{"unknown field", `{"jetpacks": [{"jetpack": "7.3", "cudaa": "13.3"}]}`,
			`jetson-facts.json:1:43: jetpacks[0].cudaa: unknown field; fix: did you mean "cuda"?`},
		{"bad CUDA", `{"jetpacks": [{"jetpack": "7.3", "cuda": "13.x"}]}`,
			`jetson-facts.json:1:42: jetpacks[0].cuda: "13.x": CUDA version "13.x" is not valid`},
		{"broken rule", "{\"jetpacks\": [\n" + strings.Replace(jetPack73Row, `"39.3.0"`, `"38.5.0"`, 1) + "]}",
			`jetson-facts.json:2:27: jetpacks[0].l4t: "38.5.0": is out of order: JetPack 7.2.1 (L4T 39.2.1) is older than JetPack 7.3 but its L4T is newer than it`},
		{"not JSON", `{"jetpacks": [`, `jetson-facts.json:1:15: $:`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFacts(t, tt.facts)
			_, err := Load(path)
			var verr *ValidationError
			require.ErrorAs(t, err, &verr)
			require.Contains(t, verr.Error(), filepath.Join(filepath.Dir(path), tt.want))
		})
	}
	path := filepath.Join(t.TempDir(), "matrix.json")
	require.NoError(t, os.WriteFile(path, with73(t, "nope.json", "candidate"), 0o644))
	_, err := Load(path)
	require.ErrorContains(t, err, `facts: "nope.json": facts file `+filepath.Join(filepath.Dir(path), "nope.json")+" does not exist")
}

// GitHub annotations put a facts file's problem on its own file's line.
func TestDeclaredFactsAnnotations(t *testing.T) {
	path := writeFacts(t, `{"jetpacks": [{"jetpack": "7.3", "cudaa": "13.3"}]}`)
	_, err := Load(path)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	factsFile := filepath.Join(filepath.Dir(path), "jetson-facts.json")
	require.Contains(t, verr.GitHubAnnotations(), "::error file="+strings.ReplaceAll(factsFile, ":", "%3A")+",line=1,col=43,title=jetpacks[0].cudaa::")
	require.Contains(t, verr.GitHubAnnotations(), "::error file="+strings.ReplaceAll(path, ":", "%3A")+",line=")
}

// Parse reads the facts file only from the folder WithDir names.
func TestParseFactsFileWithDir(t *testing.T) {
	path := writeFacts(t, "{\"jetpacks\": [\n  "+jetPack73Row+"\n]}\n")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	_, err = Parse(data)
	require.ErrorContains(t, err, `facts: "jetson-facts.json": names a file, and this matrix was not read from a file`)
	m, err := Parse(data, WithDir(filepath.Dir(path)))
	require.NoError(t, err)
	r, _ := m.Release("jetpack7.3")
	require.Equal(t, "rests on declared facts (JetPack 7.3, in jetson-facts.json)", m.FactsNote(r))
}
