package tagging

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/netfault"
)

// TestTagAllRegistryFaults: build --push's tag step against a registry
// whose name does not resolve, and one where nothing listens, fails with
// one sentence naming the host and the fix, for all its tags at once, and
// moves no tag.
func TestTagAllRegistryFaults(t *testing.T) {
	tr := &http.Transport{DialContext: netfault.Dialer(nil)}
	refused := netfault.Refused(t)
	for host, says := range map[string]string{
		netfault.Unresolved: "the registry's name " + netfault.Unresolved + " does not resolve to an address; fix: check the registry's name",
		refused:             "nothing answers at " + refused + "; fix: check the registry's address and port",
	} {
		repo := host + "/acme/router"
		releases := tagReleases(repo, []string{repo + ":1.0", repo + ":latest"}, []string{repo + ":2.0"})
		for i := range releases {
			releases[i].Digest = "sha256:" + strings.Repeat("a", 64)
		}
		_, err := All(t.Context(), releases, []remote.Option{remote.WithTransport(tr)})
		require.Error(t, err)
		require.NotContains(t, err.Error(), "\n", "one sentence")
		require.Contains(t, err.Error(), "cannot read tag "+repo+":")
		require.Contains(t, err.Error(), says)
		require.Contains(t, err.Error(), "(and 2 more tags); no tag was moved")
		require.NotContains(t, err.Error(), "dial tcp")
	}
}
