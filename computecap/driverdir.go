package computecap

import "slices"

// DriverDir is a folder where the Jetsons of a JetPack release hold the
// host's CUDA driver, libcuda.so.1, and the GPU driver it talks to.
type DriverDir struct {
	// Dir is the folder, such as "/usr/lib/aarch64-linux-gnu/nvidia".
	Dir string `json:"dir"`
	// Family is the Jetson family whose GPU driver the folder holds
	// ("Orin"), when the release keeps one folder per GPU driver; "" when
	// every SoC of the release has its driver there.
	Family string `json:"family,omitempty"`
	// Driver is the kernel's GPU driver of those Jetsons, with the device
	// nodes CUDA reaches the GPU through.
	Driver GPUDriver `json:"driver"`
}

// DriverDirFor returns the folder of the host's CUDA driver on a Jetson of
// the family ("Orin") that runs the release: the family's own folder, else
// the release's folder for every SoC; "" when the table names none.
func (r JetPackRelease) DriverDirFor(family string) string {
	all := ""
	for _, d := range r.DriverDirs {
		switch d.Family {
		case family:
			return d.Dir
		case "":
			all = d.Dir
		}
	}
	return all
}

// DriverDirs returns every folder where a JetPack release of the table
// holds the host's CUDA driver, each once, the newest release's first:
// where a container finds libcuda.so.1 on a Jetson (computecap/host's
// FindLibcuda searches them in this order). Newest first keeps a later
// line's folder ahead of the links an older line left for compatibility,
// such as JetPack 6's .../tegra link to .../nvidia.
func (t *Table) DriverDirs() []string {
	var out []string
	for _, r := range slices.Backward(t.JetPacks) {
		for _, d := range r.DriverDirs {
			if !slices.Contains(out, d.Dir) {
				out = append(out, d.Dir)
			}
		}
	}
	return out
}
