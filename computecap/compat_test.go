package computecap

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRunsOn(t *testing.T) {
	tests := []struct {
		name          string
		compiled, gpu Capability
		want          bool
		reason        string
	}{
		// text-embeddings-inference's arms where jetbake agrees.
		{"tei 75 on 75", mk(7, 5), mk(7, 5), true, "own SM 7.5"},
		{"tei 80 on 80", mk(8, 0), mk(8, 0), true, "own SM"},
		{"tei 80 on 86", mk(8, 0), mk(8, 6), true, "older minor version of the same major"},
		{"tei 80 on 89", mk(8, 0), mk(8, 9), true, "desktop GPUs"},
		{"tei 86 on 86", mk(8, 6), mk(8, 6), true, "own SM"},
		{"tei 86 on 89", mk(8, 6), mk(8, 9), true, "desktop GPUs"},
		{"tei 87 on 87", mk(8, 7), mk(8, 7), true, "own SM 8.7"},
		{"tei 89 on 89", mk(8, 9), mk(8, 9), true, "own SM"},
		{"tei 90 on 90", mk(9, 0), mk(9, 0), true, "own SM"},
		{"tei 100 on 100", mk(10, 0), mk(10, 0), true, "own SM"},
		{"tei 110 on 110", mk(11, 0), mk(11, 0), true, "own SM 11.0"},
		{"tei 120 on 120", mk(12, 0), mk(12, 0), true, "own SM"},
		{"tei 120 on 121", mk(12, 0), mk(12, 1), true, "desktop GPUs"},
		{"tei 121 on 121", mk(12, 1), mk(12, 1), true, "own SM"},
		// Where text-embeddings-inference is wrong: Tegra has no minor-version compatibility.
		{"orin does not run sm_80", mk(8, 0), mk(8, 7), false, "Tegra GPUs run only code built for their own SM (binary compatibility across minor versions is desktop-only)"},
		{"orin does not run sm_86", mk(8, 6), mk(8, 7), false, "Jetson Orin, SM 8.7"},
		{"sm_87 does not run on 8.9", mk(8, 7), mk(8, 9), false, "code built for a Tegra SM runs only on that Tegra GPU"},
		{"sm_87 does not run on 8.6", mk(8, 7), mk(8, 6), false, "Tegra SM"},
		{"sm_72 does not run on orin", mk(7, 2), mk(8, 7), false, "Tegra GPUs run only"},
		{"sm_87 does not run on thor", mk(8, 7), mk(11, 0), false, "Tegra GPUs run only"},
		{"xavier does not run sm_70", mk(7, 0), mk(7, 2), false, "Tegra GPUs run only"},
		{"sm_72 does not run on 7.5", mk(7, 2), mk(7, 5), false, "Tegra SM"},
		{"tx2 does not run sm_60", mk(6, 0), mk(6, 2), false, "Tegra GPUs run only"},
		{"nano runs sm_53", mk(5, 3), mk(5, 3), true, "own SM"},
		// Thor's two names.
		{"sm_101 on thor 11.0", mk(10, 1), mk(11, 0), true, "Thor reports 10.1 or 11.0"},
		{"sm_110 on thor 10.1", mk(11, 0), mk(10, 1), true, "same GPU"},
		{"sm_101 on thor 10.1", mk(10, 1), mk(10, 1), true, "own SM 10.1"},
		{"sm_100 not on thor", mk(10, 0), mk(10, 1), false, "Tegra GPUs run only"},
		{"sm_101 not on 10.3", mk(10, 1), mk(10, 3), false, "Tegra SM"},
		// Arch-specific targets.
		{"sm_90a on 9.0", mkA(9, 0), mk(9, 0), true, "arch-specific sm_90a code runs on SM 9.0"},
		{"sm_90a on gpu reported as 9.0a", mkA(9, 0), mkA(9, 0), true, "exact SM"},
		{"sm_90 on gpu reported as 9.0a", mk(9, 0), mkA(9, 0), true, "own SM 9.0"},
		{"sm_90a not on 10.0", mkA(9, 0), mk(10, 0), false, "runs only on SM 9.0, not on SM 10.0"},
		{"sm_90a not on 9.1", mkA(9, 0), mk(9, 1), false, "runs only on SM 9.0"},
		{"sm_100a on 10.0", mkA(10, 0), mk(10, 0), true, "exact SM"},
		{"sm_100a not on 10.3", mkA(10, 0), mk(10, 3), false, "runs only on SM 10.0"},
		{"sm_120a not on 12.1", mkA(12, 0), mk(12, 1), false, "runs only on SM 12.0"},
		{"sm_101a on thor 11.0", mkA(10, 1), mk(11, 0), true, "exact SM"},
		{"sm_110a on thor 10.1", mkA(11, 0), mk(10, 1), true, "exact SM"},
		// Desktop minor and major rules.
		{"newer minor does not run on older", mk(8, 9), mk(8, 6), false, "its own or an older minor version"},
		{"sm_121 not on 12.0", mk(12, 1), mk(12, 0), false, "older minor version"},
		{"sm_75 on 7.0 no", mk(7, 5), mk(7, 0), false, "older minor"},
		{"sm_70 on 7.5", mk(7, 0), mk(7, 5), true, "desktop GPUs"},
		{"sm_80 not on 9.0", mk(8, 0), mk(9, 0), false, "only within one major version"},
		{"sm_90 not on 10.0", mk(9, 0), mk(10, 0), false, "only within one major version"},
		{"sm_90 not on 8.9", mk(9, 0), mk(8, 9), false, "one major version"},
		{"sm_100 not on 12.0", mk(10, 0), mk(12, 0), false, "one major version"},
		{"sm_100 on 10.3", mk(10, 0), mk(10, 3), true, "desktop GPUs"},
		// Invalid inputs.
		{"zero compiled", Capability{}, mk(8, 7), false, "not a valid compute capability"},
		{"zero gpu", mk(8, 7), Capability{}, false, "not valid"},
		{"minor 10 gpu", mk(8, 0), Capability{Major: 8, Minor: 10}, false, "not valid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, reason := RunsOn(tt.compiled, tt.gpu)
			require.Equal(t, tt.want, got, reason)
			require.Contains(t, reason, tt.reason)
			require.NotContains(t, reason, "\n")
		})
	}
}

// TestRunsOnTEITable walks every arm of text-embeddings-inference's
// runtime/compile table and checks where jetbake agrees and where it does
// not (the Tegra GPU 8.7 in the 80..89 ranges).
func TestRunsOnTEITable(t *testing.T) {
	for gpuMinor := 0; gpuMinor <= 9; gpuMinor++ {
		gpu := mk(8, gpuMinor)
		got, reason := RunsOn(mk(8, 0), gpu)
		require.Equal(t, gpuMinor != 7, got, "sm_80 on %v: %s", gpu, reason)
	}
	for gpuMinor := 6; gpuMinor <= 9; gpuMinor++ {
		for compiledMinor := 0; compiledMinor <= 6 && compiledMinor <= gpuMinor; compiledMinor++ {
			gpu, compiled := mk(8, gpuMinor), mk(8, compiledMinor)
			got, reason := RunsOn(compiled, gpu)
			require.Equal(t, gpuMinor != 7, got, "%v on %v: %s", compiled, gpu, reason)
		}
	}
	for _, gpu := range []Capability{mk(8, 6), mk(8, 8), mk(8, 9)} {
		got, _ := RunsOn(mk(8, 7), gpu)
		require.False(t, got, "sm_87 on %v", gpu)
	}
}

// TestRunsOnProperties checks the rules on every pair of capabilities with
// majors 1 to 13.
func TestRunsOnProperties(t *testing.T) {
	var all []Capability
	for major := 1; major <= 13; major++ {
		for minor := 0; minor <= 9; minor++ {
			all = append(all, mk(major, minor), mkA(major, minor))
		}
	}
	for _, compiled := range all {
		for _, gpu := range all {
			got, reason := RunsOn(compiled, gpu)
			require.NotEmpty(t, reason)
			cc, cg := compiled.Canonical(), gpu.Canonical()
			same := cc.Major == cg.Major && cc.Minor == cg.Minor
			if same {
				require.True(t, got, "%v on %v: %s", compiled, gpu, reason)
				continue
			}
			if got {
				require.False(t, compiled.ArchSpecific, "%v on %v", compiled, gpu)
				require.False(t, cc.IsTegra() || cg.IsTegra(), "%v on %v", compiled, gpu)
				require.Equal(t, cc.Major, cg.Major)
				require.Less(t, cc.Minor, cg.Minor)
			}
		}
	}
}

func TestPick(t *testing.T) {
	tests := []struct {
		name    string
		gpu     Capability
		targets []Capability
		want    Capability
	}{
		{"exact", mk(8, 7), []Capability{mk(8, 0), mk(8, 7), mk(9, 0)}, mk(8, 7)},
		{"exact among compatible", mk(8, 6), []Capability{mk(8, 0), mk(8, 6)}, mk(8, 6)},
		{"best compatible", mk(8, 9), []Capability{mk(7, 5), mk(8, 0), mk(8, 6), mk(8, 7), mk(9, 0)}, mk(8, 6)},
		{"best compatible unordered", mk(8, 9), []Capability{mk(8, 6), mk(9, 0), mk(8, 0)}, mk(8, 6)},
		{"thor 10.1 picks 11.0", mk(10, 1), []Capability{mk(8, 7), mk(11, 0)}, mk(11, 0)},
		{"thor 11.0 picks 10.1", mk(11, 0), []Capability{mk(8, 7), mk(10, 1)}, mk(10, 1)},
		{"thor 10.1 prefers literal 10.1", mk(10, 1), []Capability{mk(11, 0), mk(10, 1)}, mk(10, 1)},
		{"thor 11.0 prefers literal 11.0", mk(11, 0), []Capability{mk(10, 1), mk(11, 0)}, mk(11, 0)},
		{"arch-specific preferred on its SM", mk(9, 0), []Capability{mk(9, 0), mkA(9, 0), mk(8, 0)}, mkA(9, 0)},
		{"arch-specific preferred either order", mk(9, 0), []Capability{mkA(9, 0), mk(9, 0)}, mkA(9, 0)},
		{"gpu flag ignored", mkA(9, 0), []Capability{mk(9, 0)}, mk(9, 0)},
		{"arch-specific skipped elsewhere", mk(10, 0), []Capability{mkA(9, 0), mk(10, 0)}, mk(10, 0)},
		{"exact beats higher compatible", mk(12, 1), []Capability{mk(12, 1), mk(12, 0)}, mk(12, 1)},
		{"12.1 runs 12.0", mk(12, 1), []Capability{mk(12, 0), mkA(12, 0)}, mk(12, 0)},
		{"duplicates", mk(8, 7), []Capability{mk(8, 7), mk(8, 7)}, mk(8, 7)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Pick(tt.gpu, tt.targets)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestPickNoBinary(t *testing.T) {
	tests := []struct {
		name    string
		gpu     Capability
		targets []Capability
		msg     string
	}{
		{"orin without sm_87", mk(8, 7), []Capability{mk(9, 0), mk(8, 0)},
			"no binary for Jetson Orin (SM 8.7) in this image: it holds sm_80, sm_90"},
		{"desktop", mk(8, 6), []Capability{mk(8, 7), mk(8, 9)},
			"no binary for GPU with SM 8.6 in this image: it holds sm_87, sm_89"},
		{"thor", mk(10, 1), []Capability{mk(8, 7), mkA(10, 0), mk(10, 0)},
			"no binary for Jetson Thor (SM 10.1) in this image: it holds sm_87, sm_100, sm_100a"},
		{"xavier", mk(7, 2), []Capability{mk(7, 0), mk(8, 7)},
			"no binary for Jetson Xavier (SM 7.2) in this image: it holds sm_70, sm_87"},
		{"empty", mk(8, 7), nil, "no binary for Jetson Orin (SM 8.7) in this image: it holds none"},
		{"arch-specific elsewhere", mk(10, 0), []Capability{mkA(9, 0)},
			"no binary for GPU with SM 10.0 in this image: it holds sm_90a"},
		{"invalid gpu", Capability{}, []Capability{mk(8, 7)},
			"no binary for GPU with SM 0.0 in this image: it holds sm_87"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Pick(tt.gpu, tt.targets)
			require.Equal(t, Capability{}, got)
			require.EqualError(t, err, tt.msg)
			var nb *NoBinaryError
			require.True(t, errors.As(err, &nb))
			require.Equal(t, len(tt.targets), len(nb.Available))
		})
	}
}

func TestPickDoesNotModifyTargets(t *testing.T) {
	targets := []Capability{mk(9, 0), mk(8, 0)}
	_, err := Pick(mk(8, 7), targets)
	require.Error(t, err)
	require.Equal(t, []Capability{mk(9, 0), mk(8, 0)}, targets)
	var nb *NoBinaryError
	require.ErrorAs(t, err, &nb)
	nb.Available[0] = mk(1, 0)
	require.Equal(t, mk(9, 0), targets[0])
}

func BenchmarkPick(b *testing.B) {
	targets := []Capability{mk(7, 5), mk(8, 0), mk(8, 6), mk(8, 7), mk(8, 9), mk(9, 0), mkA(9, 0),
		mk(10, 0), mk(11, 0), mk(12, 0), mk(12, 1)}
	gpus := []Capability{mk(8, 7), mk(10, 1), mk(8, 9)}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := Pick(gpus[i%len(gpus)], targets); err != nil {
			b.Fatal(err)
		}
	}
}
