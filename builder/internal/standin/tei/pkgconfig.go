package tei

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// pkgConfigLibDir is the library folder of package pkg as openssl-sys's
// build script gets it from pkg-config (through the pkg-config crate,
// `pkg-config --libs openssl`): the libdir of the first PKG.pc on
// pkg-config's search path, which is PKG_CONFIG_PATH's folders and then
// PKG_CONFIG_LIBDIR's, else pkg-config's built-in folders for the machine
// it runs on (pkgConfigDefaults). PKG_CONFIG_PATH comes before the
// built-in folders, not instead of them: in a cross build base that has
// the build machine's libssl-dev and not the target's libssl-dev:arm64,
// pkg-config answers the x86_64 folder, and the link meets x86_64
// libraries. false when no PKG.pc is found.
func pkgConfigLibDir(h Host, pkg string) (string, bool) {
	var dirs []string
	if v := h.getenv("PKG_CONFIG_PATH"); v != "" {
		dirs = append(dirs, filepath.SplitList(v)...)
	}
	if v, ok := h.Env("PKG_CONFIG_LIBDIR"); ok {
		dirs = append(dirs, filepath.SplitList(v)...)
	} else {
		dirs = append(dirs, pkgConfigDefaults(h.Arch)...)
	}
	for _, d := range dirs {
		pc := filepath.Join(d, pkg+".pc")
		if !h.exists(pc) {
			continue
		}
		if lib := pcVariable(h.path(pc), "libdir"); lib != "" {
			return lib, true
		}
		return filepath.Dir(d), true
	}
	return "", false
}

// pkgConfigDefaults is Debian's and Ubuntu's pkg-config search path on a
// machine of goarch (`pkg-config --variable pc_path pkg-config`).
func pkgConfigDefaults(goarch string) []string {
	multiarch := strings.Replace(HostTriple(goarch), "-unknown-", "-", 1)
	return []string{"/usr/local/lib/" + multiarch + "/pkgconfig", "/usr/local/lib/pkgconfig", "/usr/local/share/pkgconfig",
		"/usr/lib/" + multiarch + "/pkgconfig", "/usr/lib/pkgconfig", "/usr/share/pkgconfig"}
}

// pcVariable is the value of variable name in a .pc file, with
// ${prefix}-style references to earlier variables expanded; "" if unset.
// Hand-written: the stand-in runs in images without pkg-config's library,
// and reads only a .pc file's "name=value" lines (FuzzPCVariables).
func pcVariable(path, name string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return pcVariables(string(data))[name]
}

// pcVariables are the variables of a .pc file's text.
func pcVariables(text string) map[string]string {
	vars := map[string]string{}
	s := bufio.NewScanner(strings.NewReader(text))
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), "=")
		if !ok || strings.ContainsAny(k, " :") {
			continue
		}
		vars[k] = os.Expand(strings.TrimSpace(v), func(r string) string { return vars[r] })
	}
	return vars
}
