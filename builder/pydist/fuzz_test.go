package pydist_test

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/pydist"
)

func FuzzParseMetadata(f *testing.F) {
	f.Add([]byte("Metadata-Version: 2.1\nName: torch\nVersion: 2.8.0\n\nbody"))
	f.Add([]byte("Name:\n\tcont\nVersion:1\r\n"))
	f.Add([]byte(":\n:::\nname"))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, v := pydist.ParseMetadata(bytes.NewReader(data))
		require.NotContains(t, n+v, "\n")
		require.Equal(t, strings.TrimSpace(n), n)
		require.LessOrEqual(t, len(n)+len(v), len(data))
	})
}

func FuzzParseConstraints(f *testing.F) {
	f.Add([]byte("torch==2.8.0\n# c\n-c x\nnumpy == 1 ; python_version > \"3\"\n"))
	f.Add([]byte("a[b]===1 \\\n; x\n\\\n==\n[]==\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, p := range pydist.ParseConstraints(bytes.NewReader(data)) {
			require.NotEmpty(t, p.Name)
			require.Equal(t, pydist.Normalize(p.Name), p.Name)
			require.NotContains(t, p.Version, " ")
			require.NotContains(t, p.Spec, "\n")
			if utf8.Valid(data) {
				require.True(t, utf8.ValidString(p.Spec))
			}
		}
	})
}
