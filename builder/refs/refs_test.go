package refs

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

const (
	testDigest  = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	otherDigest = "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
)

func TestParseMirror(t *testing.T) {
	tests := []struct {
		flag      string
		wantFrom  string
		wantTo    string
		wantError bool
	}{
		{flag: "nvcr.io=127.0.0.1:5000", wantFrom: "nvcr.io", wantTo: "127.0.0.1:5000"},
		{flag: "nvcr.io=mirror.example.com/", wantFrom: "nvcr.io", wantTo: "mirror.example.com"},
		{flag: "ghcr.io=localhost:5000/prefix", wantFrom: "ghcr.io", wantTo: "localhost:5000/prefix"},
		{flag: "", wantError: true},
		{flag: "nvcr.io", wantError: true},
		{flag: "=127.0.0.1:5000", wantError: true},
		{flag: "nvcr.io=", wantError: true},
		{flag: "nvcr.io/nvidia=127.0.0.1:5000", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.flag, func(t *testing.T) {
			m := Mirrors{}
			err := m.ParseMirror(tt.flag)
			if tt.wantError {
				require.EqualError(t, err, fmt.Sprintf("mirror %q: want REGISTRY=HOST[:PORT], e.g. nvcr.io=127.0.0.1:5000", tt.flag))
				var me *MirrorError
				require.ErrorAs(t, err, &me)
				require.Equal(t, tt.flag, me.Value)
				require.Empty(t, m)
				return
			}
			require.NoError(t, err)
			require.Equal(t, Mirrors{tt.wantFrom: tt.wantTo}, m)
		})
	}
}

func TestParseMirrorLaterWins(t *testing.T) {
	m := Mirrors{}
	require.NoError(t, m.ParseMirror("nvcr.io=127.0.0.1:5000"))
	require.NoError(t, m.ParseMirror("ghcr.io=127.0.0.1:5001"))
	require.NoError(t, m.ParseMirror("nvcr.io=127.0.0.1:5002"))
	require.Equal(t, Mirrors{"nvcr.io": "127.0.0.1:5002", "ghcr.io": "127.0.0.1:5001"}, m)
}

func TestRewrite(t *testing.T) {
	m := Mirrors{"nvcr.io": "127.0.0.1:5000"}
	tests := []struct {
		name   string
		ref    string
		digest string
		want   string
	}{
		{name: "mirrored tag", ref: "nvcr.io/nvidia/l4t-jetpack:r36.4.0",
			want: "127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0"},
		{name: "mirrored tag pinned", ref: "nvcr.io/nvidia/l4t-jetpack:r36.4.0", digest: testDigest,
			want: "127.0.0.1:5000/nvidia/l4t-jetpack:r36.4.0@" + testDigest},
		{name: "mirrored digest", ref: "nvcr.io/nvidia/l4t-cuda@" + testDigest,
			want: "127.0.0.1:5000/nvidia/l4t-cuda@" + testDigest},
		{name: "digest ref pinned again", ref: "nvcr.io/nvidia/l4t-cuda@" + testDigest,
			digest: otherDigest, want: "127.0.0.1:5000/nvidia/l4t-cuda@" + otherDigest},
		{name: "no tag means latest", ref: "nvcr.io/nvidia/cuda",
			want: "127.0.0.1:5000/nvidia/cuda:latest"},
		{name: "other registry kept", ref: "ghcr.io/jetbake/base:1",
			want: "ghcr.io/jetbake/base:1"},
		{name: "other registry pinned", ref: "ghcr.io/jetbake/base:1", digest: testDigest,
			want: "ghcr.io/jetbake/base:1@" + testDigest},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := m.Rewrite(tt.ref, tt.digest)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestRewriteWithoutMirrors(t *testing.T) {
	var m Mirrors
	got, err := m.Rewrite("nvcr.io/nvidia/l4t-jetpack:r36.4.0", "")
	require.NoError(t, err)
	require.Equal(t, "nvcr.io/nvidia/l4t-jetpack:r36.4.0", got)
}

func TestRewriteInvalidRef(t *testing.T) {
	m := Mirrors{"nvcr.io": "127.0.0.1:5000"}
	for _, ref := range []string{"", "NVCR.io/Nvidia/UPPER:tag", "nvcr.io/nvidia/cuda:bad tag"} {
		t.Run(ref, func(t *testing.T) {
			_, err := m.Rewrite(ref, "")
			require.Error(t, err)
			require.Contains(t, err.Error(), "image reference")
		})
	}
}

func TestPlainHTTP(t *testing.T) {
	tests := []struct {
		ref  string
		want bool
	}{
		{ref: "127.0.0.1:5000/jetbake/tei:1", want: true},
		{ref: "127.0.0.1/jetbake/tei", want: true},
		{ref: "localhost:5000/jetbake/tei", want: true},
		{ref: "localhost/jetbake/tei", want: false}, // go-containerregistry reads a Docker Hub repository here
		{ref: "[::1]:5000/jetbake/tei", want: true},
		{ref: "10.0.0.1:5000/x", want: true}, // a private address, as go-containerregistry allows
		{ref: "nvcr.io/nvidia/cuda:13.0", want: false},
		{ref: "ghcr.io/jetbake/tei:1", want: false},
		{ref: "localhost.example.com/x", want: false},
		{ref: "127.example.com/x", want: false},
		{ref: "ubuntu:22.04", want: false},
		{ref: "", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.ref, func(t *testing.T) {
			require.Equal(t, tt.want, PlainHTTP(tt.ref))
		})
	}
}

func FuzzParseMirror(f *testing.F) {
	for _, seed := range []string{"nvcr.io=127.0.0.1:5000", "nvcr.io=host/", "=", "a/b=c", ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, flag string) {
		m := Mirrors{}
		if err := m.ParseMirror(flag); err != nil {
			require.Empty(t, m)
			return
		}
		require.Len(t, m, 1)
		for from := range m {
			require.NotEmpty(t, from)
			require.NotContains(t, from, "/")
		}
	})
}

func TestMirrorDockerHub(t *testing.T) {
	m := Mirrors{}
	require.NoError(t, m.ParseMirror("docker.io=127.0.0.1:5000"))
	got, err := m.Rewrite("ubuntu:22.04", "")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:5000/library/ubuntu:22.04", got)
	require.Error(t, m.ParseMirror("nvcr.io=/"))
}

// A deadline that passed is a RegistryError that is TimedOut, whose fix
// names no command's flag.
func TestDescribeRegistryErrorDeadline(t *testing.T) {
	err := DescribeRegistryError("list the tags of r", fmt.Errorf("get: %w", context.DeadlineExceeded))
	var re *RegistryError
	require.ErrorAs(t, err, &re)
	require.True(t, re.TimedOut)
	require.EqualError(t, err, "cannot list the tags of r: the registry did not answer in time; fix: check that the registry is up and reachable, or give it more time")
	require.ErrorAs(t, DescribeRegistryError("r", errors.New("dial: refused")), &re)
	require.False(t, re.TimedOut)
}
