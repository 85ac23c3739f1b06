package detect

import (
	"os"
	"strings"
	"testing"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

func FuzzParseNvidiaSMI(f *testing.F) {
	for _, s := range []string{"8.6\n", "[N/A]\n", "N/A", "12.0\n8.9\n", "", "sm_87", "9.0a"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := parseNvidiaSMI(data)
		if err == nil && !c.Valid() {
			t.Fatalf("parsed %q into invalid %+v", data, c)
		}
	})
}

func FuzzParseProbeOutput(f *testing.F) {
	f.Add([]byte(`{"major":8,"minor":7,"driver_version":12060}`))
	f.Add([]byte(`{"major":10,"minor":1,"driver_version":12090}` + "\nextra"))
	f.Add([]byte(`{"major":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := parseProbeOutput(data)
		if err == nil && (!a.GPU.Valid() || a.Driver.Major < 1) {
			t.Fatalf("parsed %q into %+v", data, a)
		}
	})
}

func FuzzParseImage(f *testing.F) {
	for _, name := range []string{"jetpack6", "jetpack7.2", "desktop"} {
		data, err := os.ReadFile(eptest.Testdata("images", name+".json"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema_version":1,"router":"r","jetpack":"6","targets":[{"sm":"87","path":"/r"}]}`))
	f.Add([]byte(`{"schema_version":1,"router":"r","jetpack":"6","targets":[{"sm":"87","path":"/usr/local/bin/../../x"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := imagespec.Parse(data)
		if err != nil {
			if msg := err.Error(); strings.ContainsAny(msg, "\n\x1b\x00") {
				t.Fatalf("the error is not one escaped line: %q", msg)
			}
			return
		}
		for _, tg := range spec.Targets {
			if !imagespec.InBinaryDir(tg.Path) {
				t.Fatalf("accepted target path %q", tg.Path)
			}
		}
		img, err := parseImage(spec)
		if err != nil {
			return
		}
		if len(img.Caps) != len(img.Targets) {
			t.Fatalf("%d capabilities for %d targets", len(img.Caps), len(img.Targets))
		}
		for _, c := range img.Caps {
			if !c.Valid() {
				t.Fatalf("invalid target %+v", c)
			}
			candidates(computecap.DefaultTable(), img, c)
			bestSibling(img, siblingQuery{gpu: &c})
		}
	})
}
