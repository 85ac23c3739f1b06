package doctor

import (
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jetbake/jetbake/builder/matrix"
	"github.com/jetbake/jetbake/computecap/host"
)

// Files and folders Docker and CDI read, relative to the root.
const daemonJSON = "etc/docker/daemon.json"

// cdiDirs are where CDI specs live: static ones, then generated ones.
func cdiDirs() [2]string { return [2]string{"etc/cdi", "var/run/cdi"} }

// Fix commands of the Docker and CDI checks.
const (
	configureRuntimeFix = "sudo nvidia-ctk runtime configure --runtime=docker && sudo systemctl restart docker"
	defaultRuntimeFix   = "sudo nvidia-ctk runtime configure --runtime=docker --set-as-default && sudo systemctl restart docker"
	generateCDIFix      = "sudo nvidia-ctk cdi generate --mode=csv --output=/etc/cdi/nvidia.yaml"
)

// maxConfig bounds daemon.json; Docker's are a few hundred bytes.
const maxConfig = 1 << 20

// dockerConfig is what /etc/docker/daemon.json says about runtimes.
type dockerConfig struct {
	found          bool
	err            error
	nvidiaRuntime  string // the nvidia runtime's path; "" when not configured
	defaultRuntime string
}

// readDockerConfig reads daemon.json under root.
func readDockerConfig(root string) dockerConfig {
	data, err := host.ReadRegular(filepath.Join(root, daemonJSON), maxConfig)
	if os.IsNotExist(err) {
		return dockerConfig{}
	}
	if err != nil {
		return dockerConfig{found: true, err: err}
	}
	var doc struct {
		DefaultRuntime string `json:"default-runtime"`
		Runtimes       map[string]struct {
			Path string `json:"path"`
		} `json:"runtimes"`
	}
	// The matrix's reader, for its line, column and field; Docker's other
	// keys are not doctor's business.
	if _, err := matrix.DecodeFile("/"+daemonJSON, data, &doc, "correct the file, then restart Docker", matrix.IgnoreUnknownFields()); err != nil {
		return dockerConfig{found: true, err: err}
	}
	out := dockerConfig{found: true, defaultRuntime: doc.DefaultRuntime}
	if rt, ok := doc.Runtimes["nvidia"]; ok {
		out.nvidiaRuntime = rt.Path
		if out.nvidiaRuntime == "" {
			out.nvidiaRuntime = "(no path)"
		}
	}
	return out
}

// readCDI lists the CDI spec files under root.
func readCDI(root string) []string {
	var specs []string
	for _, dir := range cdiDirs() {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		if err != nil {
			continue
		}
		for _, e := range entries {
			if ext := filepath.Ext(e.Name()); !e.IsDir() && (ext == ".yaml" || ext == ".yml" || ext == ".json") {
				specs = append(specs, "/"+dir+"/"+e.Name())
			}
		}
	}
	sort.Strings(specs)
	return specs
}

// runtimeCheck is the row of `--runtime nvidia`: the nvidia runtime in
// daemon.json, installed under root. A CDI spec alone is enough for
// `--device nvidia.com/gpu=all`, so then the row only warns.
func runtimeCheck(root string, rt dockerConfig, cdi []string) Check {
	c := Check{Name: CheckDockerRuntime, Status: StatusOK}
	switch {
	case rt.err != nil:
		c.Status, c.Detail = StatusFail, rt.err.Error()
		c.Fix = "correct /" + daemonJSON + ", then: " + configureRuntimeFix
	case rt.nvidiaRuntime != "" && !binaryInstalled(root, rt.nvidiaRuntime):
		c.Status, c.Fix = StatusFail, installToolkitFix+" && "+configureRuntimeFix
		c.Detail = "runtimes.nvidia in /" + daemonJSON + " runs " + rt.nvidiaRuntime + ", which is not installed"
	case rt.nvidiaRuntime != "":
		c.Detail = "runtimes.nvidia in /" + daemonJSON + " (" + rt.nvidiaRuntime + ")"
	default:
		c.Status, c.Fix = StatusFail, configureRuntimeFix
		c.Detail = "no runtimes.nvidia in /" + daemonJSON + ": `docker run --runtime nvidia` fails"
		if !rt.found {
			c.Detail = "no /" + daemonJSON + ": `docker run --runtime nvidia` fails"
		}
		if len(cdi) > 0 {
			c.Status = StatusWarn
			c.Detail += " (CDI works: --device nvidia.com/gpu=all)"
		}
	}
	return c
}

// defaultRuntimeCheck is the row of Docker's default runtime: without
// "default-runtime": "nvidia" every `docker run` needs --runtime nvidia.
func defaultRuntimeCheck(rt dockerConfig) Check {
	c := Check{Name: "docker default runtime", Status: StatusOK}
	def := rt.defaultRuntime
	if def == "" {
		def = "runc"
	}
	c.Detail = def
	if def != "nvidia" {
		c.Status = StatusWarn
		c.Detail += ": pass --runtime nvidia to every docker run"
		c.Fix = defaultRuntimeFix
	}
	return c
}

// cdiCheck is the row of the CDI spec that `--device nvidia.com/gpu=all`
// and toolkit 1.18+ in CDI mode need.
func cdiCheck(cdi []string, tk toolkit) Check {
	c := Check{Name: "cdi spec", Status: StatusOK}
	if len(cdi) > 0 {
		c.Detail = strings.Join(cdi, ", ")
		return c
	}
	c.Status, c.Fix = StatusWarn, generateCDIFix
	c.Detail = "none in /etc/cdi or /var/run/cdi: --device nvidia.com/gpu=all fails"
	if tk.version == "" {
		c.Fix = installToolkitFix + " && " + generateCDIFix
	}
	return c
}
