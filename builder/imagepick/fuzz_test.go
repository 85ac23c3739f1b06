package imagepick

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/builder/matrix"
)

// FuzzParseMeta feeds parseMeta the io.jetbake.* values a registry returns:
// a parsed image always has targets and a readable L4T and CUDA, and the host
// rule answers for it without panicking.
func FuzzParseMeta(f *testing.F) {
	f.Add("6.2", "36.4.3", "12.6", "8.7", "candidate")
	f.Add("7.2", "39.2.0", "13.2", "8.7,11.0", "supported")
	f.Add("", "36", "x", ",,", "")
	f.Fuzz(func(t *testing.T, jetpack, l4t, cuda, sms, tier string) {
		m, err := parseMeta(map[string]string{matrix.KeyJetPack: jetpack, matrix.KeyL4T: l4t, matrix.KeyCUDA: cuda, matrix.KeySMTargets: sms, matrix.KeyTier: tier})
		if err != nil {
			return
		}
		require.NotEmpty(t, m.Targets)
		require.NotZero(t, m.image.L4T.Major)
		_ = hostfit.Compatible(hostfit.Host{GPU: m.image.Targets[0], L4T: m.image.L4T, DriverCUDA: m.image.CUDA}, m.image)
		_ = tierRank(m.Tier)
	})
}
