package doctor

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/jetbake/jetbake/computecap/host"
)

// Files of containerd and of NVIDIA's drop-in for it, relative to the root:
// `nvidia-ctk runtime configure --runtime=containerd` writes the nvidia
// runtime into /etc/containerd/conf.d/99-nvidia.toml and adds
// "/etc/containerd/conf.d/*.toml" to the imports of config.toml
// (nvidia-container-toolkit, cmd/nvidia-ctk/runtime/configure/configure.go
// and pkg/config/engine/containerd/config_drop_in.go).
const (
	containerdConfig = "etc/containerd/config.toml"
	containerdDropIn = "etc/containerd/conf.d"
)

// maxImports bounds the files one import pattern reads.
const maxImports = 64

// criPlugin is the CRI plugin that holds containerd's runtimes in a
// configuration of version (nvidia-container-toolkit,
// pkg/config/engine/containerd/containerd.go, criRuntimePluginName): "cri" in
// version 1, "io.containerd.grpc.v1.cri" in 2, "io.containerd.cri.v1.runtime"
// from 3 (containerd 2.0).
func criPlugin(version int64) string {
	switch version {
	case 1:
		return "cri"
	case 2:
		return "io.containerd.grpc.v1.cri"
	}
	return "io.containerd.cri.v1.runtime"
}

// containerdRuntime is what one containerd configuration, with its
// imports, says of NVIDIA's runtime.
type containerdRuntime struct {
	// found is true when the top-level file exists.
	found bool
	err   error
	// file is the last file that defines runtimes.nvidia ("" for none),
	// binary its options.BinaryName.
	file, binary string
	// defaultRuntime is default_runtime_name, "" when unset.
	defaultRuntime string
	// unimported are drop-in files that define runtimes.nvidia but that
	// the top-level file does not import.
	unimported []string
}

// files reads a host's files by their paths relative to its root.
type files interface {
	// read reads one regular file; an error satisfies os.IsNotExist when
	// it is missing.
	read(rel string) ([]byte, error)
	// glob lists the files that match pattern (relative to the root).
	glob(pattern string) []string
	// list lists the names in folder rel.
	list(rel string) []string
}

// underRoot is files on disk under a root, read with host.ReadRegular.
type underRoot string

func (r underRoot) read(rel string) ([]byte, error) {
	return host.ReadRegular(filepath.Join(string(r), rel), maxConfig)
}

func (r underRoot) glob(pattern string) []string {
	matches, _ := filepath.Glob(filepath.Join(string(r), pattern))
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		rel, err := filepath.Rel(string(r), m)
		if err == nil {
			out = append(out, filepath.ToSlash(rel))
		}
	}
	return out
}

func (r underRoot) list(rel string) []string {
	entries, _ := os.ReadDir(filepath.Join(string(r), rel))
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out
}

// readContainerdRuntime reads the configuration at config (relative to the
// root) and the files it imports; the drop-in folder, when given, is
// searched for files that define the nvidia runtime but are not imported.
func readContainerdRuntime(fsys files, config, dropIn string) containerdRuntime {
	doc, err := readTOML(fsys, config)
	if os.IsNotExist(err) {
		return containerdRuntime{}
	}
	out := containerdRuntime{found: true}
	if err != nil {
		out.err = err
		return out
	}
	names := []string{"/" + config}
	docs := []map[string]any{doc}
	imported := map[string]bool{}
	for _, pattern := range stringsOf(doc["imports"]) {
		if !path.IsAbs(pattern) {
			pattern = path.Join(path.Dir("/"+config), pattern) // as containerd resolves it
		}
		// Cleaned from the root: an import never leaves the host's root.
		matches := fsys.glob(strings.TrimPrefix(path.Clean("/"+pattern), "/"))
		slices.Sort(matches)
		if len(matches) > maxImports {
			matches = matches[:maxImports]
		}
		for _, rel := range matches {
			d, err := readTOML(fsys, rel)
			if err != nil {
				out.err = err
				return out
			}
			names, docs = append(names, "/"+rel), append(docs, d)
			imported["/"+rel] = true
		}
	}
	for i, d := range docs {
		if bin, ok := nvidiaRuntime(d); ok {
			out.file, out.binary = names[i], bin
		}
		if def := lookup(d, "plugins", criPlugin(versionOf(d)), "containerd", "default_runtime_name"); def != nil {
			out.defaultRuntime, _ = def.(string)
		}
	}
	if dropIn != "" {
		for _, name := range fsys.list(dropIn) {
			rel := dropIn + "/" + name
			if !strings.HasSuffix(name, ".toml") || imported["/"+rel] {
				continue
			}
			if d, err := readTOML(fsys, rel); err == nil {
				if _, ok := nvidiaRuntime(d); ok {
					out.unimported = append(out.unimported, "/"+rel)
				}
			}
		}
	}
	return out
}

// readTOML reads one TOML file; a syntax error names the file, line and
// column.
func readTOML(fsys files, rel string) (map[string]any, error) {
	data, err := fsys.read(rel)
	if err != nil {
		return nil, err
	}
	var doc map[string]any
	if err := toml.Unmarshal(data, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, col := de.Position()
			return nil, fmt.Errorf("/%s:%d:%d: not valid TOML: %s", rel, row, col, de.Error())
		}
		return nil, fmt.Errorf("/%s: not valid TOML: %w", rel, err)
	}
	return doc, nil
}

// versionOf is a configuration's version; 1 when it has none, as containerd
// reads it.
func versionOf(doc map[string]any) int64 {
	if v, ok := doc["version"].(int64); ok {
		return v
	}
	return 1
}

// nvidiaRuntime is the BinaryName of the nvidia runtime of the
// configuration's CRI plugin, and whether the runtime is defined.
func nvidiaRuntime(doc map[string]any) (string, bool) {
	rt, ok := lookup(doc, "plugins", criPlugin(versionOf(doc)), "containerd", "runtimes", "nvidia").(map[string]any)
	if !ok {
		return "", false
	}
	bin, _ := lookup(rt, "options", "BinaryName").(string)
	return bin, true
}

// lookup follows keys through nested tables; nil when one is missing.
func lookup(doc map[string]any, keys ...string) any {
	var cur any = doc
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[k]
	}
	return cur
}

// stringsOf is a TOML array of strings; other values are left out.
func stringsOf(v any) []string {
	var out []string
	if list, ok := v.([]any); ok {
		for _, e := range list {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	return out
}

// binaryInstalled reports whether the runtime a configuration names is
// installed under root: an absolute path as it is, a bare name in the
// folders NVIDIA's runtime is installed in.
func binaryInstalled(root, bin string) bool {
	if bin == "" {
		return false
	}
	if path.IsAbs(bin) {
		fi, err := os.Stat(filepath.Join(root, bin))
		return err == nil && host.Executable(fi)
	}
	p, _ := host.Root(root).Find(bin, runtimeDirs(), host.Executable)
	return p != ""
}
