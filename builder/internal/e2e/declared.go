package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/jetbake/jetbake/computecap"
)

// DeclaredRelease is the release of the test bed's and the demo's matrices
// that rests on declared facts: a fictional JetPack 7.3 (L4T 39.3.0, CUDA
// 13.3, Orin and Thor), which jetbake's table lacks.
const DeclaredRelease = "jetpack7.3"

// DeclaredFactsFile is the facts file beside the matrix that declares it.
const DeclaredFactsFile = "jetson-facts.json"

// DeclaredFacts is DeclaredFactsFile: JetPack 7.2's row as `jetbake facts
// --format json` prints it, with 7.3's L4T and CUDA (docs/facts.md).
const DeclaredFacts = `{
  "jetpacks": [
    {
      "jetpack": "7.3",
      "l4t": "39.3.0",
      "cuda": "13.3",
      "ubuntu": "24.04",
      "flavour": "sbsa",
      "rule": "driver-cuda",
      "sms": ["8.7", "11.0"],
      "driver_dirs": [
        {"dir": "/opt/nvidia/l4t-gpu-libs/nvgpu", "family": "Orin", "driver": {"name": "nvgpu", "nodes": [["/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"], ["/dev/nvmap"]]}},
        {"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor", "driver": {"name": "OpenRM", "nodes": [["/dev/nvidiactl"], ["/dev/nvidia0"]]}}
      ]
    }
  ]
}
`

// DeclaredRows are DeclaredFacts' rows.
func DeclaredRows() computecap.Facts {
	var f computecap.Facts
	if err := json.Unmarshal([]byte(DeclaredFacts), &f); err != nil {
		panic("e2e.DeclaredFacts: " + err.Error()) // a constant of this package
	}
	return f
}

// DeclaredHostViews are the fake Jetsons on the declared JetPack 7.3, an
// Orin and a Thor, as NVIDIA's runtime shows them to a container: R39's CSV
// files (nvtoolkit's R39 line: one per JetPack line, each GPU's driver in
// its own folder), /etc/nv_tegra_release saying "R39 (release), REVISION:
// 3.0", and a driver for CUDA 13.3. They are apart from HostViews, which
// the host rules over jetbake's own table read: without the declared rows
// jetbake knows no L4T 39.3.
func DeclaredHostViews() []FakeHost {
	rows := DeclaredRows()
	return []FakeHost{
		{Name: "orin-jp7.3", L4T: "39.3.0", SocID: 35, Machine: agxOrin, GPU: sm(8, 7), DeviceName: "Orin", DriverCUDA: cuda(13, 3), Declared: rows},
		{Name: "thor-jp7.3", L4T: "39.3.0", SocID: 38, Machine: agxThor, GPU: sm(11, 0), DeviceName: "NVIDIA Thor", DriverCUDA: cuda(13, 3), Declared: rows},
	}
}

// WithDeclaredJetPack writes DeclaredFactsFile into dir, the folder of the
// matrix, and returns the matrix change that names it under "facts" and
// adds DeclaredRelease: jetpack7.2's release with 7.3's versions, tier
// candidate (the highest a release on declared facts may claim without
// evidence) and CUDA 13.3 bases (stand-ins the test bed pushes as it does
// 7.2's), without cross_build_base: jetbake's recipe knows no CUDA 13.3
// devel image, so it builds under QEMU on an amd64 node.
func WithDeclaredJetPack(dir string) (func(map[string]any), error) {
	if err := os.WriteFile(filepath.Join(dir, DeclaredFactsFile), []byte(DeclaredFacts), 0o644); err != nil {
		return nil, err
	}
	return func(m map[string]any) {
		releases, _ := m["releases"].([]any)
		for _, r := range releases {
			from, ok := r.(map[string]any)
			if !ok || from["name"] != "jetpack7.2" {
				continue
			}
			rel := maps.Clone(from)
			rel["name"], rel["jetpack"], rel["l4t"], rel["cuda"], rel["tier"] = DeclaredRelease, "7.3", "39.3.0", "13.3", "candidate"
			rel["build_base"] = "nvcr.io/nvidia/cuda:13.3.0-devel-ubuntu24.04"
			rel["runtime_base"] = "nvcr.io/nvidia/cuda:13.3.0-runtime-ubuntu24.04"
			delete(rel, "cross_build_base")
			m["releases"] = append(releases, rel)
			m["facts"] = DeclaredFactsFile
			return
		}
	}, nil
}

// DeclaredChecks run the declared release's image on its host views, each
// GPU's binary through its router's gate, and on an Orin on JetPack 7.2,
// which its entrypoint refuses with the sentence that names the driver's
// CUDA the image needs (from the row image.json carries): the runs of the
// end-to-end test. The demo runs DemoDeclaredChecks.
func DeclaredChecks() []Check { return DemoDeclaredChecks()[:3] }

// DemoDeclaredChecks are DeclaredChecks and the refusals on a Thor on
// JetPack 7.2 and on 7.0.
func DemoDeclaredChecks() []Check {
	refusal := func(host, l4t, jetpack, driver string) Check {
		return Check{Release: DeclaredRelease, Host: host, WantExit: 1,
			WantFailure: fmt.Sprintf("this image is for JetPack 7.3 (L4T R39.3.0, CUDA 13.3) and needs a driver for CUDA 13.3 or a later 13.x, "+
				"but the host has a driver for CUDA %s on L4T R%s (JetPack %s)", driver, l4t, jetpack)}
	}
	return []Check{
		{Release: DeclaredRelease, Host: "orin-jp7.3", Args: []string{"--model-id", "BAAI/bge-small"}, WantArch: "sm_87",
			WantOutput: []string{"runtime 87 accepted by compile time 87"}},
		{Release: DeclaredRelease, Host: "thor-jp7.3", Args: []string{"--model-id", "BAAI/bge-small"}, WantArch: "sm_110",
			WantOutput: []string{"runtime 110 accepted by compile time 110"}},
		refusal("orin-jp7.2", "39.2.0", "7.2", "13.2"),
		refusal("thor-jp7.2", "39.2.0", "7.2", "13.2"),
		refusal("thor-jp7.0", "38.2.0", "7.0", "13.0"),
	}
}
