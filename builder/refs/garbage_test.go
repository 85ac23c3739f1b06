package refs

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
)

// TestDescribeRegistryGarbage: a registry that answers garbage (a tag list
// or a manifest that is not JSON, a 500, nothing at all) gets one sentence
// that names the registry, what was asked and the fix, never a decoder's
// or the HTTP library's words.
func TestDescribeRegistryGarbage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v2/":
			w.WriteHeader(http.StatusOK)
		case strings.HasPrefix(r.URL.Path, "/v2/broken/"):
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte("<html>oops</html>"))
		case strings.HasSuffix(r.URL.Path, "/tags/list"):
			_, _ = w.Write([]byte("<html><body>Welcome to nginx</body></html>"))
		default:
			w.Header().Set("Content-Type", "application/vnd.oci.image.manifest.v1+json")
			_, _ = w.Write([]byte("<html>not a manifest</html>"))
		}
	}))
	t.Cleanup(srv.Close)
	host := strings.TrimPrefix(srv.URL, "http://")
	ctx := t.Context()

	_, err := remote.List(repo(t, host+"/acme/router"), remote.WithContext(ctx))
	require.Error(t, err)
	err = DescribeRegistryError("list the tags of "+host+"/acme/router", err)
	require.EqualError(t, err, "cannot list the tags of "+host+"/acme/router: the registry's answer is not the JSON a registry sends "+
		"(it may be a web page, or a proxy's), or was cut short; fix: check that the address names a container registry "+
		"(the OCI distribution API), not a web server or a proxy in front of one, and retry")

	img, err := remote.Image(repo(t, host+"/acme/router").Tag("1"), remote.WithContext(ctx))
	if err == nil {
		_, err = img.ConfigFile()
	}
	require.Error(t, err)
	err = DescribeRegistryError("read "+host+"/acme/router:1", err)
	require.ErrorContains(t, err, "cannot read "+host+"/acme/router:1: the registry's answer is not the JSON a registry sends")
	require.NotContains(t, err.Error(), "invalid character")

	_, err = remote.List(repo(t, host+"/broken/router"), remote.WithContext(ctx))
	err = DescribeRegistryError("list the tags of "+host+"/broken/router", err)
	require.EqualError(t, err, "cannot list the tags of "+host+"/broken/router: the registry answered 500 Internal Server Error to GET http://"+
		host+"/v2/broken/router/tags/list; fix: retry later: the registry failed; if it keeps failing, tell its operator")

	srv.Close()
	_, err = remote.List(repo(t, host+"/acme/router"), remote.WithContext(ctx))
	err = DescribeRegistryError("list the tags of "+host+"/acme/router", err)
	require.EqualError(t, err, "cannot list the tags of "+host+"/acme/router: nothing answers at "+host+"; fix: check the registry's address and port, and that it is up")
}

func repo(t *testing.T, s string) name.Repository {
	r, err := name.NewRepository(s)
	require.NoError(t, err)
	return r
}
