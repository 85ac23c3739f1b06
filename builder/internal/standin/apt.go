package standin

import (
	_ "embed"
	"fmt"
	"sort"
	"strings"
)

//go:embed toolchain/apt-get.sh
var aptGetScript []byte

//go:embed toolchain/tool.sh
var toolScript []byte

// aptDir is where a stand-in image keeps its package index (one
// "NAME: DEPENDENCIES" line per package) and each package's files
// (pkgs/NAME/...); aptState lists the packages installed.
const (
	aptDir   = "usr/share/jetbake-standin/apt"
	aptState = "var/lib/jetbake-standin/apt/installed"
)

// aptPackage is one package of the stand-in index.
type aptPackage struct {
	name  string
	deps  []string
	files map[string][]byte // path without the leading slash -> content
	links map[string]string // path -> target
	// installed marks a package the base already has (its files are in the base too).
	installed bool
}

// aptIndex is a stand-in base's package index.
type aptIndex struct {
	pkgs map[string]*aptPackage
}

func (x *aptIndex) add(p *aptPackage) { x.pkgs[p.name] = p }

// addApt adds apt-get, the index and what it installs to the layer; the
// files of installed packages go in place too.
func (l *layer) addApt(x *aptIndex) {
	l.file("usr/bin/apt-get", 0o755, aptGetScript)
	var lines []string
	for _, name := range sortedNames(x.pkgs) {
		p := x.pkgs[name]
		lines = append(lines, fmt.Sprintf("%s: %s", name, strings.Join(p.deps, " ")))
		root := aptDir + "/pkgs/" + name + "/"
		l.dir(strings.TrimSuffix(root, "/"))
		for path, data := range p.files {
			mode := int64(0o644)
			if strings.HasPrefix(path, "usr/bin/") {
				mode = 0o755
			}
			l.file(root+path, mode, data)
			if p.installed {
				l.file(path, mode, data)
			}
		}
		for path, target := range p.links {
			l.link(root+path, target)
			if p.installed {
				l.link(path, target)
			}
		}
		if p.installed {
			l.file(aptState+"/"+name, 0o644, nil)
		}
	}
	l.file(aptDir+"/index", 0o644, []byte(strings.Join(lines, "\n")+"\n"))
}

func sortedNames(m map[string]*aptPackage) []string {
	out := make([]string, 0, len(m))
	for n := range m {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// tool is a package whose only file is a stand-in program.
func tool(name string, bins ...string) *aptPackage {
	p := &aptPackage{name: name, files: map[string][]byte{"usr/share/doc/" + name + "/jetbake-standin": nil}}
	for _, b := range bins {
		p.files["usr/bin/"+b] = toolScript
	}
	return p
}
