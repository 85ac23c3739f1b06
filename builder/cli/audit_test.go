package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/crane"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/fatbin"
	"github.com/jetbake/jetbake/builder/fatbin/fatbintest"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// pushAuditImage pushes an arm64 image of files, with the sm-targets
// label when targets is not empty.
func pushAuditImage(t *testing.T, ref string, targets string, files map[string][]byte) {
	t.Helper()
	img, err := crane.Image(files)
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture = "linux", "arm64"
	if targets != "" {
		cf.Config.Labels = map[string]string{"io.jetbake.sm-targets": targets}
	}
	img, err = mutate.ConfigFile(img, cf)
	require.NoError(t, err)
	r, err := name.ParseReference(ref)
	require.NoError(t, err)
	require.NoError(t, remote.Write(r, img))
}

func cudaELF(codes ...fatbintest.Code) []byte { return fatbintest.ELF(fatbintest.NVCC(codes...)...) }

// TestAudit: `jetbake audit` on a registry on 127.0.0.1: the table, the
// last sentence and the exit status, with and without --gpu, JSON, and
// bad input.
func TestAudit(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := testregistry.New(t)
	pushAuditImage(t, host+"/acme/router:good", "8.7,11.0", map[string][]byte{
		"usr/local/bin/router-87":  cudaELF(fatbintest.Cubin("8.7")),
		"usr/local/bin/router-110": cudaELF(fatbintest.Cubin("11.0")),
		"usr/lib/libkernels.so":    cudaELF(fatbintest.Cubin("8.7"), fatbintest.Cubin("11.0")),
		"etc/jetbake/image.json": []byte(`{"schema_version":1,"targets":[{"sm":"8.7","path":"/usr/local/bin/router-87"},` +
			`{"sm":"11.0","path":"/usr/local/bin/router-110"}]}`),
	})
	pushAuditImage(t, host+"/acme/torch:sbsa", "", map[string][]byte{
		"usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so": cudaELF(fatbintest.Cubin("11.0"), fatbintest.Cubin("12.1")),
		"usr/bin/python3": fatbintest.ELF(fatbintest.Filler(200)),
	})

	// A jetbake image: each router binary is judged for the GPUs its
	// entrypoint picks it for (/etc/jetbake/image.json), the libraries for all.
	r := run(t, "audit", "-q", host+"/acme/router:good")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "/usr/local/bin/router-87   sm_87         -    runs    -")
	require.Contains(t, r.stdout, "every CUDA file of "+host+"/acme/router:good (3 files) runs on Jetson Orin, SM 8.7 and Jetson Thor, SM 11.0")
	// The same files without image.json: router-87 holds no Thor code.
	pushAuditImage(t, host+"/acme/router:foreign", "", map[string][]byte{
		"usr/local/bin/router-87": cudaELF(fatbintest.Cubin("8.7")),
	})
	r = run(t, "audit", "-q", "--gpu", "8.7", "--gpu", "11.0", host+"/acme/router:foreign")
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "/usr/local/bin/router-87  sm_87   -    runs    no code")
	r = run(t, "audit", "-q", "--gpu", "11.0", "--gpu", "8.7", host+"/acme/torch:sbsa")
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stdout, "/usr/lib/python3/dist-packages/torch/lib/libtorch_cuda.so  sm_110,sm_121  -    runs     no code")
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Contains(t, lines[len(lines)-1], host+"/acme/torch:sbsa cannot run everywhere it should: Jetson Orin, SM 8.7: 1 file without code for it")
	r = run(t, "audit", "-q", "--gpu", "11.0", host+"/acme/torch:sbsa")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "every CUDA file of "+host+"/acme/torch:sbsa (1 file) runs on Jetson Thor, SM 11.0")

	r = run(t, "audit", "--gpu", "8.7", "--format", "json", host+"/acme/torch:sbsa")
	require.Equal(t, 1, r.code)
	var doc struct {
		OK     bool `json:"ok"`
		PerGPU []struct {
			GPU     string `json:"gpu"`
			Verdict string `json:"verdict"`
		} `json:"per_gpu"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	require.False(t, doc.OK)
	require.Equal(t, "8.7", doc.PerGPU[0].GPU)
	require.Equal(t, "no code", doc.PerGPU[0].Verdict)

	// Without --gpu: the image's own targets, or bad input for a foreign one.
	r = run(t, "audit", "-q", host+"/acme/torch:sbsa")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "has no io.jetbake.sm-targets annotation or label (jetbake did not build it): name the GPUs to audit it for: pass --gpu")
	r = run(t, "audit", "-q", "--gpu", "8.9x", host+"/acme/torch:sbsa")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--gpu: compute capability "8.9x" is not valid`)
	r = run(t, "audit", "-q", "--gpu", "8.7", host+"/acme/none:1")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "cannot read "+host+"/acme/none:1: the registry answered 404 Not Found")
}

// TestAuditGarbageRegistry: a registry that answers a manifest that is not
// JSON gets the one sentence, not a decoder's words.
func TestAuditGarbageRegistry(t *testing.T) {
	t.Setenv("DOCKER_CONFIG", t.TempDir())
	host := testregistry.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") {
				w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
				_, _ = w.Write([]byte("<html>maintenance</html>"))
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	r := run(t, "audit", "-q", "--gpu", "8.7", host+"/acme/router:1")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "cannot read "+host+"/acme/router:1")
	require.Contains(t, r.stderr, "the registry's answer is not the JSON a registry sends")
	require.NotContains(t, r.stderr, "invalid character")
}

// TestAuditPaths: `jetbake audit PATH` on files before they are an image:
// one ELF file, a folder (paths in it, nested), with the image audit's
// table, --explain, JSON, --strict and exit statuses; a path audit cannot
// read is bad input in one sentence.
func TestAuditPaths(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, data, 0o755))
		return p
	}
	lib := write("build/lib/libkernels.so", cudaELF(fatbintest.Cubin("8.7")))
	write("build/bin/tool", cudaELF(fatbintest.Cubin("8.7"), fatbintest.Cubin("11.0")))
	write("build/README.md", []byte(strings.Repeat("docs\n", 30)))
	write("wheel/torch/lib/libpart.so", fatbintest.ELF(fatbintest.Fatbins(fatbin.SectionLoaded,
		[]fatbintest.Code{fatbintest.Cubin("8.7")}, []fatbintest.Code{fatbintest.Cubin("8.0")})))
	notes := write("notes.txt", []byte("hello\n"))
	folder := filepath.Join(dir, "build")

	r := run(t, "audit", "-q", "--gpu", "8.7", lib)
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, lib+"  sm_87   -    runs")
	require.Contains(t, r.stdout, "every CUDA file of "+lib+" (1 file) runs on Jetson Orin, SM 8.7")

	r = run(t, "audit", "-q", "--gpu", "8.7", "--gpu", "11.0", folder)
	require.Equal(t, 1, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "bin/tool           sm_87,sm_110  -    runs    runs\n")
	require.Contains(t, r.stdout, "lib/libkernels.so  sm_87         -    runs    no code\n")
	require.Contains(t, r.stdout, folder+" cannot run everywhere it should: Jetson Thor, SM 11.0: 1 file without code for it, such as lib/libkernels.so (it holds sm_87 cubins)")

	r = run(t, "audit", "-q", "--gpu", "11.0", "--explain", folder)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout, "lib/libkernels.so: it holds sm_87 cubins\n  SM 11.0: no code: ")

	r = run(t, "audit", "--gpu", "8.7", "--format", "json", folder)
	require.Equal(t, 0, r.code, r.stderr)
	var doc struct {
		Image string `json:"image"`
		OK    bool   `json:"ok"`
		ELFs  int    `json:"elf_files"`
		Files []struct {
			Path string `json:"path"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc), r.stdout)
	require.Equal(t, folder, doc.Image)
	require.True(t, doc.OK)
	require.Equal(t, 2, doc.ELFs)
	require.Equal(t, "bin/tool", doc.Files[0].Path)

	// partial warns, and --strict fails on it.
	r = run(t, "audit", "--gpu", "8.7", filepath.Join(dir, "wheel"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "torch/lib/libpart.so  sm_80,sm_87  -    partial (1 of 2 fatbins)")
	require.Contains(t, r.stderr, "audit: warning: some files are partial")
	r = run(t, "audit", "-q", "--strict", "--gpu", "8.7", filepath.Join(dir, "wheel"))
	require.Equal(t, 1, r.code)

	// Bad input: one sentence, exit 2, JSON too.
	r = run(t, "audit", "-q", folder)
	requireOneSentence(t, r, "a folder without --gpu")
	require.Equal(t, folder+" is a folder, not an image: it has no io.jetbake.sm-targets annotation to read its GPUs from: "+
		"name the GPUs to audit it for: pass --gpu, such as --gpu 8.7 --gpu 11.0\n", r.stderr)
	r = run(t, "audit", "-q", "--gpu", "8.7", notes)
	requireOneSentence(t, r, "a text file")
	require.True(t, strings.HasPrefix(r.stderr, notes+" is a text file, not something jetbake audit reads: jetbake audit takes an ELF file"), r.stderr)
	r = run(t, "audit", "-q", "--gpu", "8.7", "--format", "json", notes)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stdout, `"exit_code": 2`)
	require.Contains(t, r.stdout, "is a text file")
}
