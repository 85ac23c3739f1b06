package main

import (
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/internal/e2e"
	"github.com/jetbake/jetbake/builder/internal/standin"
)

// The bench's stand-ins are standin.Kit's, byte for byte, though each
// clone's is made from its template's: the same digest as Kit.Image gives,
// and clones that differ from each other.
func TestStandinsAsKitMakesThem(t *testing.T) {
	root, err := e2e.FindRepoRoot()
	require.NoError(t, err)
	reg, err := e2e.Start(root, t.TempDir())
	require.NoError(t, err)
	defer reg.Close()
	kit := reg.Kit()
	s := newStandins(kit)
	base := func(ref string) standin.Base {
		return standin.Base{Ref: ref, CUDA: "12.6", Ubuntu: "22.04", Libs: standin.UbuntuLibs("22.04"), CABundle: true}
	}
	seen := map[string]bool{}
	for _, ref := range []string{"nvcr.io/nvidia/l4t-cuda:12.6.11-runtime", "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime-s001", "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime-s002"} {
		want, err := kit.Image(t.Context(), base(ref))
		require.NoError(t, err)
		got, err := s.image(t.Context(), base(ref))
		require.NoError(t, err)
		wd, err := want.Digest()
		require.NoError(t, err)
		gd, err := got.Digest()
		require.NoError(t, err)
		require.Equal(t, wd, gd, ref)
		require.False(t, seen[gd.String()], "each clone its own image")
		seen[gd.String()] = true
	}
	require.Len(t, s.images, 1, "one image made for the three")

	require.NoError(t, s.push(t.Context(), reg.Registry, []standin.Base{base("nvcr.io/nvidia/l4t-cuda:12.6.11-runtime-s001")}))
	ref, err := name.ParseReference(reg.Registry+"/nvidia/l4t-cuda:12.6.11-runtime-s001", name.Insecure)
	require.NoError(t, err)
	img, err := remote.Image(ref, remote.WithContext(t.Context()))
	require.NoError(t, err)
	cf, err := img.ConfigFile()
	require.NoError(t, err)
	require.Equal(t, "nvcr.io/nvidia/l4t-cuda:12.6.11-runtime-s001", cf.Config.Labels[standinLabel])
}
