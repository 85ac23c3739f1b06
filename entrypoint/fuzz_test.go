package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	computecap "github.com/jetbake/jetbake/compute_cap"
	"github.com/jetbake/jetbake/entrypoint/imagespec"
)

func FuzzParseTegraRelease(f *testing.F) {
	for _, host := range []string{"orin-nano-jp6", "agx-orin-jp5", "thor-jp7"} {
		data, err := os.ReadFile(filepath.Join("testdata", "hosts", host, "etc", "nv_tegra_release"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("# R36 (release), REVISION: 4"))
	f.Add([]byte("# R99999 (release), REVISION: 1.2.3.4"))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := parseTegraRelease(data)
		if err != nil {
			return
		}
		if v.Major < 1 || v.Minor < 0 || v.Patch < 0 {
			t.Fatalf("parsed %q into %+v", data, v)
		}
		back, err := parseL4TVersion(v.String())
		if err != nil || back != v {
			t.Fatalf("%s does not read back: %+v, %v", v, back, err)
		}
	})
}

func FuzzParseCompatible(f *testing.F) {
	f.Add([]byte("nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00"))
	f.Add([]byte("nvidia,p4071-0000+p3834-0008\x00nvidia,p3834-0008\x00nvidia,tegra264\x00"))
	f.Add([]byte("\x00 \x00tegra194"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries := parseCompatible(data)
		for _, e := range entries {
			if e == "" || strings.Contains(e, "\x00") || strings.TrimSpace(e) != e {
				t.Fatalf("bad entry %q from %q", e, data)
			}
		}
		if soc, ok := socFromCompatible(entries); ok && !soc.Capability.Valid() {
			t.Fatalf("SoC %+v without a valid capability", soc)
		}
	})
}

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
		data, err := os.ReadFile(filepath.Join("testdata", "images", name+".json"))
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
		if len(img.caps) != len(img.Targets) {
			t.Fatalf("%d capabilities for %d targets", len(img.caps), len(img.Targets))
		}
		for _, c := range img.caps {
			if !c.Valid() {
				t.Fatalf("invalid target %+v", c)
			}
			candidates(computecap.DefaultTable(), img, c)
			bestSibling(img, siblingQuery{gpu: &c})
		}
	})
}
