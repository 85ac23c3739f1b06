// Package host is a Jetson host as jetbake's operator commands (doctor and
// pick) see it: the facts read from its files, and the rule that says whether
// an image runs on it.
//
// SysrootReader and Compatible are thin calls into computecap/host and
// computecap's table: the detection and host rule the entrypoint applies,
// so that pick never offers an image the entrypoint would refuse.
package host

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/computecap"
	chost "github.com/jetbake/jetbake/computecap/host"
)

// L4T is a Jetson Linux release such as 36.4.3.
type L4T struct {
	// Major, Minor and Patch are its numbers; Major 0 means none.
	Major, Minor, Patch int
}

// String writes v as "36.4.3", or "" for none.
func (v L4T) String() string {
	if v.Major == 0 {
		return ""
	}
	return strconv.Itoa(v.Major) + "." + strconv.Itoa(v.Minor) + "." + strconv.Itoa(v.Patch)
}

// ParseL4T reads "36", "36.4" or "36.4.3"; ok is false for anything else.
func ParseL4T(s string) (L4T, bool) {
	parts := strings.Split(strings.TrimSpace(s), ".")
	if len(parts) > 3 {
		return L4T{}, false
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || len(p) > 4 {
			return L4T{}, false
		}
		n[i] = v
	}
	if n[0] == 0 {
		return L4T{}, false
	}
	return L4T{Major: n[0], Minor: n[1], Patch: n[2]}, true
}

// Facts is what jetbake knows of a host.
type Facts struct {
	// Model is the board's device-tree model, such as
	// "NVIDIA Jetson AGX Orin Developer Kit"; "" when unknown.
	Model string `json:"model,omitempty"`
	// SoC is the Tegra SoC ("tegra234"); "" when none was found.
	SoC string `json:"soc,omitempty"`
	// Family is the Jetson family of the SoC ("Orin").
	Family string `json:"family,omitempty"`
	// GPU is the GPU's compute capability; zero when no GPU was found.
	GPU computecap.Capability `json:"gpu"`
	// L4T is the release in /etc/nv_tegra_release; zero when absent.
	L4T L4T `json:"-"`
	// L4TVersion is L4T as text, for JSON.
	L4TVersion string `json:"l4t,omitempty"`
	// JetPack is the JetPack release of L4T ("6.2"), or its series ("6").
	JetPack string `json:"jetpack,omitempty"`
	// DriverCUDA is the CUDA version the driver supports; zero when unknown.
	DriverCUDA computecap.CUDAVersion `json:"driver_cuda"`
	// DriverCUDAFrom says where DriverCUDA comes from.
	DriverCUDAFrom string `json:"driver_cuda_from,omitempty"`
	// Libcuda is the path of libcuda.so.1 in the host's root; "" when none.
	Libcuda string `json:"libcuda,omitempty"`
}

// Jetson reports whether the facts name a Jetson: a Tegra SoC and an L4T release.
func (f Facts) Jetson() bool { return f.SoC != "" && f.L4T.Major != 0 }

// Reader reads a host's facts from the root of its file system ("/" for
// this machine, or a board's root mounted elsewhere).
type Reader interface {
	// Read returns the facts of the host whose root is sysroot.
	Read(ctx context.Context, sysroot string) (Facts, error)
}

// SysrootReader reads the files the NVIDIA runtime shows a Jetson's
// containers under a root folder, with computecap/host: the same code and
// table the entrypoint uses. It asks no driver; the driver's CUDA version
// comes from the table by the host's L4T release.
type SysrootReader struct{}

// SysrootError is a --sysroot that is not a folder: input the command
// cannot use (the CLI exits 2), not a host without a GPU.
type SysrootError struct {
	// Path is the sysroot as given.
	Path string
	// Problem says what it is instead.
	Problem string
}

// Error names the folder and the fix.
func (e *SysrootError) Error() string {
	return "--sysroot " + e.Path + " " + e.Problem + ": name the folder where the host's root file system is, or leave it at /"
}

// BadInput marks the error as input the command cannot use.
func (e *SysrootError) BadInput() bool { return true }

// CheckSysroot returns a *SysrootError when sysroot is not a folder.
func CheckSysroot(sysroot string) error {
	st, err := os.Stat(sysroot)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &SysrootError{Path: sysroot, Problem: "does not exist"}
	case err != nil:
		return &SysrootError{Path: sysroot, Problem: "cannot be read (" + errors.Unwrap(err).Error() + ")"}
	case !st.IsDir():
		return &SysrootError{Path: sysroot, Problem: "is not a folder"}
	}
	return nil
}

// Read implements Reader. A sysroot that is not a folder is a
// *SysrootError.
func (SysrootReader) Read(_ context.Context, sysroot string) (Facts, error) {
	if err := CheckSysroot(sysroot); err != nil {
		return Facts{}, err
	}
	t := computecap.DefaultTable()
	hf := chost.Read(chost.Root(sysroot), t, chost.Options{})
	f := Facts{Model: hf.BoardName()}
	if hf.HasSoC {
		f.SoC, f.Family, f.GPU = hf.SoC.Name, hf.SoC.Family, hf.SoC.Capability
	}
	if hf.Libcuda != "" {
		f.Libcuda = hf.Libcuda
	}
	if !hf.HasL4T {
		return f, nil
	}
	f.L4T = L4T{Major: hf.L4T.Major, Minor: hf.L4T.Minor, Patch: hf.L4T.Patch}
	f.L4TVersion = f.L4T.String()
	f.JetPack = t.JetPackName(hf.L4T)
	if cuda, ok := t.DriverCUDAForL4T(hf.L4T); ok {
		f.DriverCUDA, f.DriverCUDAFrom = cuda, "L4T "+hf.L4T.String()+" in the table of Jetson facts"
	}
	return f, nil
}

// version converts v to computecap's type.
func (v L4T) version() computecap.L4TVersion {
	return computecap.L4TVersion{Major: v.Major, Minor: v.Minor, Patch: v.Patch}
}
