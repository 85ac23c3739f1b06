package cli

import (
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// pushReleases pushes, to a registry on 127.0.0.1, an arm64 image for each
// release of the shipped matrix but skip, under its first tag, labelled as
// the build labels it (labels[name] overrides a release's labels); it
// returns the registry's host and each release's digest.
func pushReleases(t *testing.T, repoPath, skip string, labels map[string]map[string]string) (string, map[string]string) {
	t.Helper()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	m, err := matrix.Load("../../matrix.json")
	require.NoError(t, err)
	p, err := plan.New(m, plan.WithRepository(host+"/"+repoPath))
	require.NoError(t, err)
	digests := map[string]string{}
	for _, r := range p.Releases {
		if r.Name == skip {
			continue
		}
		kv := r.Annotations
		if l, ok := labels[r.Name]; ok {
			kv = l
		}
		img, err := random.Image(32, 1)
		require.NoError(t, err)
		img, err = mutate.ConfigFile(img, &v1.ConfigFile{OS: "linux", Architecture: "arm64", Config: v1.Config{Labels: kv}})
		require.NoError(t, err)
		tag, err := name.NewTag(r.Tags[0], name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.Write(tag, img))
		d, err := img.Digest()
		require.NoError(t, err)
		digests[r.Name] = d.String()
	}
	return host, digests
}

// Without --metadata-file, fleet pins each release by the digest its first
// tag names in the registry, read with pick's code: through --mirror when
// given, the manifests keeping the image's own name; a release not pushed
// is left out with a warning.
func TestFleetDigestsFromRegistry(t *testing.T) {
	host, digests := pushReleases(t, "jetbake/text-embeddings-router", "jetpack6.1", nil)
	direct := matrixCopy(t, func(doc map[string]any) {
		doc["image"].(map[string]any)["repository"] = host + "/jetbake/text-embeddings-router"
	})
	r := run(t, "fleet", "-f", direct)
	require.Equal(t, ExitOK, r.code, r.stderr)
	for rel, d := range digests {
		if rel != "jetpack6.1" {
			require.Contains(t, r.stdout, "image: "+host+"/jetbake/text-embeddings-router@"+d+"\n", rel)
		}
	}
	require.Contains(t, r.stderr, "jetbake: warning: release jetpack6.1 left out: "+host+"/jetbake/text-embeddings-router:1.9.3-jetpack6.1 is not in the registry")
	require.Contains(t, r.stderr, "jetbake: jetpack6.2 is "+host+"/jetbake/text-embeddings-router@"+digests["jetpack6.2"])

	// The shipped matrix's own repository, read through a mirror.
	r = run(t, "fleet", "-f", "../../matrix.json", "--mirror", "ghcr.io="+host)
	require.Equal(t, ExitOK, r.code, r.stderr)
	require.Contains(t, r.stdout, "image: ghcr.io/jetbake/text-embeddings-router@"+digests["jetpack7.2"]+"\n")
	require.NotContains(t, r.stdout, host)

	r = run(t, "fleet", "-f", "../../matrix.json", "--mirror", "ghcr.io")
	requireOneSentence(t, r, "--mirror")
	require.Contains(t, r.stderr, `--mirror "ghcr.io": want REGISTRY=HOST[:PORT]`)
}

// A tag that names another release's image is an error, not a workload on
// the wrong nodes; a registry with none of the releases is one too.
func TestFleetRegistryRefusesAMovedTag(t *testing.T) {
	m, err := matrix.Load("../../matrix.json")
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	other := map[string]map[string]string{"jetpack6.2": p.Releases[0].Annotations} // the 5.1 image under 6.2's tag
	host, _ := pushReleases(t, "acme/router", "", other)
	file := matrixCopy(t, func(doc map[string]any) { doc["image"].(map[string]any)["repository"] = host + "/acme/router" })
	r := run(t, "fleet", "-f", file)
	require.Equal(t, ExitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "release jetpack6.2: "+host+"/acme/router:1.9.3-jetpack6.2 names an image of release \"jetpack5.1\"")

	empty := matrixCopy(t, func(doc map[string]any) { doc["image"].(map[string]any)["repository"] = host + "/acme/nothing" })
	r = run(t, "fleet", "-f", empty)
	require.Equal(t, ExitFailure, r.code, r.stderr)
	require.Contains(t, r.stderr, "no release of the matrix is in the registry (5 tags looked up): push them with 'jetbake build --push', or give --metadata-file")
}
