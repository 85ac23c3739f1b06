package nvtoolkit

import (
	"fmt"
	"strings"
)

// Row is one line of a CSV file of the NVIDIA runtime's Tegra csv mode,
// "KIND, PATH", and what the fake host has at PATH.
type Row struct {
	// Kind is "lib" (a file), "sym" (a link), "dev" (a character device)
	// or "dir" (a folder).
	Kind string
	// Path is absolute, on the host and in the container.
	Path string
	// Target is the link text of a sym row on the host.
	Target string
	// Driver marks the lib row of libcuda.so.1.1: the host holds the
	// stand-in driver there.
	Driver bool
	// Only is the GPU family ("Orin", "Thor", "Xavier") whose hosts have
	// the path; "" for every host of the line. A JetPack line's CSV files are
	// the same on every module: a path a host lacks only gets a warning from
	// the runtime.
	Only string
	// Nowhere marks a row that no fake host has (the runtime warns).
	Nowhere bool
}

// present reports whether a host of the GPU family has the row's path.
func (r Row) present(family string) bool {
	return !r.Nowhere && (r.Only == "" || r.Only == family)
}

// File is one CSV file of a JetPack line.
type File struct {
	// Name is the file name in the CSV folder, such as "drivers.csv".
	Name string
	// Rows are its lines, in order.
	Rows []Row
}

// Text is the file's content, one "KIND, PATH" line per row.
func (f File) Text() string {
	var b strings.Builder
	for _, r := range f.Rows {
		fmt.Fprintf(&b, "%s, %s\n", r.Kind, r.Path)
	}
	return b.String()
}

// Line is what NVIDIA's runtime reads on the hosts of one JetPack line (one
// L4T major): the CSV files in /etc/nvidia-container-runtime/host-files-for-container.d,
// which name the driver library, its links and the GPU's device nodes.
type Line struct {
	// Name is the line as people say it: "JetPack 6 (L4T R36)".
	Name string
	// L4TMajor is the L4T major release of the line.
	L4TMajor int
	// Files are the CSV files the line ships.
	Files []File
}

// Libcuda returns where libcuda.so.1 is (the sym row next to the driver's
// lib row) on a host of the GPU family, or "".
func (l Line) Libcuda(family string) string {
	for _, f := range l.Files {
		for _, r := range f.Rows {
			if r.Kind == "sym" && strings.HasSuffix(r.Path, "/libcuda.so.1") && r.present(family) {
				return r.Path
			}
		}
	}
	return ""
}

// Devices returns the device nodes a host of the GPU family has.
func (l Line) Devices(family string) []string {
	var out []string
	for _, f := range l.Files {
		for _, r := range f.Rows {
			if r.Kind == "dev" && r.present(family) {
				out = append(out, r.Path)
			}
		}
	}
	return out
}

// LineOf returns the JetPack line of an L4T major release.
func LineOf(l4tMajor int) (Line, bool) {
	for _, l := range Lines() {
		if l.L4TMajor == l4tMajor {
			return l, true
		}
	}
	return Line{}, false
}

// Lines are the JetPack lines, one table each, each row from a public copy
// of that line's CSV files. They keep the rows that matter to a CUDA program
// (the driver library and its links, the GPU's device nodes) and one or two
// that the fake hosts lack, as every real module lacks some; the real files
// list a few hundred rows more (multimedia, camera, graphics).
//
// Which files a line ships: jetpack-nixos pkgs/containers/l4t-csv.nix, which
// unpacks them from each L4T's nvidia-l4t-init package (R35: l4t.csv; R36 and
// R39: devices.csv and drivers.csv).
// https://github.com/anduril/jetpack-nixos/blob/master/pkgs/containers/l4t-csv.nix
func Lines() []Line {
	return []Line{r35(), r36(), r38(), r39()}
}

// r35 is JetPack 5 (L4T R35): one l4t.csv, the driver in .../tegra.
func r35() Line {
	return Line{Name: "JetPack 5 (L4T R35)", L4TMajor: 35, Files: []File{{Name: "l4t.csv", Rows: []Row{
		// Device nodes: OE4T/meta-tegra recipes-bsp/tegra-binaries/tegra-configs/l4t.csv (R35).
		{Kind: "dev", Path: "/dev/nvhost-ctrl-gpu"},
		{Kind: "dev", Path: "/dev/nvhost-gpu"},
		{Kind: "dev", Path: "/dev/nvhost-as-gpu"},
		{Kind: "dev", Path: "/dev/nvhost-prof-gpu"},
		{Kind: "dev", Path: "/dev/nvmap"},
		{Kind: "dev", Path: "/dev/nvhost-ctrl-nvdla1", Nowhere: true},
		// The driver: the nvidia-l4t-cuda files of jetpack-nixos
		// pkgs/containers/r35-l4t.json (what R35's l4t.csv lists of them).
		{Kind: "lib", Path: "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1.1", Driver: true},
		{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so.1", Target: "libcuda.so.1.1"},
		{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/tegra/libcuda.so", Target: "libcuda.so.1.1"},
		{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/libcuda.so", Target: "tegra/libcuda.so"},
	}}}}
}

// r36 is JetPack 6 (L4T R36): devices.csv and drivers.csv, the driver in
// .../nvidia. Rows: NVIDIA/nvidia-container-toolkit testdata/lookup/rootfs-orin
// (an Orin's files, driver 540.3.0 of R36).
// https://github.com/NVIDIA/nvidia-container-toolkit/tree/main/testdata/lookup/rootfs-orin/etc/nvidia-container-runtime/host-files-for-container.d
func r36() Line {
	return Line{Name: "JetPack 6 (L4T R36)", L4TMajor: 36, Files: []File{
		{Name: "devices.csv", Rows: []Row{
			{Kind: "dev", Path: "/dev/nvhost-ctrl-gpu"},
			{Kind: "dev", Path: "/dev/nvhost-gpu"},
			{Kind: "dev", Path: "/dev/nvhost-as-gpu"},
			{Kind: "dev", Path: "/dev/nvgpu/igpu0/ctrl"},
			{Kind: "dev", Path: "/dev/nvgpu/igpu0/channel"},
			{Kind: "dev", Path: "/dev/nvmap"},
			{Kind: "dev", Path: "/dev/v4l2-nvenc", Nowhere: true}, // Orin Nano has no NVENC
		}},
		{Name: "drivers.csv", Rows: []Row{
			{Kind: "lib", Path: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1", Driver: true},
			{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1", Target: "libcuda.so.1.1"},
			{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so", Target: "libcuda.so.1.1"},
			{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/libcuda.so", Target: "nvidia/libcuda.so"},
			{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/tegra", Target: "nvidia"},
		}},
	}}
}

// r38 is JetPack 7.0 and 7.1 (L4T R38, Thor only): the driver in
// .../nvidia; OpenRM's device nodes. Driver rows: the nvidia-l4t-cuda and
// libnvidia-compute-580 files of jetpack-nixos pkgs/containers/r38-l4t.json.
// Device rows: OE4T/meta-tegra recipes-bsp/tegra-binaries/tegra-configs/devices.csv,
// which lists OpenRM's nodes (nvidia0, nvidiactl, nvidia-uvm) beside nvgpu's.
func r38() Line {
	return Line{Name: "JetPack 7.0/7.1 (L4T R38)", L4TMajor: 38, Files: []File{
		{Name: "devices.csv", Rows: []Row{
			{Kind: "dev", Path: "/dev/nvidiactl"},
			{Kind: "dev", Path: "/dev/nvidia0"},
			{Kind: "dev", Path: "/dev/nvidia-uvm"},
			{Kind: "dev", Path: "/dev/nvmap"},
			{Kind: "dev", Path: "/dev/host1x-fence"},
			{Kind: "dev", Path: "/dev/nvhost-ctrl-gpu", Nowhere: true}, // nvgpu's, not on a Thor
		}},
		{Name: "drivers.csv", Rows: []Row{
			{Kind: "lib", Path: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1", Driver: true},
			{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1", Target: "libcuda.so.1.1"},
			{Kind: "sym", Path: "/usr/lib/aarch64-linux-gnu/nvidia/libcuda.so", Target: "libcuda.so.1.1"},
			// libnvidia-compute-580's copy; the fake hosts leave it out.
			{Kind: "lib", Path: "/usr/lib/aarch64-linux-gnu/libcuda.so.580.65.06", Nowhere: true},
		}},
	}}
}

// r39 is JetPack 7.2 (L4T R39, Orin and Thor): one set of CSV files for
// both, each GPU's driver in its own folder, /opt/nvidia/l4t-gpu-libs/nvgpu
// (Orin) or /openrm (Thor): the nvidia-l4t-cuda-nvgpu and -openrm files of
// jetpack-nixos pkgs/containers/r39-l4t.json. Device rows as R36 (nvgpu,
// Orin) and R38 (OpenRM, Thor). A line's CSV files come with its L4T
// major, so the hosts of a later R39 release (the test bed's declared
// JetPack 7.3, R39.3) get these same files, as the declared row's
// driver_dirs say.
func r39() Line {
	return Line{Name: "JetPack 7.2 and later R39 releases (L4T R39)", L4TMajor: 39, Files: []File{
		{Name: "devices.csv", Rows: []Row{
			{Kind: "dev", Path: "/dev/nvhost-ctrl-gpu", Only: "Orin"},
			{Kind: "dev", Path: "/dev/nvhost-gpu", Only: "Orin"},
			{Kind: "dev", Path: "/dev/nvgpu/igpu0/ctrl", Only: "Orin"},
			{Kind: "dev", Path: "/dev/nvidiactl", Only: "Thor"},
			{Kind: "dev", Path: "/dev/nvidia0", Only: "Thor"},
			{Kind: "dev", Path: "/dev/nvidia-uvm", Only: "Thor"},
			{Kind: "dev", Path: "/dev/nvmap"},
		}},
		{Name: "drivers.csv", Rows: []Row{
			{Kind: "lib", Path: "/opt/nvidia/l4t-gpu-libs/nvgpu/libcuda.so.1.1", Driver: true, Only: "Orin"},
			{Kind: "sym", Path: "/opt/nvidia/l4t-gpu-libs/nvgpu/libcuda.so.1", Target: "libcuda.so.1.1", Only: "Orin"},
			{Kind: "sym", Path: "/opt/nvidia/l4t-gpu-libs/nvgpu/libcuda.so", Target: "libcuda.so.1", Only: "Orin"},
			{Kind: "lib", Path: "/opt/nvidia/l4t-gpu-libs/openrm/libcuda.so.1.1", Driver: true, Only: "Thor"},
			{Kind: "sym", Path: "/opt/nvidia/l4t-gpu-libs/openrm/libcuda.so.1", Target: "libcuda.so.1.1", Only: "Thor"},
			{Kind: "sym", Path: "/opt/nvidia/l4t-gpu-libs/openrm/libcuda.so", Target: "libcuda.so.1", Only: "Thor"},
		}},
	}}
}
