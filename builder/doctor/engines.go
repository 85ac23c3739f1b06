package doctor

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/jetbake/jetbake/computecap/host"
)

// The rows of NVIDIA's runtime in each container engine's configuration.
const (
	CheckDockerRuntime     = "docker nvidia runtime"
	CheckContainerdRuntime = "containerd nvidia runtime"
	CheckK3sRuntime        = "k3s nvidia runtime"
)

// Files of k3s, relative to the root: the containerd configuration the k3s
// agent writes at each start, and the server's manifest of RuntimeClasses
// (k3s, pkg/agent/templates and manifests/runtimes.yaml: RuntimeClass
// "nvidia", handler "nvidia").
const (
	k3sContainerdConfig = "var/lib/rancher/k3s/agent/etc/containerd/config.toml"
	k3sRuntimeClasses   = "var/lib/rancher/k3s/server/manifests/runtimes.yaml"
	k3sBinary           = "usr/local/bin/k3s"
)

// k3sRuntimeDirs are the only folders k3s looks for nvidia-container-runtime
// in when it writes its containerd configuration, the GPU operator's first
// (k3s, pkg/agent/containerd/runtimes.go, findNvidiaContainerRuntimes).
func k3sRuntimeDirs() []string { return []string{"/usr/local/nvidia/toolkit", "/usr/bin"} }

// Fix commands of the containerd and k3s rows.
const (
	configureContainerdFix = "sudo nvidia-ctk runtime configure --runtime=containerd && sudo systemctl restart containerd"
	restartK3sFix          = "sudo systemctl restart k3s (k3s-agent on an agent node): k3s looks for nvidia-container-runtime when it starts"
)

// engines says which container engines the host has.
type engines struct {
	docker, containerd, k3s bool
}

// findEngines looks for Docker (its daemon.json or dockerd), containerd
// (its config.toml or NVIDIA's drop-in folder) and k3s (its agent's
// containerd configuration or its binary) under root.
func findEngines(root string) engines {
	exists := func(rel string) bool {
		_, err := os.Stat(filepath.Join(root, rel))
		return err == nil
	}
	dockerd, _ := host.Root(root).Find("dockerd", []string{"/usr/bin", "/usr/sbin", "/usr/local/bin"}, host.Executable)
	return engines{
		docker:     exists(daemonJSON) || dockerd != "",
		containerd: exists(containerdConfig) || exists(containerdDropIn),
		k3s:        exists(k3sContainerdConfig) || exists(k3sBinary),
	}
}

// labelRow is the row the nvidia-runtime node label follows: the engine
// Kubernetes runs pods with, k3s's containerd before the system's, and
// Docker's only where neither is there.
func (e engines) labelRow() string {
	switch {
	case e.k3s:
		return CheckK3sRuntime
	case e.containerd:
		return CheckContainerdRuntime
	}
	return CheckDockerRuntime
}

// containerdCheck is the row of containerd's nvidia runtime, in its
// config.toml or a file it imports.
func containerdCheck(root string) Check {
	c := Check{Name: CheckContainerdRuntime, Status: StatusOK}
	rt := readContainerdRuntime(underRoot(root), containerdConfig, containerdDropIn)
	switch {
	case rt.err != nil:
		c.Status, c.Detail, c.Fix = StatusFail, rt.err.Error(), "correct the file, then: "+configureContainerdFix
	case rt.file == "" && len(rt.unimported) > 0:
		c.Status, c.Fix = StatusFail, configureContainerdFix
		c.Detail = strings.Join(rt.unimported, ", ") + " defines runtimes.nvidia, but /" + containerdConfig + " does not import it"
	case rt.file == "":
		c.Status, c.Fix = StatusFail, configureContainerdFix
		c.Detail = "no runtimes.nvidia in /" + containerdConfig + " or the files it imports: runtimeClassName nvidia fails"
		if !rt.found {
			c.Detail = "no /" + containerdConfig + ": runtimeClassName nvidia fails"
		}
	case !binaryInstalled(root, rt.binary):
		c.Status, c.Fix = StatusFail, installToolkitFix+" && "+configureContainerdFix
		c.Detail = "runtimes.nvidia in " + rt.file + " runs " + quoteEmpty(rt.binary) + ", which is not installed"
	default:
		c.Detail = "runtimes.nvidia in " + rt.file + " (" + rt.binary + ")"
		if rt.defaultRuntime == "nvidia" {
			c.Detail += ", the default runtime"
		}
	}
	return c
}

// k3sCheck is the row of k3s's nvidia runtime: k3s writes it into its
// containerd configuration when it finds nvidia-container-runtime in its
// folders at start, and its server ships the RuntimeClass.
func k3sCheck(root string) Check {
	c := Check{Name: CheckK3sRuntime, Status: StatusOK}
	found, looked := host.Root(root).Find("nvidia-container-runtime", k3sRuntimeDirs(), host.Executable)
	rt := readContainerdRuntime(underRoot(root), k3sContainerdConfig, "")
	switch {
	case rt.err != nil:
		c.Status, c.Detail, c.Fix = StatusFail, rt.err.Error(), restartK3sFix+" (it writes the file again)"
	case rt.file != "" && binaryInstalled(root, rt.binary):
		c.Detail = "runtimes.nvidia in " + rt.file + " (" + rt.binary + ")"
		if _, err := os.Stat(filepath.Join(root, k3sRuntimeClasses)); err == nil {
			c.Detail += "; RuntimeClass nvidia in /" + k3sRuntimeClasses
		}
	case found == "":
		c.Status, c.Fix = StatusFail, installToolkitFix+" && "+restartK3sFix
		c.Detail = "no nvidia-container-runtime in " + strings.Join(looked, " or ") + ", the only folders k3s looks in: runtimeClassName nvidia fails"
	case !rt.found:
		c.Status, c.Fix = StatusFail, restartK3sFix
		c.Detail = "no /" + k3sContainerdConfig + ": k3s has not started on this host"
	default:
		c.Status, c.Fix = StatusFail, restartK3sFix
		c.Detail = "no runtimes.nvidia in /" + k3sContainerdConfig + " though " + found + " is installed: k3s started before the toolkit was installed"
	}
	return c
}

// quoteEmpty is s, or "nothing" when it is empty.
func quoteEmpty(s string) string {
	if s == "" {
		return "nothing (no options.BinaryName)"
	}
	return s
}
