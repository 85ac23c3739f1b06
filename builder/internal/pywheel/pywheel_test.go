package pywheel

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func testDist() Dist {
	return Dist{Name: "torchy-helper", Version: "1.0.0", Tag: "py3-none-any", RequiresPython: ">=3.9",
		Requires: []string{"torch==2.9.0"}, ConsoleScripts: map[string]string{"torchy": "torchy_helper:main"},
		Files: map[string][]byte{"torchy_helper/__init__.py": []byte("import torch\n")}}
}

// checkRecord checks every RECORD line as pip does on install: the hash
// and size of the file, and RECORD itself without a hash.
func checkRecord(t *testing.T, files map[string][]byte, record string) {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(record), "\n")
	require.Len(t, lines, len(files), "one line per file")
	for _, line := range lines {
		parts := strings.Split(line, ",")
		require.Len(t, parts, 3, line)
		if strings.HasSuffix(parts[0], "/RECORD") {
			require.Equal(t, ",,", line[len(parts[0]):])
			continue
		}
		data, ok := files[parts[0]]
		require.True(t, ok, parts[0])
		sum := sha256.Sum256(data)
		require.Equal(t, "sha256="+base64.RawURLEncoding.EncodeToString(sum[:]), parts[1])
		require.Equal(t, fmt.Sprint(len(data)), parts[2])
	}
}

func TestWheel(t *testing.T) {
	d := testDist()
	require.Equal(t, "torchy_helper-1.0.0-py3-none-any.whl", d.Filename())
	data, err := d.Wheel()
	require.NoError(t, err)
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	require.NoError(t, err)
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		files[f.Name], err = io.ReadAll(rc)
		require.NoError(t, err)
	}
	info := "torchy_helper-1.0.0.dist-info/"
	require.Equal(t, "Metadata-Version: 2.1\nName: torchy-helper\nVersion: 1.0.0\nRequires-Python: >=3.9\nRequires-Dist: torch==2.9.0\n", string(files[info+"METADATA"]))
	require.Contains(t, string(files[info+"WHEEL"]), "Root-Is-Purelib: true\nTag: py3-none-any\n")
	require.Equal(t, "[console_scripts]\ntorchy = torchy_helper:main\n", string(files[info+"entry_points.txt"]))
	checkRecord(t, files, string(files[info+"RECORD"]))
}

func TestInstalled(t *testing.T) {
	files, err := Dist{Name: "torch", Version: "2.8.0a0+5228986c39.nv25.06", Tag: "cp311-cp311-linux_aarch64",
		Files: map[string][]byte{"torch/__init__.py": nil}}.Installed()
	require.NoError(t, err)
	info := "torch-2.8.0a0+5228986c39.nv25.06.dist-info/"
	require.Equal(t, "pip\n", string(files[info+"INSTALLER"]))
	require.Contains(t, string(files[info+"WHEEL"]), "Root-Is-Purelib: false\n")
	checkRecord(t, files, string(files[info+"RECORD"]))
}

func TestBadDist(t *testing.T) {
	for _, d := range []Dist{{Name: "a b", Version: "1", Tag: "py3-none-any"}, {Name: "a", Version: "", Tag: "py3-none-any"},
		{Name: "a", Version: "1", Tag: "py3"}} {
		_, err := d.Wheel()
		require.Error(t, err, "%+v", d)
	}
	require.Equal(t, "torchy-helper", Normalize("Torchy_Helper"))
}
