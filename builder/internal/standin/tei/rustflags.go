package tei

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Triple is the Rust target the Jetson routers are built for.
const Triple = "aarch64-unknown-linux-gnu"

// Flags are the rustflags cargo hands rustc, and where they came from.
type Flags struct {
	// Args are the flags, in order.
	Args []string
	// From is CARGO_ENCODED_RUSTFLAGS, RUSTFLAGS, a config file's path and
	// key, or "" when none applies.
	From string
}

// Env is how the stand-in reads the environment (os.LookupEnv in the
// program, a map in tests).
type Env func(key string) (string, bool)

// Rustflags finds the rustflags in effect for a build in dir, with cargo's
// precedence (https://doc.rust-lang.org/cargo/reference/config.html#buildrustflags):
// CARGO_ENCODED_RUSTFLAGS (split on 0x1f), else RUSTFLAGS (split on
// spaces), else every target.<triple>.rustflags of the config files joined,
// else build.rustflags joined. Set to an empty value, either variable
// still wins, with no flags. The config files are .cargo/config.toml (or
// .cargo/config) in dir and each of its parents, then
// $CARGO_HOME/config.toml; arrays from several files are joined, the file
// nearer dir last. target.'cfg(...)' tables are not read.
func Rustflags(dir string, env Env) (Flags, error) {
	if v, ok := env("CARGO_ENCODED_RUSTFLAGS"); ok {
		var args []string
		if v != "" {
			args = strings.Split(v, "\x1f")
		}
		return Flags{Args: args, From: "CARGO_ENCODED_RUSTFLAGS"}, nil
	}
	if v, ok := env("RUSTFLAGS"); ok {
		return Flags{Args: strings.Fields(v), From: "RUSTFLAGS"}, nil
	}
	files, err := configFiles(dir, env)
	if err != nil {
		return Flags{}, err
	}
	for _, key := range []string{"target." + Triple + ".rustflags", "build.rustflags"} {
		var args, from []string
		for _, cf := range files {
			v, ok := cf.lookup(key)
			if !ok {
				continue
			}
			flags, err := flagList(v)
			if err != nil {
				return Flags{}, fmt.Errorf("error in %s: `%s` %w", cf.path, key, err)
			}
			args = append(args, flags...)
			from = append(from, cf.path)
		}
		if from != nil {
			return Flags{Args: args, From: strings.Join(from, ", ") + ": " + key}, nil
		}
	}
	return Flags{}, nil
}

// configFile is one parsed cargo configuration file.
type configFile struct {
	path string
	doc  map[string]any
}

// lookup reads a dotted key such as "build.rustflags".
func (c configFile) lookup(key string) (any, bool) {
	var cur any = c.doc
	for _, part := range splitKey(key) {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// splitKey splits "target.aarch64-unknown-linux-gnu.rustflags": the
// triple's own dots are not separators.
func splitKey(key string) []string {
	if rest, ok := strings.CutPrefix(key, "target."); ok {
		i := strings.LastIndex(rest, ".")
		return []string{"target", rest[:i], rest[i+1:]}
	}
	return strings.Split(key, ".")
}

// flagList reads a rustflags value: an array of strings, or one string split on spaces.
func flagList(v any) ([]string, error) {
	switch x := v.(type) {
	case string:
		return strings.Fields(x), nil
	case []any:
		out := make([]string, 0, len(x))
		for _, item := range x {
			s, ok := item.(string)
			if !ok {
				return nil, errors.New("expected a string or an array of strings")
			}
			out = append(out, s)
		}
		return out, nil
	}
	return nil, errors.New("expected a string or an array of strings")
}

// configFiles lists the config files for a build in dir, lowest precedence
// first: $CARGO_HOME/config.toml, then from the root down to dir.
func configFiles(dir string, env Env) ([]configFile, error) {
	var paths []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		for _, name := range []string{"config.toml", "config"} {
			p := filepath.Join(d, ".cargo", name)
			if _, err := os.Stat(p); err == nil {
				paths = append(paths, p)
				break
			}
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	slices.Reverse(paths)
	if home := cargoHome(env); home != "" {
		p := filepath.Join(home, "config.toml")
		if _, err := os.Stat(p); err == nil && !slices.Contains(paths, p) {
			paths = append([]string{p}, paths...)
		}
	}
	var out []configFile
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		doc := map[string]any{}
		if err := toml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("could not load Cargo configuration\n\nCaused by:\n  could not parse TOML configuration in `%s`: %w", p, err)
		}
		out = append(out, configFile{path: p, doc: doc})
	}
	return out, nil
}

// cargoHome is $CARGO_HOME, else $HOME/.cargo.
func cargoHome(env Env) string {
	if v, ok := env("CARGO_HOME"); ok && v != "" {
		return v
	}
	if h, ok := env("HOME"); ok && h != "" {
		return filepath.Join(h, ".cargo")
	}
	return ""
}

// Codegen returns the value of the last "-C NAME=VALUE" among flags (also
// written -CNAME=VALUE, --codegen NAME=VALUE, --codegen=NAME=VALUE), and
// every value of it when the option may be given more than once.
func Codegen(flags []string, name string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		var opt string
		switch f := flags[i]; {
		case f == "-C" || f == "--codegen":
			if i+1 < len(flags) {
				i++
				opt = flags[i]
			}
		case strings.HasPrefix(f, "--codegen="):
			opt = strings.TrimPrefix(f, "--codegen=")
		case strings.HasPrefix(f, "-C"):
			opt = strings.TrimPrefix(f, "-C")
		}
		if v, ok := strings.CutPrefix(opt, name+"="); ok {
			out = append(out, v)
		}
	}
	return out
}
