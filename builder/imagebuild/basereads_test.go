package imagebuild

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/baseinfo"
	"github.com/jetbake/jetbake/builder/imagebuild/basereads"
	"github.com/jetbake/jetbake/builder/imagebuild/progress"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
	"github.com/jetbake/jetbake/builder/refs"
	"github.com/jetbake/jetbake/computecap"
)

// basePlanJobs are the jobs of testPlan, its releases with the flavours
// plan.New gives them, on bases mirrored to host.
func basePlanJobs(t *testing.T, host string, opts ...Option) (*Builder, []*releaseJob) {
	t.Helper()
	p := testPlan()
	p.Releases[0].Flavour, p.Releases[1].Flavour = computecap.FlavourTegra, computecap.FlavourSBSA
	b := New(nil, append([]Option{WithMirrors(refs.Mirrors{"nvcr.io": host})}, opts...)...)
	jobs, err := b.selectJobs(p)
	require.NoError(t, err)
	return b, jobs
}

// Each base is read once, however many releases use it, and each release
// is checked against its own needs.
func TestCheckBases(t *testing.T) {
	var manifests atomic.Int64
	host := testregistry.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.Contains(r.URL.Path, "/manifests/") && r.Method == http.MethodGet {
				manifests.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	tegra, sbsa := computecap.FlavourTegra.TargetDir(), computecap.FlavourSBSA.TargetDir()
	testregistry.Push(t, host, "nvcr.io/nvidia/l4t-jetpack:r36.4.0", testregistry.CUDAImage(t, tegra, "12.6.68"))
	testregistry.Push(t, host, "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime", testregistry.CUDAImage(t, tegra, "12.2.12"))
	testregistry.Push(t, host, "nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04", testregistry.CUDAImage(t, sbsa, "13.2.0"))
	testregistry.Push(t, host, "nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04", testregistry.CUDAImage(t, tegra, "13.2.0"))

	b, jobs := basePlanJobs(t, host)
	jobs = append(jobs, jobs[0].cloneFor(t)) // a third release on jetpack6.2's bases
	reads := b.readBases(t.Context(), jobs, progress.NewRecorder())
	defer reads.Close()
	require.Equal(t, 4, reads.Len())

	err := jobs[0].checkBases(t.Context())
	require.EqualError(t, err, "runtime base nvcr.io/nvidia/l4t-cuda:12.6.11-runtime holds Tegra CUDA 12.2.12 (read from /usr/local/cuda-12.2/version.json, "+
		"/usr/local/cuda-12.2/targets/aarch64-linux), but the release's cuda is 12.6: its routers would run on CUDA 12.2; "+
		"use a base with CUDA 12.6 such as nvcr.io/nvidia/l4t-jetpack:r36.4.0, or correct the release's cuda")
	err = jobs[1].checkBases(t.Context())
	require.ErrorContains(t, err, "runtime base nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04 holds Tegra CUDA 13.2.0")
	require.ErrorContains(t, err, "but JetPack 7.2 needs SBSA CUDA")
	require.NotContains(t, err.Error(), "build base")
	require.Error(t, jobs[2].checkBases(t.Context()))
	require.Equal(t, int64(4), manifests.Load(), "one manifest read per base")

	rr := jobs[0].initialReport()
	require.Equal(t, Base{Role: "build", Ref: "nvcr.io/nvidia/l4t-jetpack:r36.4.0", Resolved: host + "/nvidia/l4t-jetpack:r36.4.0",
		Flavour: "tegra", CUDA: "12.6.68", ReadFrom: []string{"/usr/local/cuda-12.6/version.json", "/usr/local/cuda-12.6/targets/aarch64-linux"}}, rr.Bases[0])
	require.Equal(t, "12.2.12", rr.Bases[1].CUDA)
}

// A base the lock file pins, whose contents it recorded at that digest,
// is not read again; one recorded at another digest is.
func TestCheckBasesKnown(t *testing.T) {
	host := testregistry.New(t)
	tegra := computecap.FlavourTegra.TargetDir()
	jp := testregistry.Push(t, host, "nvcr.io/nvidia/l4t-jetpack:r36.4.0", testregistry.CUDAImage(t, tegra, "12.6.68"))
	rt := testregistry.Push(t, host, "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime", testregistry.CUDAImage(t, tegra, "12.6.11"))
	locks := map[string]string{"nvcr.io/nvidia/l4t-jetpack:r36.4.0": jp, "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime": rt}
	known := map[string]baseinfo.Info{
		// Recorded at the pinned digest: taken as it is, though the image says otherwise.
		"nvcr.io/nvidia/l4t-jetpack:r36.4.0": {Digest: jp, Flavour: computecap.FlavourTegra, CUDA: "12.6.0", From: []string{"lock"}},
		// Recorded at another digest: read.
		"nvcr.io/nvidia/l4t-cuda:12.6.11-runtime": {Digest: jp, Flavour: computecap.FlavourSBSA, CUDA: "13.0.1"},
	}
	b, jobs := basePlanJobs(t, host, WithLocks(locks), WithKnownBases(known), WithReleases("jetpack6.2"))
	reads := b.readBases(t.Context(), jobs, progress.NewRecorder())
	defer reads.Close()
	require.NoError(t, jobs[0].checkBases(t.Context()))
	rr := jobs[0].initialReport()
	require.Equal(t, "12.6.0", rr.Bases[0].CUDA)
	require.Equal(t, []string{"lock"}, rr.Bases[0].ReadFrom)
	require.Equal(t, "12.6.11", rr.Bases[1].CUDA)
}

// A base that cannot be read fails its release, naming it.
func TestCheckBasesUnreadable(t *testing.T) {
	host := testregistry.New(t)
	b, jobs := basePlanJobs(t, host, WithReleases("jetpack6.2"))
	reads := b.readBases(t.Context(), jobs, progress.NewRecorder())
	defer reads.Close()
	err := jobs[0].checkBases(t.Context())
	require.ErrorContains(t, err, "build base nvcr.io/nvidia/l4t-jetpack:r36.4.0: could not read what CUDA it holds: read base "+host+"/nvidia/l4t-jetpack:r36.4.0")
	require.ErrorContains(t, err, "runtime base nvcr.io/nvidia/l4t-cuda:12.6.11-runtime: could not read")
	// A job built apart from Build checks nothing.
	require.NoError(t, (&releaseJob{opts: &options{}}).checkBases(t.Context()))
	var none *basereads.Reads
	none.Close()
}

// cloneFor is a copy of j as another release with the same bases.
func (j *releaseJob) cloneFor(t *testing.T) *releaseJob {
	t.Helper()
	c := &releaseJob{opts: &options{}, plan: j.plan, release: j.release, buildBase: j.buildBase, runtimeBase: j.runtimeBase}
	c.release.Name += "-copy"
	return c
}
