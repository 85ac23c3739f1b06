package imagepick

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/internal/standin"
	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

// shippedRepository is the repository of the real matrix's images.
const shippedRepository = "ghcr.io/jetbake/text-embeddings-router"

// startRegistry serves an in-process registry on 127.0.0.1, behind
// wrap when it is not nil, and returns its host:port.
func startRegistry(t *testing.T, wrap func(http.Handler) http.Handler) string {
	t.Helper()
	var h http.Handler = registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://")
}

// shippedPlan is the plan of the repository's matrix.json: the images pick
// is tested on carry exactly the annotations and labels a build gives them.
func shippedPlan(t *testing.T) *plan.Plan {
	t.Helper()
	m, err := matrix.Load(filepath.Join("..", "..", "matrix.json"))
	require.NoError(t, err)
	p, err := plan.New(m)
	require.NoError(t, err)
	return p
}

// pushRelease pushes an arm64 image with rel's annotations (on the index and
// the manifest) and labels, under every tag of rel, to repo; it returns the
// index digest. With labelsOnly the annotations are left off.
func pushRelease(t *testing.T, repo string, rel plan.Release, labelsOnly bool, auth authn.Authenticator) string {
	t.Helper()
	img, err := random.Image(64, 1)
	require.NoError(t, err)
	img = mutate.MediaType(img, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, types.OCIConfigJSON)
	cfg, err := img.ConfigFile()
	require.NoError(t, err)
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "arm64"
	cfg.Config.Labels = rel.Labels
	img, err = mutate.ConfigFile(img, cfg)
	require.NoError(t, err)
	if !labelsOnly {
		img = mutate.Annotations(img, rel.Annotations).(v1.Image)
	}
	var idx v1.ImageIndex = mutate.AppendManifests(mutate.IndexMediaType(empty.Index, types.OCIImageIndex),
		mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: &v1.Platform{OS: "linux", Architecture: "arm64"}}})
	if !labelsOnly {
		idx = mutate.Annotations(idx, rel.Annotations).(v1.ImageIndex)
	}
	if auth == nil {
		auth = authn.Anonymous
	}
	for _, full := range rel.Tags {
		_, tag, _ := strings.Cut(full, shippedRepository+":")
		ref, err := name.NewTag(repo+":"+tag, name.Insecure)
		require.NoError(t, err)
		require.NoError(t, remote.WriteIndex(ref, idx, remote.WithAuth(auth)))
	}
	d, err := idx.Digest()
	require.NoError(t, err)
	return d.String()
}

// pushShipped pushes every release of the real matrix to repo.
func pushShipped(t *testing.T, repo string, auth authn.Authenticator) map[string]string {
	t.Helper()
	digests := map[string]string{}
	for _, rel := range shippedPlan(t).Releases {
		digests[rel.Name] = pushRelease(t, repo, rel, false, auth)
	}
	return digests
}

// hostLine is a Jetson (or other host) as pick sees it.
type hostLine struct {
	name      string
	l4t       string
	socID     int
	facts     *hostfit.Host // instead of a sysroot: hosts whose GPU no file shows
	want      string        // the release chosen, or ""
	wantNeeds string        // a phrase of the sentence when nothing fits
}

// hostLines are the host lines the issue names: R35, R36.3, R36.4.x, R38.x,
// R39.x, no GPU and a desktop GPU.
func hostLines() []hostLine {
	desktop := hostfit.Host{GPU: computecap.Capability{Major: 8, Minor: 6}, DriverCUDA: computecap.CUDAVersion{Major: 12, Minor: 8}}
	return []hostLine{
		{name: "R35.4.1 Xavier (JetPack 5.1.2)", l4t: "35.4.1", socID: 25, want: "jetpack5.1"},
		{name: "R35.4.1 Orin (JetPack 5.1.2)", l4t: "35.4.1", socID: 35, want: "jetpack5.1"},
		{name: "R36.3.0 Orin (JetPack 6.0)", l4t: "36.3.0", socID: 35, wantNeeds: "would need L4T R36.4 or a later R36 release, such as JetPack 6.1 (L4T 36.4.0)"},
		{name: "R36.4.0 Orin (JetPack 6.1)", l4t: "36.4.0", socID: 35, want: "jetpack6.1"},
		{name: "R36.4.3 Orin (JetPack 6.2)", l4t: "36.4.3", socID: 35, want: "jetpack6.2"},
		{name: "R36.4.7 Orin (JetPack 6.2.1)", l4t: "36.4.7", socID: 35, want: "jetpack6.2"},
		{name: "R38.2.0 Thor (JetPack 7.0)", l4t: "38.2.0", socID: 38, want: "jetpack7.0"},
		{name: "R38.4.0 Thor (JetPack 7.1)", l4t: "38.4.0", socID: 38, want: "jetpack7.0"},
		{name: "R39.2.0 Thor (JetPack 7.2)", l4t: "39.2.0", socID: 38, want: "jetpack7.2"},
		{name: "R39.2.0 Orin (JetPack 7.2)", l4t: "39.2.0", socID: 35, want: "jetpack7.2"},
		{name: "no GPU", wantNeeds: "is not a Jetson: neither its device tree nor /sys/devices/soc0 names a Jetson SoC"},
		{name: "desktop GPU SM 8.6", facts: &desktop, wantNeeds: "this machine is not a Jetson (its GPU has SM 8.6)"},
	}
}

// sysroot lays out the host as the NVIDIA runtime shows it to a container.
func (h hostLine) sysroot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{}
	if h.l4t != "" {
		files["etc/nv_tegra_release"] = standin.TegraRelease(h.l4t)
	}
	if h.socID != 0 {
		files["sys/devices/soc0/family"] = "Tegra\n"
		files["sys/devices/soc0/soc_id"] = fmt.Sprintln(h.socID)
	}
	for n, data := range files {
		p := filepath.Join(root, n)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
	return root
}

// staticFacts is a hostfit.Reader of fixed facts.
type staticFacts hostfit.Host

func (s staticFacts) Read(context.Context, string) (hostfit.Host, error) {
	return hostfit.Host(s), nil
}

func (h hostLine) options(t *testing.T) []Option {
	if h.facts != nil {
		return []Option{WithHostFacts(staticFacts(*h.facts))}
	}
	return []Option{WithSysroot(h.sysroot(t))}
}

func TestPickHostLines(t *testing.T) {
	reg := startRegistry(t, nil)
	repo := reg + "/jetbake/text-embeddings-router"
	digests := pushShipped(t, repo, nil)
	for _, h := range hostLines() {
		t.Run(h.name, func(t *testing.T) {
			res, err := Pick(t.Context(), repo, h.options(t)...)
			if res != nil && res.Best != nil {
				t.Logf("%s: %s", h.name, res.Best.Reference)
			} else if err != nil {
				t.Logf("%s: %s", h.name, err)
			}
			if h.want == "" {
				var nf *NoFitError
				require.ErrorAs(t, err, &nf)
				require.Nil(t, res.Best)
				require.Contains(t, nf.Sentence, h.wantNeeds)
				require.Equal(t, nf.Sentence, res.Sentence)
				require.NotContains(t, nf.Sentence, "\n")
				return
			}
			require.NoError(t, err)
			require.NotNil(t, res.Best)
			require.Equal(t, h.want, res.Best.Meta.Release, "%+v", res.Candidates)
			tag := "1.9.3-" + h.want
			if h.want == "jetpack5.1" {
				tag = "1.9.3-jetpack5.1.2" // the release's JetPack is 5.1.2 (L4T 35.4.1)
			}
			require.Equal(t, repo+":"+tag+"@"+digests[h.want], res.Best.Reference)
			require.True(t, res.Candidates[0].Chosen)
		})
	}
}

func TestPickPrefersExactJetPackThenNewestThenTier(t *testing.T) {
	p := shippedPlan(t)
	rel := func(name string) plan.Release { r, _ := p.Release(name); return *r }
	orin := hostfit.Host{SoC: "tegra234", Family: "Orin", GPU: computecap.Capability{Major: 8, Minor: 7},
		L4T: computecap.L4TVersion{Major: 36, Minor: 4, Patch: 3}, JetPack: "6.2"}
	mk := func(tag, tier string, r plan.Release, version string) image {
		kv := map[string]string{}
		for k, v := range r.Annotations {
			kv[k] = v
		}
		kv[matrix.KeyTier], kv[matrix.KeyVersion] = tier, version
		m, err := parseMeta(kv)
		require.NoError(t, err)
		return image{digest: "sha256:" + tag, tags: []string{tag}, meta: m}
	}
	images := []image{
		mk("a-61-supported", "supported", rel("jetpack6.1"), "1.9.3"),
		mk("b-62-candidate", "candidate", rel("jetpack6.2"), "1.9.3"),
		mk("c-62-supported", "supported", rel("jetpack6.2"), "1.9.3"),
		mk("d-62-supported-old", "supported", rel("jetpack6.2"), "1.7.10"),
		mk("e-72", "supported", rel("jetpack7.2"), "1.9.3"),
	}
	got := judge("r", orin, images, hostfit.Compatible)
	var order []string
	for _, c := range got {
		order = append(order, c.Tag)
	}
	require.Equal(t, []string{"c-62-supported", "d-62-supported-old", "b-62-candidate", "a-61-supported", "e-72"}, order)
	require.False(t, got[4].Verdict.OK)

	// Without the exact release, the newest compatible one wins over a better tier.
	orin.JetPack = "6.2.1"
	images[0] = mk("a-61-supported", "supported", rel("jetpack6.1"), "1.9.3")
	got = judge("r", orin, images[:2], hostfit.Compatible)
	require.Equal(t, "b-62-candidate", got[0].Tag)
}

func TestPickReadsLabelsAndRefusesOtherImages(t *testing.T) {
	reg := startRegistry(t, nil)
	repo := reg + "/mixed/router"
	p := shippedPlan(t)
	r62, _ := p.Release("jetpack6.2")
	d := pushRelease(t, repo, *r62, true, nil)
	// An image that is not jetbake's, and an amd64 one.
	plain, err := random.Image(32, 1)
	require.NoError(t, err)
	require.NoError(t, remote.Write(mustTag(t, repo+":plain"), plain))
	amd, err := mutate.ConfigFile(plain, &v1.ConfigFile{OS: "linux", Architecture: "amd64", Config: v1.Config{Labels: r62.Labels}})
	require.NoError(t, err)
	require.NoError(t, remote.Write(mustTag(t, repo+":amd64"), amd))

	res, err := Pick(t.Context(), repo, hostLines()[4].options(t)...)
	require.NoError(t, err)
	require.Equal(t, repo+":1.9.3-jetpack6.2@"+d, res.Best.Reference)
	require.ElementsMatch(t, []string{"1.9.3-jetpack6.2", "jetpack6.2"}, res.Best.Tags)
	reasons := map[string]string{}
	for _, c := range res.Candidates {
		reasons[c.Tag] = c.Verdict.Reason
	}
	require.Contains(t, reasons["plain"], "not a jetbake image")
	require.Contains(t, reasons["amd64"], "linux/amd64 image, not linux/arm64")

	var explain strings.Builder
	require.NoError(t, res.WriteExplain(&explain))
	require.Contains(t, explain.String(), "chosen  "+res.Best.Reference)
	require.Contains(t, explain.String(), "refused "+repo+":plain@")
	require.Contains(t, explain.String(), "the host's exact JetPack release")
}

// TestPickMirrorAndDockerCredentials reads ghcr.io's repository through a
// mirror on 127.0.0.1 that wants the credentials of the Docker config.
func TestPickMirrorAndDockerCredentials(t *testing.T) {
	const user, pass = "operator", "s3cret"
	reg := startRegistry(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
				w.Header().Set("WWW-Authenticate", `Basic realm="mirror"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	})
	digests := pushShipped(t, reg+"/jetbake/text-embeddings-router", &authn.Basic{Username: user, Password: pass})
	mirrors := refs.Mirrors{}
	require.NoError(t, mirrors.ParseMirror("ghcr.io="+reg))
	line := hostLines()[8] // Thor, JetPack 7.2

	_, err := Pick(t.Context(), shippedRepository, append(line.options(t), WithMirrors(mirrors),
		WithKeychain(authn.NewMultiKeychain()))...)
	require.Error(t, err, "the mirror refuses anonymous reads")
	var nf *NoFitError
	require.False(t, errors.As(err, &nf))

	cfgDir := t.TempDir()
	auth := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
	require.NoError(t, os.WriteFile(filepath.Join(cfgDir, "config.json"),
		[]byte(`{"auths": {"`+reg+`": {"auth": "`+auth+`"}}}`), 0o600))
	t.Setenv("DOCKER_CONFIG", cfgDir)
	res, err := Pick(t.Context(), shippedRepository, append(line.options(t), WithMirrors(mirrors))...)
	require.NoError(t, err)
	require.Equal(t, shippedRepository+":1.9.3-jetpack7.2@"+digests["jetpack7.2"], res.Best.Reference,
		"the reference keeps the repository asked for")
}

func mustTag(t *testing.T, s string) name.Tag {
	t.Helper()
	tag, err := name.NewTag(s, name.Insecure)
	require.NoError(t, err)
	return tag
}
