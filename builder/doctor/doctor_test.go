package doctor

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Files of the fake hosts.
const (
	orinRelease = "# R36 (release), REVISION: 4.3, GCID: 38968081, BOARD: generic, EABI: aarch64, DATE: Wed Jan  8 01:49:37 UTC 2025\n"
	r39Release  = "# R39 (release), REVISION: 2.0, GCID: 1, BOARD: generic, EABI: aarch64, DATE: Mon Jun  1 00:00:00 UTC 2026\n"
	orinCompat  = "nvidia,p3768-0000+p3767-0005-super\x00nvidia,p3767-0005\x00nvidia,tegra234\x00"
	runtimeJSON = `{"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "runtimeArgs": []}}}`
	defaultJSON = `{"default-runtime": "nvidia", "runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}}`
	cdiYAML     = "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\n"
)

// dpkg returns a dpkg status file with the toolkit at version (and an
// unrelated package around it); status is dpkg's Status field.
func dpkg(version, status string) string {
	return "Package: bash\nStatus: install ok installed\nVersion: 5.2.15-2\n\n" +
		"Package: nvidia-container-toolkit\nStatus: " + status + "\nPriority: optional\nVersion: " + version +
		"\nDescription: NVIDIA Container toolkit\n Provides tools.\n\nPackage: zlib1g\nStatus: install ok installed\nVersion: 1:1.2.13\n"
}

// jetson is an Orin Nano with JetPack 6.2 and everything a container needs.
func jetson() map[string]string {
	return map[string]string{
		"etc/nv_tegra_release":                          orinRelease,
		"proc/device-tree/compatible":                   orinCompat,
		"proc/device-tree/model":                        "NVIDIA Jetson Orin Nano Engineering Reference Developer Kit Super\x00",
		"usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1": "",
		"var/lib/dpkg/status":                           dpkg("1.17.8-1", "install ok installed"),
		"etc/docker/daemon.json":                        defaultJSON,
		"etc/cdi/nvidia.yaml":                           cdiYAML,
		"usr/bin/nvidia-container-runtime":              "#!/bin/sh\n",
	}
}

func with(files map[string]string, changes ...string) map[string]string {
	for i := 0; i+1 < len(changes); i += 2 {
		if changes[i+1] == "-" {
			delete(files, changes[i])
		} else {
			files[changes[i]] = changes[i+1]
		}
	}
	return files
}

func writeRoot(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, data := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		mode := os.FileMode(0o644)
		if strings.Contains(name, "bin/") {
			mode = 0o755 // programs, such as NVIDIA's runtime
		}
		require.NoError(t, os.WriteFile(p, []byte(data), mode))
	}
	return root
}

func TestDoctor(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		wantOK bool
		// want maps a check to its status and a phrase of its detail.
		want map[string][2]string
		// fix maps a check to a phrase of its fix.
		fix map[string]string
	}{
		{name: "orin with toolkit, default runtime and CDI", files: jetson(), wantOK: true, want: map[string][2]string{
			"jetson":                 {"ok", "Jetson Orin, SM 8.7 (tegra234)"},
			"l4t / jetpack":          {"ok", "R36.4.3 (JetPack 6.2)"},
			"driver cuda":            {"ok", "12.6"},
			"container toolkit":      {"ok", "1.17.8 (dpkg package nvidia-container-toolkit)"},
			"docker nvidia runtime":  {"ok", "runtimes.nvidia"},
			"docker default runtime": {"ok", "nvidia"},
			"cdi spec":               {"ok", "/etc/cdi/nvidia.yaml"},
		}},
		{name: "no toolkit and no docker config", wantOK: false,
			files: with(jetson(), "var/lib/dpkg/status", "-", "etc/docker/daemon.json", "-", "etc/cdi/nvidia.yaml", "-"),
			want: map[string][2]string{
				"container toolkit":      {"fail", "not installed"},
				"docker nvidia runtime":  {"fail", "no /etc/docker/daemon.json"},
				"docker default runtime": {"warn", "runc"},
				"cdi spec":               {"warn", "none"},
			},
			fix: map[string]string{
				"container toolkit":     "apt-get install -y nvidia-container-toolkit",
				"docker nvidia runtime": "nvidia-ctk runtime configure --runtime=docker",
				"cdi spec":              "nvidia-ctk cdi generate",
			}},
		{name: "toolkit removed but its config kept", wantOK: false,
			files: with(jetson(), "var/lib/dpkg/status", dpkg("1.17.8-1", "deinstall ok config-files"), "usr/bin/nvidia-container-runtime", "-"),
			want: map[string][2]string{"container toolkit": {"fail", "not installed"},
				"docker nvidia runtime": {"fail", "runtimes.nvidia in /etc/docker/daemon.json runs nvidia-container-runtime, which is not installed"}}},
		{name: "known-bad toolkit 1.19.1", wantOK: false,
			files: with(jetson(), "var/lib/dpkg/status", dpkg("1.19.1-1", "install ok installed")),
			want:  map[string][2]string{"container toolkit": {"fail", "1.19.1 crashes on the compat_orin library"}},
			fix:   map[string]string{"container toolkit": "--only-upgrade nvidia-container-toolkit"}},
		{name: "runtime configured, not default", wantOK: true,
			files: with(jetson(), "etc/docker/daemon.json", runtimeJSON),
			want: map[string][2]string{
				"docker nvidia runtime":  {"ok", "nvidia-container-runtime"},
				"docker default runtime": {"warn", "pass --runtime nvidia"},
			},
			fix: map[string]string{"docker default runtime": "--set-as-default"}},
		{name: "daemon.json without the nvidia runtime, CDI spec generated", wantOK: true,
			files: with(jetson(), "etc/docker/daemon.json", `{"log-driver": "json-file"}`, "etc/cdi/nvidia.yaml", "-", "var/run/cdi/nvidia.yaml", cdiYAML),
			want: map[string][2]string{
				"docker nvidia runtime": {"warn", "no runtimes.nvidia"},
				"cdi spec":              {"ok", "/var/run/cdi/nvidia.yaml"},
			}},
		{name: "daemon.json broken", wantOK: false,
			files: with(jetson(), "etc/docker/daemon.json", `{"runtimes": `),
			want:  map[string][2]string{"docker nvidia runtime": {"fail", "/etc/docker/daemon.json:1:14: $: not valid JSON at line 1, column 14: unexpected end of the file"}}},
		{name: "daemon.json of the wrong shape", wantOK: false,
			files: with(jetson(), "etc/docker/daemon.json", `{"runtimes": []}`),
			want:  map[string][2]string{"docker nvidia runtime": {"fail", "/etc/docker/daemon.json:1:14: runtimes: must be an object, not an array"}}},
		{name: "orin on JetPack 7.2 with a toolkit before 1.19", wantOK: true,
			files: with(jetson(), "etc/nv_tegra_release", r39Release, "var/lib/dpkg/status", dpkg("1.18.0-1", "install ok installed")),
			want: map[string][2]string{
				"l4t / jetpack":     {"ok", "R39.2.0 (JetPack 7.2)"},
				"driver cuda":       {"ok", "13.2"},
				"container toolkit": {"warn", "compat_orin"},
			}},
		{name: "not a jetson", wantOK: false, files: map[string]string{"etc/hostname": "pc\n"},
			want: map[string][2]string{
				"jetson":        {"fail", "no Jetson SoC"},
				"l4t / jetpack": {"fail", "no /etc/nv_tegra_release"},
				"driver cuda":   {"warn", "unknown"},
			},
			fix: map[string]string{"jetson": "give WithSysroot the board's root file system", "l4t / jetpack": "run the checks on the Jetson itself"}},
		{name: "soc_id without a device tree, as in a container", wantOK: true,
			files: with(jetson(), "proc/device-tree/compatible", "-", "proc/device-tree/model", "-",
				"sys/devices/soc0/family", "Tegra\n", "sys/devices/soc0/soc_id", "35\n"),
			want: map[string][2]string{"jetson": {"ok", "Jetson Orin, SM 8.7"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			r, err := Run(context.Background(), WithSysroot(writeRoot(t, tt.files)),
				WithVersionFunc(func(context.Context, string, ...string) (string, bool) { ran = true; return "", false }))
			require.NoError(t, err)
			require.False(t, ran, "no command runs on a sysroot")
			require.Equal(t, tt.wantOK, r.OK)
			byName := map[string]Check{}
			for _, c := range r.Checks {
				byName[c.Name] = c
			}
			for name, w := range tt.want {
				c, ok := byName[name]
				require.True(t, ok, name)
				require.Equal(t, Status(w[0]), c.Status, "%s: %s", name, c.Detail)
				require.Contains(t, c.Detail, w[1], name)
				if c.Status != StatusOK {
					require.NotEmpty(t, c.Fix, "%s: every problem comes with its fix", name)
				}
			}
			for name, f := range tt.fix {
				require.Contains(t, byName[name].Fix, f, name)
			}
		})
	}
}

// A command words the fix of a host that is not a Jetson with its own
// flags.
func TestDoctorNotJetsonFix(t *testing.T) {
	r, err := Run(context.Background(), WithSysroot(writeRoot(t, map[string]string{"etc/hostname": "pc\n"})), WithNotJetsonFix("run it on the board"))
	require.NoError(t, err)
	require.Equal(t, "run it on the board", r.Checks[0].Fix)
	require.Equal(t, "run it on the board (JetPack installs /etc/nv_tegra_release)", r.Checks[1].Fix)
}

func TestDoctorVersionFromCommand(t *testing.T) {
	f := func(_ context.Context, name string, _ ...string) (string, bool) {
		if name == "nvidia-ctk" {
			return "NVIDIA Container Toolkit CLI version 1.19.1\ncommit: 1234", true
		}
		return "", false
	}
	tk := readToolkit(context.Background(), t.TempDir(), f)
	require.Equal(t, toolkit{version: "1.19.1", from: "nvidia-ctk --version"}, tk)
}

func TestDoctorOutput(t *testing.T) {
	r, err := Run(context.Background(), WithSysroot(writeRoot(t, with(jetson(), "var/lib/dpkg/status", "-"))))
	require.NoError(t, err)
	var text bytes.Buffer
	require.NoError(t, r.WriteText(&text))
	require.Contains(t, text.String(), "container toolkit")
	require.Contains(t, text.String(), "To fix:\n  container toolkit (fail): sudo apt-get")
	require.True(t, strings.HasSuffix(text.String(), "cannot run jetbake images until the failed checks are fixed.\n"), text.String())
	var js bytes.Buffer
	require.NoError(t, r.WriteJSON(&js))
	var back struct {
		OK     bool    `json:"ok"`
		Checks []Check `json:"checks"`
		Host   struct {
			L4T     string `json:"l4t"`
			JetPack string `json:"jetpack"`
			GPU     string `json:"gpu"`
		} `json:"host"`
	}
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.False(t, back.OK)
	require.Equal(t, "36.4.3", back.Host.L4T)
	require.Equal(t, "6.2", back.Host.JetPack)
	require.Equal(t, "8.7", back.Host.GPU)
	require.Len(t, back.Checks, 7)
}
