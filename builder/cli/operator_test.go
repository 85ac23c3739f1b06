package cli

import (
	"encoding/json"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/standin"
)

// fakeJetson writes an Orin with L4T l4t under a new folder; with ready it
// also has the toolkit and Docker's nvidia runtime.
func fakeJetson(t *testing.T, l4t string, ready bool) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"etc/nv_tegra_release":    standin.TegraRelease(l4t),
		"sys/devices/soc0/family": "Tegra\n",
		"sys/devices/soc0/soc_id": "35\n",
	}
	if ready {
		files["var/lib/dpkg/status"] = "Package: nvidia-container-toolkit\nStatus: install ok installed\nVersion: 1.17.8-1\n"
		files["etc/docker/daemon.json"] = `{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}`
	}
	for n, data := range files {
		p := filepath.Join(root, n)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return root
}

func TestDoctorCommand(t *testing.T) {
	r := run(t, "doctor", "--sysroot", fakeJetson(t, "36.4.3", true))
	require.Equal(t, ExitOK, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "R36.4.3 (JetPack 6.2)")
	require.Contains(t, r.stdout, "This host can run jetbake images")

	r = run(t, "doctor", "--sysroot", fakeJetson(t, "36.4.3", false), "--format", "json")
	require.Equal(t, ExitFailure, r.code)
	require.Empty(t, r.stderr)
	var doc struct {
		OK bool `json:"ok"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.False(t, doc.OK)

	require.Equal(t, ExitUsage, run(t, "doctor", "--format", "yaml").code)
}

func TestPickCommand(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repo := strings.TrimPrefix(srv.URL, "http://") + "/jetbake/router"
	ann := map[string]string{"io.jetbake.jetpack": "6.2", "io.jetbake.l4t": "36.4.3", "io.jetbake.cuda": "12.6",
		"io.jetbake.sm-targets": "8.7", "io.jetbake.tier": "candidate", "io.jetbake.release": "jetpack6.2"}
	img, err := random.Image(32, 1)
	require.NoError(t, err)
	img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: "arm64", Config: v1.Config{Labels: ann}})
	require.NoError(t, err)
	tag, err := name.NewTag(repo+":jetpack6.2", name.Insecure)
	require.NoError(t, err)
	require.NoError(t, remote.Write(tag, img))
	d, err := img.Digest()
	require.NoError(t, err)

	r := run(t, "pick", "--sysroot", fakeJetson(t, "36.4.3", true), repo)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Equal(t, repo+":jetpack6.2@"+d.String()+"\n", r.stdout, "one line for $(jetbake pick ...)")
	require.Contains(t, r.stderr, "reading "+repo+":jetpack6.2")

	r = run(t, "pick", "-q", "--sysroot", fakeJetson(t, "36.3.0", true), repo)
	require.Equal(t, ExitFailure, r.code)
	require.Empty(t, r.stdout)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), "one sentence: %s", r.stderr)
	require.Contains(t, r.stderr, "the host would need L4T R36.4 or a later R36 release, such as JetPack 6.1 (L4T 36.4.0)")

	r = run(t, "pick", "-q", "--format", "json", "--sysroot", fakeJetson(t, "36.3.0", true), repo)
	require.Equal(t, ExitFailure, r.code)
	var doc struct {
		Sentence   string `json:"sentence"`
		Candidates []struct {
			Reference string `json:"reference"`
		} `json:"candidates"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &doc))
	require.NotEmpty(t, doc.Sentence)
	require.Len(t, doc.Candidates, 1)

	r = run(t, "pick", "-q", "--explain", "--sysroot", fakeJetson(t, "36.4.3", true), repo)
	require.Equal(t, ExitOK, r.code)
	require.Contains(t, r.stdout, "chosen  "+repo+":jetpack6.2@")

	require.Equal(t, ExitUsage, run(t, "pick").code)
	require.Equal(t, ExitUsage, run(t, "pick", "--mirror", "nonsense", repo).code)
}
