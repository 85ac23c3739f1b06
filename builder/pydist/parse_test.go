package pydist_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/pydist"
)

func TestNormalize(t *testing.T) {
	for in, want := range map[string]string{"Typing_Extensions": "typing-extensions", "zope.interface": "zope-interface",
		"A-_.b": "a-b", " torch ": "torch", "_x": "x", "": ""} {
		require.Equal(t, want, pydist.Normalize(in), in)
	}
}

func TestParseMetadata(t *testing.T) {
	n, v := pydist.ParseMetadata(strings.NewReader("Metadata-Version: 2.1\r\nname: Torch\r\nSummary: a\r\n  continued: x\r\nVERSION:  2.8.0 \r\n\r\nName: body\n"))
	require.Equal(t, "Torch", n)
	require.Equal(t, "2.8.0", v)
	n, v = pydist.ParseMetadata(strings.NewReader("Metadata-Version: 2.1\n\nName: body\nVersion: 9\n"))
	require.Empty(t, n+v, "headers end at the first empty line")
	n, _ = pydist.ParseMetadata(strings.NewReader(strings.Repeat("X-Pad: "+strings.Repeat("a", 1000)+"\n", 100) + "Name: late\n"))
	require.Empty(t, n, "only the first 64 KiB are read")
}

func TestParseConstraints(t *testing.T) {
	pins := pydist.ParseConstraints(strings.NewReader(`# comment
-c other.txt
--index-url https://example.invalid/simple
torch==2.8.0a0+5228986c39.nv25.6
Numpy == 1.26.4 ; python_version >= "3.10"  # pinned
apex[fast]==0.1 \
  ; platform_machine == "aarch64"
scipy>=1.11,<2
opencv===4.10.0
./local/wheel.whl
https://example.invalid/x.whl
torch==9  # a second line for the same package is left out
`))
	require.Equal(t, []pydist.Pin{
		{Name: "torch", Version: "2.8.0a0+5228986c39.nv25.6", Spec: "torch==2.8.0a0+5228986c39.nv25.6"},
		{Name: "numpy", Version: "1.26.4", Spec: "Numpy == 1.26.4"},
		{Name: "apex", Version: "0.1", Spec: "apex[fast]==0.1"},
		{Name: "scipy", Spec: "scipy>=1.11,<2"},
		{Name: "opencv", Version: "4.10.0", Spec: "opencv===4.10.0"},
	}, pins)
}
