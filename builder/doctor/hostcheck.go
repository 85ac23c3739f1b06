package doctor

import (
	"fmt"

	"github.com/jetbake/jetbake/builder/hostfit"
	"github.com/jetbake/jetbake/computecap"
)

// notJetsonFix is the step for a machine that is not a Jetson, unless
// WithNotJetsonFix words it for a command.
const notJetsonFix = "run the checks on the Jetson itself, or give WithSysroot the board's root file system"

// hostChecks are the rows of the host: the board and GPU, L4T and JetPack,
// and the driver's CUDA version. notJetson is the fix of a host that is
// not a Jetson.
func hostChecks(f hostfit.Host, notJetson string) []Check {
	board := Check{Name: "jetson", Status: StatusOK}
	switch {
	case f.SoC == "":
		board.Status, board.Detail, board.Fix = StatusFail, "no Jetson SoC found (device tree, /sys/devices/soc0)", notJetson
	default:
		board.Detail = computecap.Describe(f.GPU) + " (" + f.SoC + ")"
		if f.Model != "" {
			board.Detail = f.Model + ", " + board.Detail
		}
	}
	l4t := Check{Name: "l4t / jetpack", Status: StatusOK}
	switch {
	case f.L4T.Major == 0:
		l4t.Status, l4t.Detail, l4t.Fix = StatusFail, "no /etc/nv_tegra_release", notJetson+" (JetPack installs /etc/nv_tegra_release)"
	case f.JetPack == "":
		l4t.Status, l4t.Detail = StatusWarn, fmt.Sprintf("R%s, a release jetbake does not know", f.L4T)
		l4t.Fix = "flash a JetPack release jetbake builds for (5.1, 6.x, 7.x) with NVIDIA SDK Manager"
	default:
		l4t.Detail = fmt.Sprintf("R%s (JetPack %s)", f.L4T, f.JetPack)
	}
	cuda := Check{Name: "driver cuda", Status: StatusOK}
	switch {
	case f.DriverCUDA.IsZero():
		cuda.Status, cuda.Detail = StatusWarn, "unknown"
		cuda.Fix = "install JetPack's NVIDIA driver (apt-get install nvidia-l4t-core on JetPack 5/6)"
	default:
		cuda.Detail = f.DriverCUDA.String()
		if f.DriverCUDAFrom != "" {
			cuda.Detail += " (from " + f.DriverCUDAFrom + ")"
		}
	}
	return []Check{board, l4t, cuda}
}
