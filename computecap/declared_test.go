package computecap_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
)

// jetPack73 is a fictional JetPack 7.3 on Orin and Thor, in the JSON shape
// `jetbake facts` prints.
const jetPack73 = `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
  "flavour": "sbsa", "rule": "driver-cuda", "sms": ["8.7", "11.0"],
  "driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/nvgpu", "family": "Orin", "driver": {"name": "nvgpu", "nodes": [["/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"], ["/dev/nvmap"]]}},
                  {"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor", "driver": {"name": "OpenRM", "nodes": [["/dev/nvidiactl"], ["/dev/nvidia0"]]}}]}]}`

func declare(t *testing.T, doc string) (*computecap.Table, []computecap.RowProblem) {
	t.Helper()
	var f computecap.Facts
	require.NoError(t, json.Unmarshal([]byte(doc), &f))
	return computecap.DefaultTable().Declare(f)
}

// The rules are one: every shipped row passes the checker declared rows
// pass.
func TestShippedRowsPassTheRules(t *testing.T) {
	require.Empty(t, computecap.DefaultTable().CheckRows())
}

// A shipped row printed by Rows and declared again is redundant: the
// declaration can go. Every shipped row, of every kind.
func TestShippedRowsDeclaredAreRedundant(t *testing.T) {
	tab := computecap.DefaultTable()
	b, err := json.Marshal(tab.Rows())
	require.NoError(t, err)
	var f computecap.Facts
	require.NoError(t, json.Unmarshal(b, &f))
	out, probs := tab.Declare(f)
	n := len(f.JetPacks) + len(f.SoCs) + len(f.Toolchain) + len(f.BaseRepositories) + len(f.BaseImages) +
		len(f.Frameworks) + len(f.CrossTargets) + len(f.CrossRecipes)
	require.Len(t, probs, n)
	for _, p := range probs {
		require.True(t, p.Redundant, "%s: %s", p.Path(), p.Message)
	}
	require.True(t, out.Declared.Empty())
	require.Equal(t, tab.Releases(), out.Releases())
}

func TestDeclareJetPack73(t *testing.T) {
	tab, probs := declare(t, jetPack73)
	require.Empty(t, probs)
	require.True(t, tab.DeclaredJetPack("7.3"))
	require.False(t, tab.DeclaredJetPack("7.2"))
	major, ok := tab.L4TMajorForJetPack("7.3")
	require.True(t, ok)
	require.Equal(t, 39, major)
	rel := tab.Releases()
	last := rel[len(rel)-1]
	require.Equal(t, "7.3", last.JetPack)
	require.Equal(t, []computecap.Capability{{Major: 8, Minor: 7}, {Major: 11}}, last.Capabilities)
	l4t, err := computecap.ParseL4TVersion("39.3.0")
	require.NoError(t, err)
	cuda, ok := tab.DriverCUDAForL4T(l4t)
	require.True(t, ok)
	require.Equal(t, "13.3", cuda.String())
	// The shipped table is untouched.
	_, ok = computecap.DefaultTable().L4TMajorForJetPack("7.3")
	require.False(t, ok)
	require.Empty(t, tab.CheckRows())
}

func TestDeclaredRowsBreakingTheRules(t *testing.T) {
	tests := []struct {
		name, doc, path, message string
	}{
		{"L4T of another JetPack line", `{"jetpacks": [{"jetpack": "7.3", "l4t": "36.5.0", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["11.0"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].l4t", "is on L4T R36, the line of JetPack 6 (JetPack 6.2.1 (L4T 36.4.4)), not of JetPack 7"},
		{"L4T out of order", `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.1.0", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["11.0"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].l4t", "is out of order: JetPack 7.2.1 (L4T 39.2.1) is older than JetPack 7.3 but its L4T is newer than it"},
		{"Tegra on an SBSA line", `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "tegra", "rule": "l4t", "sms": ["11.0"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].flavour", `differs from the flavour of L4T R39's JetPack 7.2.1 (L4T 39.2.1), sbsa`},
		{"rule of the other flavour", `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "l4t", "sms": ["11.0"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].rule", "is not the host rule of an SBSA release"},
		{"CUDA that cannot build the SM", `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["7.2"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].cuda", "CUDA 13.3 cannot build sm_72"},
		{"CUDA out of order", `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.1", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["11.0"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].cuda", "is out of order: JetPack 7.2.1 (L4T 39.2.1) is older than JetPack 7.3 but ships CUDA 13.2"},
		{"an SM no SoC has", `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["12.5"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].sms[0]", "is no Jetson SoC's SM in the table"},
		{"a shipped L4T", `{"jetpacks": [{"jetpack": "7.3", "l4t": "39.2.1", "cuda": "13.3", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["11.0"], "driver_dirs": [{"dir": "/x"}]}]}`,
			"jetpacks[0].l4t", "contradicts jetbake's table, where L4T 39.2.1 is JetPack 7.2.1 (jetPackRows in computecap/facts.go); jetbake's row wins"},
		{"a shipped release with another CUDA", `{"jetpacks": [{"jetpack": "7.2", "l4t": "39.2.0", "cuda": "13.1", "ubuntu": "24.04",
			"flavour": "sbsa", "rule": "driver-cuda", "sms": ["8.7", "11.0"],
			"driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/nvgpu", "family": "Orin", "driver": {"name": "nvgpu", "nodes": [["/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"], ["/dev/nvmap"]]}}, {"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor", "driver": {"name": "OpenRM", "nodes": [["/dev/nvidiactl"], ["/dev/nvidia0"]]}}]}]}`,
			"jetpacks[0].cuda", `contradicts jetbake's table, whose row for JetPack 7.2 has cuda "13.2" (jetPackRows in computecap/facts.go); jetbake's row wins`},
		{"a SoC with a shipped soc_id", `{"socs": [{"name": "tegra300", "soc_id": 35, "family": "Future", "sm": "12.5", "modules": [], "jetpacks": ["8"]}]}`,
			"socs[0].soc_id", "is the soc_id of tegra234 (Jetson Orin)"},
		{"a cross row of another folder", `{"cross_targets": [{"flavour": "sbsa", "dir": "aarch64-linux", "package": "cuda-cross-sbsa-%d-%d", "platform": "linux/amd64"}]}`,
			"cross_targets[0].dir", `contradicts jetbake's table, whose row for the SBSA cross row has dir "sbsa-linux"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, probs := declare(t, tt.doc)
			require.NotEmpty(t, probs)
			var got []string
			for _, p := range probs {
				got = append(got, p.Path()+": "+p.Message)
			}
			require.Contains(t, got[0], tt.path+": "+tt.message, got)
			require.False(t, probs[0].Redundant)
		})
	}
}

// FuzzDeclare: any declared rows are added or refused with a sentence,
// never a panic, and the shipped table is untouched.
func FuzzDeclare(f *testing.F) {
	shipped, err := json.Marshal(computecap.DefaultTable().Rows())
	if err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(jetPack73))
	f.Add(shipped)
	f.Add([]byte(`{"socs": [{"name": "tegra300", "soc_id": 41, "family": "Future", "sm": "12.5", "modules": [], "jetpacks": ["8"]}],
		"toolchain": [{"sm": "12.5", "since": "14.0"}],
		"jetpacks": [{"jetpack": "8.0", "l4t": "40.1.0", "cuda": "14.0", "ubuntu": "26.04", "flavour": "sbsa", "rule": "driver-cuda", "sms": ["12.5"], "driver_dirs": [{"dir": "/x"}]}]}`))
	f.Add([]byte(`{"jetpacks": [{"jetpack": "", "sms": ["0.0"]}], "frameworks": [{"framework": "pytorch", "line": "x"}], "cross_targets": [{}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d computecap.Facts
		if json.Unmarshal(data, &d) != nil {
			return
		}
		tab, probs := computecap.DefaultTable().Declare(d)
		for _, p := range probs {
			if p.Message == "" || p.Path() == "" {
				t.Fatalf("problem without a sentence: %+v", p)
			}
		}
		_ = tab.CheckRows()
		_ = tab.Releases()
		if !computecap.DefaultTable().Declared.Empty() {
			t.Fatal("the shipped table changed")
		}
	})
}
