package e2e

import (
	"context"
	"net/http"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/imagebuild"
	"github.com/jetbake/jetbake/builder/internal/testregistry"
)

// checkRefusedAfterPush builds the one release of the demo matrix file
// (written with mutate), whose smoke run fails, pushed to a registry of its
// own, and holds the smoke run's refusal until that registry has taken the
// release's manifest by digest: the export and push ran beside the smoke
// run and finished first. The release still fails with the smoke run's
// sentence (want), and no tag exists: pushed by digest, tagged last, only
// once every release passed.
func checkRefusedAfterPush(t *testing.T, f *fixture, file, want string, mutate ...func(map[string]any)) {
	var mu sync.Mutex
	var manifests []string
	pushed := make(chan struct{})
	host := testregistry.New(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			h.ServeHTTP(w, r)
			if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/sha256:") {
				mu.Lock()
				if manifests = append(manifests, path.Base(r.URL.Path)); len(manifests) == 1 {
					close(pushed)
				}
				mu.Unlock()
			}
		})
	})
	p := f.demoPlan(t, file, append(mutate, func(m map[string]any) {
		m["image"].(map[string]any)["repository"] = host + "/jetbake/refused-after-push"
	})...)
	require.Len(t, p.Releases, 1)
	var held atomic.Bool
	hold := imagebuild.WithSmokeVerdictHook(func(ctx context.Context, release string, err error) {
		if err == nil {
			return
		}
		select {
		case <-pushed:
			held.Store(true)
		case <-ctx.Done():
		case <-time.After(3 * time.Minute):
		}
	})
	report, err := f.build(t.Context(), p, imagebuild.WithPush(true), hold)
	require.Error(t, err)
	rr := report.Releases[0]
	require.True(t, held.Load(), "the smoke run's refusal came after the push: %s", rr.Error)
	require.Equal(t, imagebuild.Failed, rr.Outcome)
	require.Contains(t, rr.Error, want, "the report says why")
	require.Empty(t, rr.Tags)

	mu.Lock()
	defer mu.Unlock()
	for _, d := range manifests {
		ref, err := name.ParseReference(p.Repository + "@" + d)
		require.NoError(t, err)
		_, err = remote.Head(ref)
		require.NoError(t, err, "the release was pushed by digest: %s", ref)
	}
	for _, tag := range p.Releases[0].Tags {
		ref, err := name.ParseReference(tag)
		require.NoError(t, err)
		_, err = remote.Head(ref)
		require.Error(t, err, "%s must not be tagged", tag)
	}
	repo, err := name.NewRepository(p.Repository)
	require.NoError(t, err)
	tags, err := remote.List(repo)
	require.NoError(t, err)
	require.Empty(t, tags, "no tag at all in the repository")
}
