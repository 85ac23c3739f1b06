package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
	"github.com/jetbake/jetbake/entrypoint/evidencespec"
	"github.com/jetbake/jetbake/entrypoint/internal/eptest"
)

// TestProbeLeaksNoSecret plants a host name, serial numbers, a model name
// with a serial, user names, home paths, tokens and addresses in the
// sysroot, the environment and the image description, runs the probe (to
// stdout and with --out) and scans the evidence for each planted string.
func TestProbeLeaksNoSecret(t *testing.T) {
	secrets := map[string]string{
		"hostname":      "jetson-lab-s3cr3t-7781",
		"serial":        "1421522011234",
		"model serial":  "SN9988776655",
		"user":          "alice-s3cr3t",
		"home":          "/home/alice-s3cr3t",
		"hf token":      "hf_AbCdEfS3cr3tT0ken",
		"github token":  "ghp_S3cr3tT0kenValue0123",
		"aws key":       "wJalrXUtnFEMIS3cr3tKEY",
		"proxy address": "10.20.30.40",
		"gpu uuid":      "GPU-5e1f-s3cr3t-uuid",
		"registry pass": "regpa55w0rd",
		"revision tok":  "ghs_notACommit",
	}
	parent := filepath.Join(t.TempDir(), "home", secrets["user"])
	require.NoError(t, os.MkdirAll(parent, 0o755))
	root := orinRoot(t)
	planted := filepath.Join(parent, "root")
	require.NoError(t, os.Rename(root, planted))
	root = planted

	eptest.WriteFile(t, root, "/etc/hostname", secrets["hostname"]+"\n", 0o644)
	eptest.WriteFile(t, root, "/proc/sys/kernel/hostname", secrets["hostname"]+"\n", 0o644)
	eptest.WriteFile(t, root, "/proc/device-tree/serial-number", secrets["serial"]+"\x00", 0o644)
	eptest.WriteFile(t, root, "/sys/firmware/devicetree/base/serial-number", secrets["serial"]+"\x00", 0o644)
	eptest.WriteFile(t, root, "/proc/device-tree/model",
		"NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super "+secrets["model serial"]+"\x00", 0o644)
	eptest.WriteFile(t, root, "/etc/machine-id", secrets["serial"]+"\n", 0o644)
	// The router prints the environment: it must reach stderr only.
	eptest.WriteFile(t, root, "/usr/local/bin/router-87", "#!/bin/sh\nenv\nhostname\n", 0o755)
	spec, err := os.ReadFile(filepath.Join(root, "etc", "jetbake", "image.json"))
	require.NoError(t, err)
	spec = bytes.Replace(spec, []byte(`"tags": [`),
		[]byte(`"tags": ["ghcr.io/jetbake/text-embeddings-router:1.8.2-jetpack6.2-x", "bob:`+secrets["registry pass"]+`@ghcr.io/jetbake/x:1", `), 1)
	spec = bytes.Replace(spec, []byte(`"revision": "677e5d8f2a41c0b9e6d3f1a2b4c5d6e7f8091a2b"`),
		[]byte(`"revision": "`+secrets["revision tok"]+`"`), 1)
	eptest.WriteFile(t, root, "/etc/jetbake/image.json", string(spec), 0o644)

	env := []string{
		"HOSTNAME=" + secrets["hostname"],
		"USER=" + secrets["user"],
		"LOGNAME=" + secrets["user"],
		"HOME=" + secrets["home"],
		"PATH=" + secrets["home"] + "/bin:/usr/local/bin:/usr/bin:/bin",
		"LD_LIBRARY_PATH=" + secrets["home"] + "/lib",
		"HF_TOKEN=" + secrets["hf token"],
		"GITHUB_TOKEN=" + secrets["github token"],
		"AWS_SECRET_ACCESS_KEY=" + secrets["aws key"],
		"http_proxy=http://" + secrets["proxy address"] + ":3128",
		"NVIDIA_VISIBLE_DEVICES=" + secrets["gpu uuid"],
		"JETBAKE_IMAGE_DIGEST=" + testDigest,
	}
	r := runProbeIn(t, root, "arm64", []string{"--smoke", "--kernel"}, env...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, secrets["hf token"], "the router did print the environment, on stderr")

	out := filepath.Join(t.TempDir(), "evidence.json")
	r2 := runProbeIn(t, root, "arm64", []string{"--smoke", "--kernel", "--out", out}, env...)
	require.Equal(t, 0, r2.code, r2.stderr)
	file, err := os.ReadFile(out)
	require.NoError(t, err)

	for name, evidence := range map[string]string{"stdout": r.stdout, "--out file": string(file)} {
		for what, secret := range secrets {
			require.NotContains(t, evidence, secret, "%s leaks the %s", name, what)
		}
		require.NotContains(t, evidence, root, "%s leaks the sysroot path", name)
		require.NotContains(t, evidence, "/home", name)
		require.NotContains(t, evidence, "/usr/", name)
		require.NotContains(t, evidence, "Engineering Reference", "%s echoes the raw model", name)
	}
	require.Equal(t, []string{"ghcr.io/jetbake/text-embeddings-router:1.8.2-jetpack6.2-x",
		"ghcr.io/jetbake/text-embeddings-router:1.8.2-jetpack6.2"}, r.ev.Image.Tags)
	require.Empty(t, r.ev.Revision)
	require.Equal(t, "Jetson Orin Nano Super", r.ev.Host.DeviceClass)
	require.Equal(t, evidencespec.Passed, statuses(&r.ev)[evidencespec.CheckCUDAKernel], "the kernel check ran, and its driver path stayed out")
	require.True(t, strings.HasPrefix(string(file), "{\n  \"schema_version\": 1,"))
}

func TestDeviceClass(t *testing.T) {
	tests := []struct {
		name, compatible, model, socID string
		want                           string
		known                          bool
	}{
		{"AGX Orin devkit", "nvidia,p3737-0000+p3701-0005\x00nvidia,p3701-0005\x00nvidia,tegra234\x00", "", "", "Jetson AGX Orin", true},
		{"Orin Nano Super", "nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00", "", "", "Jetson Orin Nano Super", true},
		{"Orin Nano", "nvidia,p3768-0000+p3767-0005\x00nvidia,p3767-0005\x00nvidia,tegra234\x00", "", "", "Jetson Orin Nano", true},
		{"Orin NX 16GB", "nvidia,p3768-0000+p3767-0000\x00nvidia,p3767-0000\x00nvidia,tegra234\x00", "", "", "Jetson Orin NX", true},
		{"AGX Thor devkit", "nvidia,p4071-0000+p3834-0008\x00nvidia,p3834-0008\x00nvidia,tegra264\x00", "", "", "Jetson AGX Thor", true},
		{"AGX Xavier", "nvidia,p2822-0000+p2888-0004\x00nvidia,tegra194\x00", "", "", "Jetson AGX Xavier", true},
		{"Xavier NX", "nvidia,p3509-0000+p3668-0001\x00nvidia,tegra194\x00", "", "", "Jetson Xavier NX", true},
		{"model words when the part is unknown", "nvidia,p9999-0000\x00nvidia,tegra234\x00",
			"NVIDIA Jetson AGX Orin Developer Kit SN123", "", "Jetson AGX Orin", true},
		{"part of another SoC does not count", "nvidia,p3701-0005\x00nvidia,tegra194\x00", "", "", "Jetson Xavier (other module)", false},
		{"unknown Orin module", "nvidia,p9999-0000\x00nvidia,tegra234\x00", "Custom carrier 42", "", "Jetson Orin (other module)", false},
		{"soc_id alone: the SoC's class", "", "", "38", "Jetson Thor", true},
		{"Grace is not a Jetson", "", "", "36", "", false},
		{"desktop", "", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.compatible != "" {
				eptest.WriteFile(t, root, "/proc/device-tree/compatible", tt.compatible, 0o644)
			}
			if tt.model != "" {
				eptest.WriteFile(t, root, "/proc/device-tree/model", tt.model+"\x00", 0o644)
			}
			if tt.socID != "" {
				eptest.WriteFile(t, root, "/sys/devices/soc0/soc_id", tt.socID+"\n", 0o644)
			}
			d := readDevice(host.Root(root))
			require.Equal(t, tt.want, d.class)
			require.Equal(t, tt.known, d.known)
		})
	}
}

func TestDeviceConflict(t *testing.T) {
	root := t.TempDir()
	eptest.WriteFile(t, root, "/proc/device-tree/compatible", "nvidia,p3701-0005\x00nvidia,tegra234\x00", 0o644)
	eptest.WriteFile(t, root, "/sys/devices/soc0/soc_id", "38\n", 0o644)
	d := readDevice(host.Root(root))
	require.True(t, d.conflict)
	require.Equal(t, "tegra264", d.soc.Name, "the SoC of soc_id, as everywhere else")
	require.Equal(t, evidencespec.Failed, socCheck(&d).Status)
}

func TestSafeForms(t *testing.T) {
	refs := map[string]bool{
		"ghcr.io/jetbake/text-embeddings-router:1.8.2-jetpack6.2": true,
		"127.0.0.1:5000/jetbake/tei:jetpack6":                     true,
		"user:pass@ghcr.io/x/y:1":                                 false,
		"ghcr.io/x/y":                                             false,
		"ghcr.io/x/../y:1":                                        false,
		"ghcr.io/x/y:tag with space":                              false,
		"/home/alice/x:1":                                         false,
		"ghcr.io/X/y:1":                                           false,
		"ghcr.io:/x:1":                                            false,
	}
	for ref, want := range refs {
		require.Equal(t, want, safeRef(ref), ref)
	}
	require.True(t, safeRevision("677e5d8"))
	require.False(t, safeRevision("v1.2.3"))
	require.True(t, validDigest(testDigest))
	require.False(t, validDigest(strings.ToUpper(testDigest)))
	require.False(t, validDigest("sha512:"+strings.Repeat("a", 64)))
}

func FuzzDeviceClass(f *testing.F) {
	f.Add([]byte("nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00"), []byte("NVIDIA Jetson Orin Nano SN1\x00"))
	f.Add([]byte("nvidia,p4071-0000+p3834-0008\x00nvidia,tegra264\x00"), []byte(""))
	f.Add([]byte("tegra194"), []byte("Jetson AGX Xavier 1234"))
	allowed := map[string]bool{}
	for _, c := range moduleClasses() {
		allowed[c.name] = true
	}
	f.Fuzz(func(t *testing.T, compatible, model []byte) {
		entries := host.ParseCompatible(compatible)
		soc, ok := computecap.DefaultTable().SoCFromCompatible(entries)
		if !ok {
			return
		}
		class, known := classFromCompatible(soc, entries)
		if !known {
			class, known = classFromModel(soc, host.ParseModel(model))
		}
		if known && !allowed[class] {
			t.Fatalf("class %q is not in the allow-list", class)
		}
	})
}

func FuzzSafeRef(f *testing.F) {
	for _, s := range []string{"ghcr.io/jetbake/tei:1.8.2-jetpack6.2", "127.0.0.1:5000/a/b:c", "a:b@c/d:e", "x/../y:z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !safeRef(s) {
			return
		}
		if strings.ContainsAny(s, "@ \t\n\"'\\$`") || strings.Contains(s, "..") || len(s) > 255 {
			t.Fatalf("safeRef accepted %q", s)
		}
	})
}

// TestHostRuleDetailsAreValidPhrases applies the host rule of every JetPack
// release of the table to a host of every release, with and without its
// SoC's compatibility folder and driver, and fills the probe's host-rule
// phrases with the verdict: each detail must be one builder/evidence
// admits. The host rule writes the host and the need (computecap), the
// evidence spec only mirrors their forms; this keeps the two together.
func TestHostRuleDetailsAreValidPhrases(t *testing.T) {
	tab := computecap.DefaultTable()
	var n int
	for _, img := range tab.Releases() {
		for _, hostRel := range tab.Releases() {
			l4t, err := computecap.ParseL4TVersion(hostRel.L4T)
			require.NoError(t, err)
			for _, soc := range tab.SoCs {
				var compat []string
				for _, fc := range soc.ForwardCompat {
					compat = append(compat, fc.Dir)
				}
				needs, err := host.Needs(tab, host.ImageFields{L4T: img.L4T, JetPack: img.JetPack, CUDA: img.CUDA.String()}, compat)
				require.NoError(t, err)
				for _, withDriver := range []bool{false, true} {
					st := computecap.HostState{SoC: soc, HasSoC: true, L4T: l4t, HasL4T: true, Driver: hostRel.CUDA, HasDriver: withDriver}
					v := tab.CheckHost(needs, st)
					if v.Unknown || v.Rule == "" {
						continue
					}
					for check, phrase := range map[string]string{"l4t-matches-image": evidencespec.DetailRuleRefused,
						"binary-chosen": evidencespec.DetailRuleRefused} {
						if v.OK {
							phrase = evidencespec.DetailRuleMet
							if v.CompatDir != "" {
								phrase = evidencespec.DetailRuleCompat
							}
							check = "l4t-matches-image"
						}
						d := evidencespec.Fill(phrase, v.Host, v.Need)
						require.True(t, evidencespec.ValidDetail(check, d), "%s: %q", check, d)
						n++
					}
				}
			}
		}
	}
	require.Greater(t, n, 100)
}
