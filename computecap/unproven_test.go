package computecap

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnprovenFor(t *testing.T) {
	for _, c := range []struct {
		cuda string
		want bool
	}{{"11.4", false}, {"12.6", false}, {"12.9", false}, {"13.0", true}, {"13.2", true}} {
		v, err := ParseCUDAVersion(c.cuda)
		require.NoError(t, err)
		u, ok := UnprovenFor(v)
		require.Equal(t, c.want, ok, c.cuda)
		if ok {
			require.Equal(t, MustParse("11.0"), u.ProvenOn)
			require.Contains(t, u.Why, "Thor")
		}
	}
}
