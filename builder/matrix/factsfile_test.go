package matrix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/inputfile"
	"github.com/jetbake/jetbake/computecap"
)

// A facts file on its own (doctor --facts): the declared 7.3 joins the
// table, and the problems are a matrix's, in the file, at the field.
func TestLoadFacts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(doc), 0o644))
		return p
	}
	tbl, warnings, err := LoadFacts(write("jetson-facts.json", `{"jetpacks": [`+jetPack73Row+`]}`))
	require.NoError(t, err)
	require.Empty(t, warnings)
	rel, ok := tbl.ReleaseForL4T(computecap.L4TVersion{Major: 39, Minor: 3})
	require.True(t, ok, "the declared row is in the table")
	require.Equal(t, "7.3", rel.JetPack)
	cuda, ok := tbl.DriverCUDAForL4T(computecap.L4TVersion{Major: 39, Minor: 3})
	require.True(t, ok)
	require.Equal(t, "13.3", cuda.String())

	row72 := strings.NewReplacer(`"7.3"`, `"7.2"`, `"39.3.0"`, `"39.2.0"`, `"13.3"`, `"13.1"`).Replace(jetPack73Row)
	bad := write("contradicts.json", "{\n  \"jetpacks\": [\n    "+row72+"\n  ]\n}\n")
	_, _, err = LoadFacts(bad)
	var verr *ValidationError
	require.ErrorAs(t, err, &verr)
	require.Equal(t, bad+`:3:49: jetpacks[0].cuda: "13.1": contradicts jetbake's table, whose row for JetPack 7.2 has cuda "13.2" `+
		`(jetPackRows in computecap/facts.go); jetbake's row wins; fix: remove the declared row, or set cuda to "13.2" if NVIDIA's notes agree`,
		verr.Error())

	_, _, err = LoadFacts(write("unknown.json", `{"jetpacks": [{"jetpack": "7.3", "cudaa": "13.3"}]}`))
	require.ErrorAs(t, err, &verr)
	require.Contains(t, verr.Error(), `unknown.json:1:43: jetpacks[0].cudaa: unknown field; fix: did you mean "cuda"?`)

	_, _, err = LoadFacts(filepath.Join(dir, "missing.json"))
	var ferr *inputfile.Error
	require.ErrorAs(t, err, &ferr)
}
