package nvtoolkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Mode is how the runtime finds what to give a container: "csv", the Tegra
// mode that `mode = "auto"` picks on every Jetson, or "cdi", from a spec that
// `nvidia-ctk cdi generate --mode csv` wrote.
type Mode string

// The runtime's modes the fake hosts use.
const (
	ModeCSV Mode = "csv"
	ModeCDI Mode = "cdi"
)

// Bed is NVIDIA's runtime on a set of fake hosts, as one machine whose host
// can be switched: dockerd registers RuntimePath as its "nvidia" runtime,
// and each container it creates goes through nvidia-container-runtime with
// the configuration of the host and mode that Use chose last. Runs on
// different hosts must not overlap.
type Bed struct {
	tk         Toolkit
	dir, cache string
	trampoline string

	mu    sync.Mutex
	hosts map[string]*Host
}

// NewBed prepares a bed under dir: the toolkit from binDir, the ELF
// stand-ins cached in cache, and the ldconfig trampoline built from the
// checkout at repoRoot.
func NewBed(ctx context.Context, dir, binDir, cache, repoRoot string) (*Bed, error) {
	tk, err := Find(binDir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	trampoline, err := BuildTrampoline(ctx, repoRoot, dir)
	if err != nil {
		return nil, err
	}
	b := &Bed{tk: tk, dir: dir, cache: cache, trampoline: trampoline, hosts: map[string]*Host{}}
	script := "#!/bin/sh\n# The \"nvidia\" runtime of jetbake's test bed (builder/internal/nvtoolkit): NVIDIA's\n" +
		"# runtime with the fake host's configuration and the host's driver for its own\n" +
		"# process, both named in current.env, which Bed.Use writes.\n" +
		"set -a\n. " + shQuote(b.currentEnv()) + " || exit 1\nset +a\nexec " + shQuote(tk.Runtime) + " \"$@\"\n"
	if err := os.WriteFile(b.RuntimePath(), []byte(script), 0o755); err != nil {
		return nil, err
	}
	return b, nil
}

// Toolkit is the toolkit the bed runs.
func (b *Bed) Toolkit() Toolkit { return b.tk }

// RuntimePath is the program to register with dockerd as the "nvidia"
// runtime (--add-runtime nvidia=PATH).
func (b *Bed) RuntimePath() string { return filepath.Join(b.dir, RuntimeName) }

// currentEnv is the file that names the current host's configuration.
func (b *Bed) currentEnv() string { return filepath.Join(b.dir, "current.env") }

// AddHost lays out a fake host with its runtime configurations.
func (b *Bed) AddHost(ctx context.Context, spec HostSpec) (*Host, error) {
	h, err := writeHost(ctx, filepath.Join(b.dir, "hosts", spec.Name), b.cache, spec)
	if err != nil {
		return nil, err
	}
	wrapper := filepath.Join(h.Dir, "bin", CTKName)
	if err := writeFile(wrapper, h.ctkWrapper(b.tk, b.trampoline), 0o755); err != nil {
		return nil, err
	}
	for _, m := range []Mode{ModeCSV, ModeCDI} {
		if err := writeFile(h.configPath(m), runtimeConfig(h, m, wrapper), 0o644); err != nil {
			return nil, err
		}
	}
	b.mu.Lock()
	b.hosts[spec.Name] = h
	b.mu.Unlock()
	return h, nil
}

// configPath is the host's config.toml for mode m.
func (h *Host) configPath(m Mode) string {
	return filepath.Join(h.Dir, "etc", "nvidia-container-runtime", "config-"+string(m)+".toml")
}

// RuntimeLog is the runtime's debug log on the host.
func (h *Host) RuntimeLog() string { return filepath.Join(h.Dir, "nvidia-container-runtime.log") }

// CDISpec is where GenerateCDI writes the host's CDI spec.
func (h *Host) CDISpec() string { return filepath.Join(h.Dir, "cdi", "nvidia.yaml") }

// runtimeConfig is the host's config.toml: the toolkit's defaults but for
// the host root, the hook program (the wrapper of workarounds.go), the mode
// and where its CSV files and CDI spec are, with debug logging. TOML basic
// strings take Go's quoting for these paths.
func runtimeConfig(h *Host, m Mode, wrapper string) []byte {
	q := strconv.Quote
	return []byte(strings.Join([]string{
		"# NVIDIA runtime configuration of the fake host " + h.Name + " (builder/internal/nvtoolkit)",
		"[nvidia-container-cli]",
		"root = " + q(h.Root),
		"[nvidia-ctk]",
		"path = " + q(wrapper),
		"[nvidia-container-runtime]",
		"debug = " + q(h.RuntimeLog()),
		`log-level = "debug"`,
		"mode = " + q(string(m)),
		"[nvidia-container-runtime.modes.csv]",
		"mount-spec-path = " + q(filepath.Join(h.Root, CSVFolder)),
		"[nvidia-container-runtime.modes.cdi]",
		"spec-dirs = [" + q(filepath.Dir(h.CDISpec())) + "]",
		`default-kind = "nvidia.com/gpu"`,
		"",
	}, "\n"))
}

// Use makes the bed's runtime the host's, in mode m, for the containers
// created from now on.
func (b *Bed) Use(h *Host, m Mode) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.hosts[h.Name] != h {
		return fmt.Errorf("host %s is not on this bed", h.Name)
	}
	env := "NVIDIA_CTK_CONFIG_FILE_PATH=" + shQuote(h.configPath(m)) + "\nLD_LIBRARY_PATH=" + shQuote(h.X86Driver) + "\n"
	tmp := b.currentEnv() + ".tmp"
	if err := os.WriteFile(tmp, []byte(env), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, b.currentEnv())
}

// GenerateCDI writes the host's CDI spec as `nvidia-ctk cdi generate --mode
// csv` does on a Jetson, from the host's root and CSV files, with the hook
// program and ldconfig of workarounds.go.
func (b *Bed) GenerateCDI(ctx context.Context, h *Host) error {
	args := []string{"cdi", "generate", "--mode", "csv", "--driver-root", h.Root, "--dev-root", h.Root,
		"--nvidia-cdi-hook-path", filepath.Join(h.Dir, "bin", CTKName), "--ldconfig-path", b.trampoline,
		"--output", h.CDISpec()}
	for _, f := range h.csvFiles() {
		args = append(args, "--csv.file", filepath.Join(h.Root, CSVFolder, f.Name))
	}
	cmd := exec.CommandContext(ctx, b.tk.CTK, args...)
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+h.X86Driver)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("nvidia-ctk cdi generate for %s: %w: %s", h.Name, err, out)
	}
	return nil
}
