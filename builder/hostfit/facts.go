// Package hostfit is a Jetson host as jetbake's operator commands (doctor
// and pick) see it, and whether an image fits it: the facts read from the
// host's files, summed up for people and JSON, and the rule that says
// whether an image runs there.
//
// SysrootReader and Compatible are thin calls into computecap/host and
// computecap's table: the detection and host rule the entrypoint applies,
// so that pick never offers an image the entrypoint would refuse.
package hostfit

import (
	"context"
	"errors"
	"io/fs"
	"os"

	"github.com/jetbake/jetbake/computecap"
	"github.com/jetbake/jetbake/computecap/host"
)

// Host is what jetbake knows of a host.
type Host struct {
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
	L4T computecap.L4TVersion `json:"-"`
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
func (f Host) Jetson() bool { return f.SoC != "" && f.L4T.Major != 0 }

// Reader reads a host's facts from the root of its file system ("/" for
// this machine, or a board's root mounted elsewhere).
type Reader interface {
	// Read returns the facts of the host whose root is sysroot.
	Read(ctx context.Context, sysroot string) (Host, error)
}

// SysrootReader reads the files the NVIDIA runtime shows a Jetson's
// containers under a root folder, with computecap/host: the same code and
// table the entrypoint uses. It asks no driver; the driver's CUDA version
// comes from the table by the host's L4T release: Table, jetbake's own
// when nil, or one with the rows a matrix's facts file declares
// (matrix.LoadFacts), so that a host on a JetPack newer than this jetbake
// gets its JetPack and driver CUDA from the declared row.
type SysrootReader struct {
	// Table is the table of Jetson facts; nil for computecap.DefaultTable.
	Table *computecap.Table
}

// SysrootError is a sysroot that is not a folder: input the command
// cannot use (the CLI exits 2), not a host without a GPU.
type SysrootError struct {
	// Path is the sysroot as given.
	Path string
	// Problem says what it is instead.
	Problem string
}

// Error names the folder and the fix.
func (e *SysrootError) Error() string {
	return "sysroot " + e.Path + " " + e.Problem + ": " + SysrootFix
}

// SysrootFix is the fix of a *SysrootError.
const SysrootFix = "name the folder where the host's root file system is, or leave it at /"

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
func (r SysrootReader) Read(_ context.Context, sysroot string) (Host, error) {
	if err := CheckSysroot(sysroot); err != nil {
		return Host{}, err
	}
	t := r.Table
	if t == nil {
		t = computecap.DefaultTable()
	}
	hf := host.Read(host.Root(sysroot), t, host.Options{})
	f := Host{Model: hf.BoardName()}
	if hf.HasSoC {
		f.SoC, f.Family, f.GPU = hf.SoC.Name, hf.SoC.Family, hf.SoC.Capability
	}
	if hf.Libcuda != "" {
		f.Libcuda = hf.Libcuda
	}
	if !hf.HasL4T {
		return f, nil
	}
	f.L4T, f.L4TVersion = hf.L4T, hf.L4T.String()
	f.JetPack = t.JetPackName(hf.L4T)
	if cuda, ok := t.DriverCUDAForL4T(hf.L4T); ok {
		f.DriverCUDA, f.DriverCUDAFrom = cuda, tableSource(hf.L4T)
		if t.DeclaredJetPack(f.JetPack) {
			f.DriverCUDAFrom = "L4T " + hf.L4T.String() + " in the declared facts (JetPack " + f.JetPack + ")"
		}
	}
	return f, nil
}

// tableSource is DriverCUDAFrom for a driver CUDA read from the table by
// the host's L4T release.
func tableSource(l4t computecap.L4TVersion) string {
	return "L4T " + l4t.String() + " in the table of Jetson facts"
}
