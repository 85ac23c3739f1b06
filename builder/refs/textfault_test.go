package refs

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// buildkitOffline is what a BuildKit daemon without DNS answers jetbake's
// resolve of a base, as `jetbake build` printed it under `unshare -n`.
const buildkitOffline = `failed to solve: failed to do request: Head "https://nvcr.io/v2/nvidia/l4t-cuda/manifests/12.6.11-runtime": ` +
	`dial tcp: lookup nvcr.io on 10.255.255.53:53: dial udp 10.255.255.53:53: connect: network is unreachable`

// TestDescribeTextFault: BuildKit's raw words for a base whose registry's
// name does not resolve become the sentence jetbake's own calls give.
func TestDescribeTextFault(t *testing.T) {
	raw := errors.New(buildkitOffline)
	err := DescribeTextFault(fmt.Errorf("%w", raw))
	require.EqualError(t, err, "cannot pull nvcr.io/nvidia/l4t-cuda:12.6.11-runtime: the registry's name nvcr.io does not resolve to an address; fix: "+UnresolvedFix)
	var re *RegistryError
	require.ErrorAs(t, err, &re)
	require.True(t, re.Unresolved)
	require.ErrorIs(t, err, raw)

	for in, want := range map[string]string{
		`Get "https://ghcr.io/v2/": dial tcp: lookup ghcr.io: no such host`: "cannot reach the registry ghcr.io: the registry's name ghcr.io does not resolve",
		`Head "https://nvcr.io/v2/nvidia/l4t-jetpack/manifests/sha256:` + strings.Repeat("a", 64) + `": proxyconnect tcp: dial tcp: lookup proxy.corp on 127.0.0.53:53: server misbehaving`: "cannot pull nvcr.io/nvidia/l4t-jetpack@sha256:" + strings.Repeat("a", 64) +
			": the registry's name proxy.corp does not resolve",
	} {
		require.ErrorContains(t, DescribeTextFault(errors.New(in)), want)
	}
	for _, other := range []string{"failed to solve: process \"/bin/sh -c make\" did not complete successfully: exit code: 2",
		"lookup table broken", `dial tcp 127.0.0.1:5000: connect: connection refused`} {
		in := errors.New(other)
		require.Equal(t, in, DescribeTextFault(in))
	}
	require.NoError(t, DescribeTextFault(nil))
}

// FuzzDescribeTextFault: no text makes DescribeTextFault panic, and what it
// makes of a lookup failure is one printable line.
func FuzzDescribeTextFault(f *testing.F) {
	f.Add(buildkitOffline)
	f.Add(`Get "http://x/v2//manifests/": dial tcp6: lookup x: y`)
	f.Add("dial tcp: lookup \x1b[2J on ")
	f.Fuzz(func(t *testing.T, text string) {
		err := DescribeTextFault(errors.New(text))
		var re *RegistryError
		if errors.As(err, &re) && strings.ContainsAny(err.Error(), "\n\x1b") {
			t.Fatalf("not one printable line: %q", err.Error())
		}
	})
}
