package router

import (
	"errors"
	"testing"

	"github.com/jetbake/jetbake/computecap"
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
			err := CheckFeatures(computecap.MustParse(c.sm), c.features)
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
