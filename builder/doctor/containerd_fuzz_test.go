package doctor

import (
	"io/fs"
	"path"
	"testing"

	"github.com/pelletier/go-toml/v2"
	"github.com/stretchr/testify/require"
)

// inMemory is files held in a map, for the fuzz target.
type inMemory map[string]string

func (m inMemory) read(rel string) ([]byte, error) {
	data, ok := m[rel]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(data), nil
}

func (m inMemory) glob(pattern string) []string {
	var out []string
	for name := range m {
		if ok, _ := path.Match(pattern, name); ok {
			out = append(out, name)
		}
	}
	return out
}

func (m inMemory) list(rel string) []string {
	var out []string
	for name := range m {
		if path.Dir(name) == rel {
			out = append(out, path.Base(name))
		}
	}
	return out
}

// FuzzContainerdRuntime checks the reading of a containerd configuration
// and a drop-in on any two inputs: it does not panic, it answers the same
// twice, it names only the files there are, a runtimes.nvidia of the
// top-level file is always found, and a file that is not TOML is an error.
func FuzzContainerdRuntime(f *testing.F) {
	f.Add(containerdImports, nvidiaDropIn)
	f.Add("version = 2\n", nvidiaDropIn)
	f.Add(containerdV3, "")
	f.Add(containerdV1, "version = 2\n[plugins\n")
	f.Add("imports = [\"conf.d/*.toml\", 3]\nversion = 9\n", "version = 1\n[plugins.cri.containerd.runtimes.nvidia]\n")
	f.Fuzz(func(t *testing.T, config, dropIn string) {
		host := inMemory{containerdConfig: config, containerdDropIn + "/99-nvidia.toml": dropIn}
		got := readContainerdRuntime(host, containerdConfig, containerdDropIn)
		require.Equal(t, got, readContainerdRuntime(host, containerdConfig, containerdDropIn), "two reads of the same files differ")
		require.True(t, got.found)
		names := []string{"", "/" + containerdConfig, "/" + containerdDropIn + "/99-nvidia.toml"}
		require.Contains(t, names, got.file)
		for _, u := range got.unimported {
			require.Contains(t, names[2:], u)
		}
		var doc map[string]any
		if toml.Unmarshal([]byte(config), &doc) != nil {
			require.Error(t, got.err, "a file that is not TOML is an error")
			return
		}
		if bin, ok := nvidiaRuntime(doc); ok && got.err == nil {
			require.NotEmpty(t, got.file, "the top-level file's runtimes.nvidia")
			if got.file == names[1] {
				require.Equal(t, bin, got.binary)
			}
		}
	})
}
