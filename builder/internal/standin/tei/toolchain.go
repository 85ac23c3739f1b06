package tei

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pelletier/go-toml/v2"
)

// StandinDir is where the stand-in build images keep the toolchain's
// parts: the rustup installer, cargo, sccache and the router templates.
const StandinDir = "/usr/share/jetbake-standin"

// TemplatePath is the prebuilt router of a template ("static",
// "dynamic", "cpu"; see Template) in a stand-in build image.
func TemplatePath(template string) string {
	return filepath.Join(StandinDir, "cargo", "router-"+template)
}

// Toolchain is the toolchain rustup's proxy runs cargo from in dir:
// RUSTUP_TOOLCHAIN, else the channel of rust-toolchain.toml (or
// rust-toolchain) in dir or a parent, else the default of
// $RUSTUP_HOME/settings.toml. It fails as rustup (without automatic
// installs) does when that toolchain is not installed.
func Toolchain(dir string, h Host) (string, error) {
	name := h.getenv("RUSTUP_TOOLCHAIN")
	if name == "" {
		name = toolchainFile(dir)
	}
	home := h.getenv("RUSTUP_HOME")
	if home == "" {
		home = filepath.Join(h.getenv("HOME"), ".rustup")
	}
	if name == "" {
		var settings struct {
			Default string `toml:"default_toolchain"`
		}
		data, err := os.ReadFile(h.path(filepath.Join(home, "settings.toml")))
		if err == nil && toml.Unmarshal(data, &settings) == nil {
			name = settings.Default
		}
	}
	if name == "" {
		return "", errors.New("rustup could not choose a version of cargo to run, because one wasn't specified explicitly, and no default is configured.\n" +
			"help: run 'rustup default stable' to download the latest stable release of Rust and set it as your default toolchain.")
	}
	full := name + "-" + HostTriple(h.Arch)
	if !h.exists(filepath.Join(home, "toolchains", full)) {
		return "", fmt.Errorf("toolchain '%s' is not installed\nhelp: run `rustup toolchain install` to install it", full)
	}
	return name, nil
}

// toolchainFile reads the channel of the nearest rust-toolchain.toml.
func toolchainFile(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		for _, n := range []string{"rust-toolchain.toml", "rust-toolchain"} {
			data, err := os.ReadFile(filepath.Join(d, n))
			if err != nil {
				continue
			}
			var f struct {
				Toolchain struct {
					Channel string `toml:"channel"`
				} `toml:"toolchain"`
			}
			if toml.Unmarshal(data, &f) == nil && f.Toolchain.Channel != "" {
				return f.Toolchain.Channel
			}
		}
		if d == filepath.Dir(d) {
			return ""
		}
	}
}

// targetInstalled fails as rustc does when the toolchain in use in dir has
// no standard library for triple: rustup installs the host's only, unless
// `rustup target add TRIPLE` (or rust-toolchain.toml's targets) adds it.
func targetInstalled(dir, triple string, h Host) error {
	name, err := Toolchain(dir, h)
	if err != nil {
		return err
	}
	home := h.getenv("RUSTUP_HOME")
	if home == "" {
		home = filepath.Join(h.getenv("HOME"), ".rustup")
	}
	if h.exists(filepath.Join(home, "toolchains", name+"-"+HostTriple(h.Arch), "lib", "rustlib", triple)) {
		return nil
	}
	return fmt.Errorf("error[E0463]: can't find crate for `core`\n  |\n  = note: the `%s` target may not be installed\n"+
		"  = help: consider downloading the target with `rustup target add %s`", triple, triple)
}
