package refs

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"

	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"
)

// offlineDialer dials as a machine without DNS does: Go's own resolver
// finds no server it can reach (what `unshare -n` or an unplugged cable
// gives), so no DNS question leaves the process.
func offlineDialer() *net.Dialer {
	return &net.Dialer{Resolver: &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, &net.OpError{Op: "dial", Net: "udp", Err: errors.New("connect: network is unreachable")}
	}}}
}

// TestDescribeRegistryUnresolvedName: a registry whose name does not
// resolve (offline, a typo, DNS down) is one sentence that names the host
// and the fix. Go's dial error then has no address (a nil Addr), which
// used to panic.
func TestDescribeRegistryUnresolvedName(t *testing.T) {
	tr := &http.Transport{DialContext: offlineDialer().DialContext}
	_, err := remote.List(repo(t, "ghcr.io/acme/router"), remote.WithContext(t.Context()), remote.WithTransport(tr))
	require.Error(t, err)
	var operr *net.OpError
	require.ErrorAs(t, err, &operr)
	require.Nil(t, operr.Addr, "Go's dial error at name resolution has no address")

	for _, describe := range []func(string, error) error{DescribeRegistryError, DescribeIfRegistry} {
		got := describe("list the tags of ghcr.io/acme/router", err)
		require.EqualError(t, got, "cannot list the tags of ghcr.io/acme/router: the registry's name ghcr.io does not resolve to an address; "+
			"fix: "+UnresolvedFix)
		var re *RegistryError
		require.ErrorAs(t, got, &re)
		require.True(t, re.Unresolved)
		require.ErrorIs(t, got, err, "the library's error stays in the chain")
	}

	// The dial error alone, as a client other than go-containerregistry's
	// returns it: the same sentence.
	_, err = offlineDialer().DialContext(t.Context(), "tcp", "nvcr.io:443")
	require.EqualError(t, DescribeRegistryError("resolve base nvcr.io/nvidia/l4t-jetpack:r36.4.0", err),
		"cannot resolve base nvcr.io/nvidia/l4t-jetpack:r36.4.0: the registry's name nvcr.io does not resolve to an address; fix: "+UnresolvedFix)
}

// TestDescribeRegistryDialWithoutAddress: a dial error without an address
// and without a DNS error in it (as another library may build it) is the
// sentence of a failed connection, not a panic.
func TestDescribeRegistryDialWithoutAddress(t *testing.T) {
	err := DescribeRegistryError("read r:1", &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("boom")})
	require.EqualError(t, err, "cannot read r:1: the connection to the registry failed before it answered; fix: check the registry's address and that it is reachable")
}
