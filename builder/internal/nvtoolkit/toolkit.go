// Package nvtoolkit runs NVIDIA's container toolkit on fake Jetson hosts, for
// the end-to-end tests and `make demo`: the real nvidia-container-runtime,
// nvidia-ctk and nvidia-cdi-hook (built by `make deps` from the module pinned
// in ./toolkit), registered with dockerd as the "nvidia" runtime, read each
// host's CSV files and mount its nv_tegra_release, device nodes and libcuda
// into the container, make the CSV's links and update the container's ld
// cache, as on a Jetson. What is not NVIDIA's code is the host itself (a
// folder laid out like a Jetson's root, see Host), the stand-in libcuda and
// three workarounds for behaviours of the toolkit that only a host folder
// other than / meets (workarounds.go).
package nvtoolkit

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The toolkit's programs, as `make deps` names them in bin/.
const (
	RuntimeName = "nvidia-container-runtime"
	CTKName     = "nvidia-ctk"
	CDIHookName = "nvidia-cdi-hook"
)

// Toolkit is NVIDIA's container toolkit as built by `make deps`.
type Toolkit struct {
	// Runtime is nvidia-container-runtime, the OCI runtime dockerd runs.
	Runtime string
	// CTK is nvidia-ctk (`nvidia-ctk cdi generate`, `nvidia-ctk hook ...`).
	CTK string
	// CDIHook is nvidia-cdi-hook, which runs the hooks the runtime adds.
	CDIHook string
	// Version is what the runtime reports, such as "v1.20.2".
	Version string
}

// Find returns the toolkit built in binDir, or an error that names what is
// missing and the fix: the tests fail on it, they never skip.
func Find(binDir string) (Toolkit, error) {
	t := Toolkit{
		Runtime: filepath.Join(binDir, RuntimeName),
		CTK:     filepath.Join(binDir, CTKName),
		CDIHook: filepath.Join(binDir, CDIHookName),
	}
	var missing []string
	for _, p := range []string{t.Runtime, t.CTK, t.CDIHook} {
		if fi, err := os.Stat(p); err != nil || fi.Mode().Perm()&0o111 == 0 {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return Toolkit{}, fmt.Errorf("NVIDIA's container toolkit is not built (%s missing): run 'make deps', "+
			"which builds it from builder/internal/nvtoolkit/toolkit (cgo: it needs gcc)", strings.Join(missing, ", "))
	}
	out, err := exec.Command(t.Runtime, "--version").CombinedOutput()
	if err != nil {
		return Toolkit{}, fmt.Errorf("%s --version: %w: %s", t.Runtime, err, out)
	}
	first, _, _ := strings.Cut(string(out), "\n")
	v, ok := strings.CutPrefix(strings.TrimSpace(first), "NVIDIA Container Runtime version ")
	if !ok || v == "" {
		return Toolkit{}, errors.New(t.Runtime + " --version printed " + strings.TrimSpace(first) +
			", not NVIDIA's runtime: run 'make deps'")
	}
	t.Version = v
	return t, nil
}
