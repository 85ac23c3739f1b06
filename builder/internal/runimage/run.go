package runimage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	specs "github.com/opencontainers/runtime-spec/specs-go"
)

// Host is the Jetson (or plain machine) a container starts on.
type Host struct {
	// Name labels the host in reports, e.g. "Orin Nano (R36)".
	Name string
	// Root is a folder laid out like the host's / with the files the NVIDIA
	// runtime exposes: etc/nv_tegra_release and sys/ (devices/soc0; the
	// device tree under firmware/ when the host shows it, which Docker masks
	// by default). Empty means a container started without the
	// NVIDIA runtime: the machine's own /sys, no L4T file.
	Root string
	// Env is appended to every container's environment on this host.
	Env []string
	// Libs are the host's driver libraries (libcuda.so.1), as the NVIDIA
	// runtime mounts them and updates the container's ld cache.
	Libs []HostLib
	// Devices are the GPU device nodes the NVIDIA runtime puts in the
	// container (the "dev" lines of the host's CSV files), by their paths
	// there: the runtime writes each into the OCI spec's linux.devices, and
	// runc makes it. Here each is a character device with /dev/null's
	// numbers (1:3), which runc's default device rules allow and a program
	// can open; a Jetson's are its GPU's. Root holds the same nodes at the
	// same paths, made with mknod, for docker run --device.
	Devices []string
	// CPUInfo is a file bound over /proc/cpuinfo, as LXCFS does: the CPU
	// the container reports; "" leaves the machine's.
	CPUInfo string
	// Volumes are folders of this machine bound read-only into the
	// container, as `docker run -v SOURCE:DESTINATION:ro` does: a model's
	// folder for the probe's serving check.
	Volumes []Volume
}

// Volume is a folder of this machine bound read-only into a container.
type Volume struct {
	// Source is the folder on this machine, Destination its path in the
	// container.
	Source, Destination string
}

// Result is what a container printed and how it exited.
type Result struct {
	// Stdout and Stderr are the container's output.
	Stdout, Stderr string
	// ExitCode is the container's exit status.
	ExitCode int
}

// Runner starts containers with runc.
type Runner struct {
	runc    string
	workDir string
	seq     atomic.Int64
}

// NewRunner returns a Runner whose bundles and runc state live under workDir.
func NewRunner(workDir string) (*Runner, error) {
	runc, err := exec.LookPath("runc")
	if err != nil {
		return nil, errors.New("runc is not installed: run 'make deps' (apt-get install runc)")
	}
	return &Runner{runc: runc, workDir: workDir}, nil
}

// Run starts img's entrypoint with args on host, from the unpacked rootfs,
// and waits for it to exit. As with `docker run IMAGE ARGS...`, args replace
// the image's CMD; without args the CMD is the argument list.
func (r *Runner) Run(ctx context.Context, rootfs string, cfg *v1.ConfigFile, host Host, args []string, env ...string) (Result, error) {
	id := "jetbake-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(r.seq.Add(1), 10)
	bundle := filepath.Join(r.workDir, id)
	if err := os.MkdirAll(bundle, 0o755); err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(bundle)
	root, done, err := withDriver(ctx, rootfs, filepath.Join(bundle, "overlay"), host)
	if err != nil {
		return Result{}, err
	}
	defer done()
	spec := runtimeSpec(root, cfg, host, args, env)
	// runc creates missing bind-mount targets inside the root file system;
	// remove them afterwards so that the next container on the same rootfs
	// (a host without the NVIDIA runtime, say) does not see them.
	defer removeCreatedTargets(root, spec.Mounts)()
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return Result{}, err
	}
	if err := os.WriteFile(filepath.Join(bundle, "config.json"), data, 0o644); err != nil {
		return Result{}, err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, r.runc, "--root", filepath.Join(r.workDir, "runc-state"), "run", "--bundle", bundle, id)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	res := Result{Stdout: stdout.String(), Stderr: stderr.String()}
	var exitErr *exec.ExitError
	switch {
	case errors.As(err, &exitErr):
		res.ExitCode = exitErr.ExitCode()
	case err != nil:
		return res, fmt.Errorf("runc run: %w: %s", err, stderr.String())
	}
	return res, nil
}

// runtimeSpec is a minimal OCI runtime config: the image's entrypoint and
// environment, a read-only root, and the host's facts bound in read-only.
func runtimeSpec(rootfs string, cfg *v1.ConfigFile, host Host, args, env []string) *specs.Spec {
	if len(args) == 0 {
		args = cfg.Config.Cmd
	}
	process := &specs.Process{
		Args: append(append([]string{}, cfg.Config.Entrypoint...), args...),
		Env:  append(append(append([]string{}, cfg.Config.Env...), host.Env...), env...),
		Cwd:  "/",
		User: specs.User{UID: 0, GID: 0},
		Capabilities: &specs.LinuxCapabilities{
			Bounding: []string{"CAP_KILL"}, Effective: []string{"CAP_KILL"}, Permitted: []string{"CAP_KILL"},
		},
		NoNewPrivileges: true,
	}
	mounts := []specs.Mount{
		{Destination: "/proc", Type: "proc", Source: "proc"},
		{Destination: "/dev", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "strictatime", "mode=755", "size=65536k"}},
		{Destination: "/tmp", Type: "tmpfs", Source: "tmpfs", Options: []string{"nosuid", "nodev", "size=65536k"}},
	}
	if host.Root == "" {
		mounts = append(mounts, specs.Mount{Destination: "/sys", Type: "sysfs", Source: "sysfs", Options: []string{"nosuid", "noexec", "nodev", "ro"}})
	} else {
		mounts = append(mounts, specs.Mount{Destination: "/sys", Type: "bind", Source: filepath.Join(host.Root, "sys"), Options: []string{"rbind", "ro"}})
		if release := filepath.Join(host.Root, "etc", "nv_tegra_release"); fileExists(release) {
			mounts = append(mounts, specs.Mount{Destination: "/etc/nv_tegra_release", Type: "bind", Source: release, Options: []string{"bind", "ro"}})
		}
	}
	if host.CPUInfo != "" {
		mounts = append(mounts, specs.Mount{Destination: "/proc/cpuinfo", Type: "bind", Source: host.CPUInfo, Options: []string{"bind", "ro"}})
	}
	for _, v := range host.Volumes {
		mounts = append(mounts, specs.Mount{Destination: v.Destination, Type: "bind", Source: v.Source, Options: []string{"rbind", "ro"}})
	}
	return &specs.Spec{
		Version:  specs.Version,
		Root:     &specs.Root{Path: rootfs, Readonly: true},
		Process:  process,
		Hostname: "jetbake-test",
		Mounts:   mounts,
		Linux: &specs.Linux{
			Namespaces: []specs.LinuxNamespace{{Type: specs.PIDNamespace}, {Type: specs.MountNamespace}, {Type: specs.IPCNamespace}, {Type: specs.UTSNamespace}},
			Devices:    gpuDevices(host.Devices),
		},
	}
}

// gpuDevices are the spec's entries of the host's GPU device nodes: 1:3,
// read and write for everyone, as Host.Devices says.
func gpuDevices(paths []string) []specs.LinuxDevice {
	var out []specs.LinuxDevice
	mode := os.FileMode(0o666)
	var uid, gid uint32
	for _, p := range paths {
		out = append(out, specs.LinuxDevice{Path: p, Type: "c", Major: 1, Minor: 3, FileMode: &mode, UID: &uid, GID: &gid})
	}
	return out
}

// removeCreatedTargets notes which bind targets are missing from rootfs and
// returns a function that removes those that exist by then.
func removeCreatedTargets(rootfs string, mounts []specs.Mount) func() {
	var missing []string
	for _, m := range mounts {
		if m.Type != "bind" {
			continue
		}
		target := filepath.Join(rootfs, m.Destination)
		if !fileExists(target) {
			missing = append(missing, target)
		}
	}
	return func() {
		for _, target := range missing {
			_ = os.Remove(target)
		}
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
