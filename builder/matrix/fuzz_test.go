package matrix_test

import (
	"os"
	"strings"
	"testing"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/builder/plan"
)

// FuzzParseMatrix checks that the loader never panics and that every matrix
// it accepts can be planned.
func FuzzParseMatrix(f *testing.F) {
	shipped, err := os.ReadFile("../../matrix.json")
	if err != nil {
		f.Fatal(err)
	}
	s := string(shipped)
	f.Add(shipped)
	f.Add([]byte(strings.Replace(s, `"8.7", "11.0"`, `"11.0", "10.1"`, 1)))
	f.Add([]byte(strings.Replace(s, `"{version}-jetpack{jetpack}"`, `"{version}-{jetpack_major}-{l4t}-{cuda}-{release}"`, 1)))
	f.Add([]byte(strings.Replace(s, `"tier": "legacy",`, `"tier": "legacy"`, 1)))
	f.Add([]byte(strings.Replace(s, `"router": {`, `"router": {"name": null,`, 1)))
	f.Add([]byte(`{"router": {}, "image": {"tags": ["{"]}, "releases": [{"targets": [1]}]}`))
	facts := `"facts": {"jetpacks": [{"jetpack": "7.3", "l4t": "39.3.0", "cuda": "13.3", "ubuntu": "24.04", "flavour": "sbsa",
		"rule": "driver-cuda", "sms": ["8.7", "11.0"], "driver_dirs": [{"dir": "/opt/nvidia/l4t-gpu-libs/openrm", "family": "Thor"}]}],
		"socs": [{"name": "tegra300", "soc_id": 41, "family": "Future", "sm": "12.5", "modules": [], "jetpacks": ["8"]}],
		"cross_targets": [{"flavour": "sbsa", "dir": "sbsa-linux", "package": "cuda-cross-sbsa-%d-%d", "platform": "linux/amd64"}]},`
	f.Add([]byte(strings.Replace(strings.Replace(s, `"jetpack": "7.2"`, `"jetpack": "7.3"`, 1), `"image": {`, facts+`"image": {`, 1)))
	f.Add([]byte(strings.Replace(s, `"image": {`, `"facts": "jetson-facts.json", "image": {`, 1)))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"releases": [[[[[[]]]]]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := matrix.Parse(data)
		if err != nil {
			if _, ok := err.(*matrix.ValidationError); !ok {
				t.Fatalf("Parse returned %T, want *matrix.ValidationError: %v", err, err)
			}
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		p, err := plan.New(m)
		if err != nil {
			t.Fatalf("accepted matrix does not plan: %v", err)
		}
		if len(p.Releases) != len(m.Releases) {
			t.Fatalf("planned %d of %d releases", len(p.Releases), len(m.Releases))
		}
	})
}
