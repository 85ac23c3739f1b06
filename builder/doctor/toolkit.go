package doctor

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/computecap/host"
)

// dpkgStatus is the dpkg database file, relative to the root.
const dpkgStatus = "var/lib/dpkg/status"

// toolkitPackages are the Debian packages of the NVIDIA container toolkit,
// in the order their version is believed.
func toolkitPackages() [3]string {
	return [3]string{"nvidia-container-toolkit", "nvidia-container-toolkit-base", "nvidia-container-runtime"}
}

// knownBad is a toolkit release known to break jetbake images.
type knownBad struct {
	version string
	problem string
}

// knownBadToolkits lists the toolkit releases that break jetbake images.
// 1.19.1 crashes on the ELF note of the compat_orin library that CUDA 13.2
// runtime images ship for Orin (nvidia-container-toolkit #1804, fixed upstream).
func knownBadToolkits() []knownBad {
	return []knownBad{
		{version: "1.19.1", problem: "crashes on the compat_orin library of CUDA 13.2 images (nvidia-container-toolkit #1804, fixed upstream)"},
	}
}

// compatOrinSince is the first toolkit release that selects an image's
// /usr/local/cuda/compat_orin on Orin.
var compatOrinSince = [3]int{1, 19, 0}

// Fix commands of the toolkit checks.
const (
	installToolkitFix = "sudo apt-get update && sudo apt-get install -y nvidia-container-toolkit"
	upgradeToolkitFix = "sudo apt-get update && sudo apt-get install -y --only-upgrade nvidia-container-toolkit nvidia-container-toolkit-base"
)

// toolkit is what was found of the NVIDIA container toolkit.
type toolkit struct {
	version string // upstream version, such as "1.17.8"; "" when not installed
	from    string // where the version was read
}

// readToolkit reads the toolkit's version from the dpkg database under root,
// then (only for "/") from `nvidia-ctk --version` or `nvidia-container-cli --version`.
func readToolkit(ctx context.Context, root string, version VersionFunc) toolkit {
	if pkgs, err := readDpkgStatus(filepath.Join(root, dpkgStatus)); err == nil {
		for _, name := range toolkitPackages() {
			if v, ok := pkgs[name]; ok {
				return toolkit{version: upstreamVersion(v), from: "dpkg package " + name}
			}
		}
	}
	if version == nil {
		return toolkit{}
	}
	for _, cmd := range []string{"nvidia-ctk", "nvidia-container-cli"} {
		if out, ok := version(ctx, cmd, "--version"); ok {
			if v := versionRE.FindString(out); v != "" {
				return toolkit{version: v, from: cmd + " --version"}
			}
		}
	}
	return toolkit{}
}

var versionRE = regexp.MustCompile(`\d+\.\d+\.\d+`)

// maxDpkgStatus bounds dpkg's status file: a few MiB on a Jetson.
const maxDpkgStatus = 64 << 20

// readDpkgStatus returns the version of every installed package in a dpkg
// status file.
func readDpkgStatus(path string) (map[string]string, error) {
	// A regular file opened without blocking: a pipe there must not hang doctor.
	data, err := host.ReadRegular(path, maxDpkgStatus)
	if err != nil {
		return nil, err
	}
	return parseDpkgStatus(bytes.NewReader(data))
}

// parseDpkgStatus reads dpkg's stanzas ("Package:", "Status:", "Version:",
// separated by blank lines) and keeps the packages whose status ends in
// "installed".
func parseDpkgStatus(r io.Reader) (map[string]string, error) {
	out := map[string]string{}
	var name, status, version string
	flush := func() {
		if name != "" && strings.HasSuffix(status, " installed") {
			out[name] = version
		}
		name, status, version = "", "", ""
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			flush()
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.HasPrefix(line, " ") {
			continue
		}
		switch v = strings.TrimSpace(v); k {
		case "Package":
			name = v
		case "Status":
			status = v
		case "Version":
			version = v
		}
	}
	flush()
	return out, sc.Err()
}

// upstreamVersion drops a Debian epoch and revision: "1:1.17.8-1" is "1.17.8".
func upstreamVersion(v string) string {
	if _, after, ok := strings.Cut(v, ":"); ok {
		v = after
	}
	if i := strings.LastIndex(v, "-"); i > 0 {
		v = v[:i]
	}
	return strings.TrimPrefix(v, "v")
}

// versionLess compares dotted versions numerically; "1.19.0~rc.1" counts as 1.19.0.
func versionLess(v string, o [3]int) bool {
	var n [3]int
	for i, p := range strings.SplitN(v, ".", 3) {
		end := strings.IndexFunc(p, func(r rune) bool { return r < '0' || r > '9' })
		if end < 0 {
			end = len(p)
		}
		n[i], _ = strconv.Atoi(p[:end])
	}
	for i := range n {
		if n[i] != o[i] {
			return n[i] < o[i]
		}
	}
	return false
}

// toolkitCheck is the toolkit's row: installed, not a known-bad release, and
// new enough to pick compat_orin on an Orin with JetPack 7.2.
func toolkitCheck(tk toolkit, f hostfit.Host) Check {
	c := Check{Name: "container toolkit", Status: StatusOK}
	if tk.version == "" {
		c.Status, c.Detail, c.Fix = StatusFail, "not installed (no nvidia-container-toolkit package, no nvidia-ctk)", installToolkitFix
		return c
	}
	c.Detail = tk.version + " (" + tk.from + ")"
	for _, bad := range knownBadToolkits() {
		if upstreamVersion(tk.version) == bad.version {
			c.Status, c.Detail, c.Fix = StatusFail, tk.version+" "+bad.problem, upgradeToolkitFix
			return c
		}
	}
	if f.Family == "Orin" && f.L4T.Major >= 39 && versionLess(tk.version, compatOrinSince) {
		c.Status = StatusWarn
		c.Detail += "; before 1.19 it does not use the compat_orin libraries of CUDA 13.2 images on Orin"
		c.Fix = upgradeToolkitFix
	}
	return c
}
