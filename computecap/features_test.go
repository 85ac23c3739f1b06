package computecap

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheckFeatures(t *testing.T) {
	cases := []struct {
		sm, features string
		bad          string
		instead      []string
	}{
		{"8.7", "candle-cuda", "", nil},
		{"11.0", "candle-cuda,http", "", nil},
		{"7.2", "candle-cuda", "candle-cuda", []string{"candle-cuda-volta"}},
		{"7.2", "http candle-cuda-turing", "candle-cuda-turing", []string{"candle-cuda-volta"}},
		{"7.2", "candle-cuda-volta", "", nil},
		{"7.5", "candle-cuda", "candle-cuda", []string{"candle-cuda-turing", "candle-cuda-volta"}},
		{"8.7", "unknown-feature", "", nil},
		{"7.2", "", "", nil},
	}
	for _, c := range cases {
		t.Run(c.sm+"/"+c.features, func(t *testing.T) {
			err := CheckFeatures(MustParse(c.sm), c.features)
			if c.bad == "" {
				require.NoError(t, err)
				return
			}
			var fe *FeaturesError
			require.True(t, errors.As(err, &fe), "%v", err)
			require.Equal(t, c.bad, fe.Feature.Name)
			require.Equal(t, c.instead, fe.Instead())
			require.Contains(t, err.Error(), "sm_")
		})
	}
}

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
