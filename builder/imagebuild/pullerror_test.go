package imagebuild

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDescribePullError: the first offline build (BuildKit's raw "lookup
// nvcr.io on ...:53") fails with the sentence jetbake's own registry calls
// give, ended with the build's own way to work offline.
func TestDescribePullError(t *testing.T) {
	raw := errors.New(`failed to solve: failed to do request: Head "https://nvcr.io/v2/nvidia/l4t-jetpack/manifests/r36.4.0": ` +
		`dial tcp: lookup nvcr.io on 10.255.255.53:53: dial udp 10.255.255.53:53: connect: network is unreachable`)
	b := &Builder{opts: options{advice: Advice{Offline: "pass --mirror REGISTRY=HOST[:PORT]"}}}
	err := b.describePullError(raw)
	require.EqualError(t, err, "cannot pull nvcr.io/nvidia/l4t-jetpack:r36.4.0: the registry's name nvcr.io does not resolve to an address; "+
		"fix: check the registry's name and this machine's DNS or proxy settings; offline, pass --mirror REGISTRY=HOST[:PORT]")
	require.ErrorIs(t, err, raw)
	other := errors.New(`failed to solve: process "/bin/sh -c make" did not complete successfully: exit code: 2`)
	require.Equal(t, other, b.describePullError(other))
}
