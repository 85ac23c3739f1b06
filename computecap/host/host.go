// Package host reads the facts of a Jetson host as a container sees it,
// and applies the host rule of package computecap to them. The entrypoint
// (at start-up) and the builder (jetbake pick --sysroot, jetbake doctor) use
// it, so that both detect a host the same way: the entrypoint reads every
// host and image path through Root, finds libcuda and nvidia-smi with
// Root.Find and keeps the Facts that Read returns.
//
// Inside a container the device tree is usually masked: Docker masks
// /sys/firmware, and /proc/device-tree points there. What stays visible is
// the kernel's soc bus, /sys/devices/soc0: family ("Tegra"), soc_id (the
// Tegra chip id, 35 for T234 Orin) and machine, which the soc bus fills
// from the device tree's root "model" property when the SoC driver leaves
// it empty, as Tegra's does (Linux drivers/base/soc.c, soc_device_register
// and soc_device_get_machine, renamed soc_attr_read_machine in 2026;
// drivers/soc/tegra/fuse/fuse-tegra.c, tegra_soc_device_register, sets only
// family, revision and soc_id:
// https://git.kernel.org/pub/scm/linux/kernel/git/torvalds/linux.git/tree/drivers/base/soc.c).
// The NVIDIA runtime adds /etc/nv_tegra_release and the host's libcuda.so.1.
//
// The package imports only the standard library and computecap, because
// the static entrypoint imports it.
package host

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jetbake/jetbake/computecap"
)

// Host files a container may see, as absolute paths under the root.
const (
	TegraReleasePath = "/etc/nv_tegra_release"
	SocIDPath        = "/sys/devices/soc0/soc_id"
	SocFamilyPath    = "/sys/devices/soc0/family"
	SocMachinePath   = "/sys/devices/soc0/machine"
	// DeviceTreeDir links to FirmwareDTDir on the host; both are masked
	// in a default Docker container.
	DeviceTreeDir = "/proc/device-tree"
	FirmwareDTDir = "/sys/firmware/devicetree/base"
	// LibcudaName is the CUDA driver library the NVIDIA runtime mounts.
	LibcudaName = "libcuda.so.1"
	// CompatDir is the image's own forward-compatibility driver folder.
	CompatDir = "/usr/local/cuda/compat"
)

// Sources of the SoC, in Facts.SoCFrom.
const (
	FromSocID      = "soc_id"
	FromDeviceTree = "device-tree"
)

// MaxFile caps how much of one host file Root.ReadFile reads; host files
// are a few hundred bytes, and the image's description a few KiB.
const MaxFile = 64 << 10

// Root is the directory host paths are read under: "/" in production, a
// test tree or a copied sysroot otherwise.
type Root string

// Path returns where the absolute path p lies under the root.
func (r Root) Path(p string) string { return filepath.Join(string(r), p) }

// ReadFile reads p under the root with ReadRegular: a regular file of at
// most MaxFile bytes, opened without blocking, so that a named pipe put at
// a host file or at /etc/jetbake/image.json cannot hang the start.
func (r Root) ReadFile(p string) ([]byte, error) {
	return ReadRegular(r.Path(p), MaxFile)
}

// Exists reports whether p exists under the root.
func (r Root) Exists(p string) bool {
	_, err := os.Stat(r.Path(p))
	return err == nil
}

// IsDir reports whether p is a directory under the root.
func (r Root) IsDir(p string) bool {
	fi, err := os.Stat(r.Path(p))
	return err == nil && fi.IsDir()
}

// Find returns the path under the root of the first file called name in
// dirs for which fits holds (any file when fits is nil; "" when none), and
// the folders it looked in: each absolute folder once, in order; relative
// ones, such as the empty entries of a PATH, are skipped.
func (r Root) Find(name string, dirs []string, fits func(fs.FileInfo) bool) (string, []string) {
	var looked []string
	for _, dir := range dirs {
		if !filepath.IsAbs(dir) || slices.Contains(looked, dir) {
			continue
		}
		looked = append(looked, dir)
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(r.Path(p)); err == nil && (fits == nil || fits(fi)) {
			return p, looked
		}
	}
	return "", looked
}

// Executable reports whether fi is a regular file that someone may run,
// for Find.
func Executable(fi fs.FileInfo) bool {
	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// DeviceTreeFiles returns the places of one device-tree property (such as
// "compatible" or "model"), in the order they are read.
func DeviceTreeFiles(name string) [2]string {
	return [2]string{DeviceTreeDir + "/" + name, FirmwareDTDir + "/" + name}
}

// Facts is what a container sees of its host. Each fact is read
// independently; a missing file leaves its fields zero.
type Facts struct {
	// SocID is /sys/devices/soc0/soc_id when HasSocID; SocIDErr is set when
	// the file exists but does not read as a number.
	SocID    int
	HasSocID bool
	SocIDErr error
	// Family is /sys/devices/soc0/family ("Tegra"); "" when absent.
	Family string
	// Machine is /sys/devices/soc0/machine, the board name from the device
	// tree's model; "" when absent.
	Machine string
	// Compatible are the device tree's compatible entries and
	// CompatiblePath the file they came from; both empty when the device
	// tree is masked.
	Compatible     []string
	CompatiblePath string
	// Model is the device tree's model; "" when masked.
	Model     string
	ModelPath string
	// TegraRelease is true when /etc/nv_tegra_release exists; L4T is its
	// release when HasL4T, and L4TErr says why it did not parse.
	TegraRelease bool
	L4T          computecap.L4TVersion
	HasL4T       bool
	L4TErr       error
	// Libcuda is the path under the root of the first libcuda.so.1 found
	// ("" when none) and LibcudaLooked the folders searched.
	Libcuda       string
	LibcudaLooked []string
	// SoC is the Jetson SoC when HasSoC: from soc_id (family Tegra), else
	// from the device tree. SoCFrom names the source.
	SoC     computecap.SoC
	HasSoC  bool
	SoCFrom string
	// IDSoC and DTSoC are what each source named; Conflict is true when
	// both named a SoC and they differ.
	IDSoC, DTSoC       computecap.SoC
	HasIDSoC, HasDTSoC bool
	Conflict           bool
	// GPUNodes are the GPU device nodes in the container, and those of
	// the SoC's GPU driver that are missing (ReadGPUNodes).
	GPUNodes GPUNodes
}

// Options say where libcuda may be besides the usual folders.
type Options struct {
	// LibraryPath is the container's LD_LIBRARY_PATH.
	LibraryPath string
}

// Read reads every host fact under root, with the SoCs of table t.
func Read(root Root, t *computecap.Table, opts Options) *Facts {
	f := &Facts{}
	f.readSoC0(root, t)
	f.readDeviceTree(root, t)
	f.readTegraRelease(root)
	f.Libcuda, f.LibcudaLooked = FindLibcuda(root, t, opts.LibraryPath)
	switch {
	case f.HasIDSoC:
		f.SoC, f.HasSoC, f.SoCFrom = f.IDSoC, true, FromSocID
	case f.HasDTSoC:
		f.SoC, f.HasSoC, f.SoCFrom = f.DTSoC, true, FromDeviceTree
	}
	f.Conflict = f.HasIDSoC && f.HasDTSoC && f.IDSoC.Name != f.DTSoC.Name
	f.GPUNodes = ReadGPUNodes(root, t, f)
	return f
}

// readSoC0 reads /sys/devices/soc0.
func (f *Facts) readSoC0(root Root, t *computecap.Table) {
	if data, err := root.ReadFile(SocFamilyPath); err == nil {
		f.Family = strings.TrimSpace(string(data))
	}
	if data, err := root.ReadFile(SocMachinePath); err == nil {
		f.Machine = ParseModel(data)
	}
	data, err := root.ReadFile(SocIDPath)
	if err != nil {
		return
	}
	f.SocID, f.SocIDErr = ParseSocID(data)
	f.HasSocID = f.SocIDErr == nil
	if f.HasSocID && (f.Family == "" || f.Family == "Tegra") {
		f.IDSoC, f.HasIDSoC = t.SoCByID(f.SocID)
	}
}

// readDeviceTree reads the compatible and model properties when visible.
func (f *Facts) readDeviceTree(root Root, t *computecap.Table) {
	for _, p := range DeviceTreeFiles("compatible") {
		if data, err := root.ReadFile(p); err == nil {
			f.Compatible, f.CompatiblePath = ParseCompatible(data), p
			break
		}
	}
	for _, p := range DeviceTreeFiles("model") {
		if data, err := root.ReadFile(p); err == nil {
			f.Model, f.ModelPath = ParseModel(data), p
			break
		}
	}
	f.DTSoC, f.HasDTSoC = t.SoCFromCompatible(f.Compatible)
}

// readTegraRelease reads /etc/nv_tegra_release.
func (f *Facts) readTegraRelease(root Root) {
	data, err := root.ReadFile(TegraReleasePath)
	var odd *NotRegularError
	if errors.As(err, &odd) || errors.Is(err, ErrTooLarge) {
		// There, but not a file the NVIDIA runtime mounts: say so.
		f.TegraRelease, f.L4TErr = true, errors.New(TegraReleasePath+" is not the file the NVIDIA runtime mounts ("+odd.kindOr("over "+strconv.Itoa(MaxFile>>10)+" KiB")+")")
		return
	}
	if err != nil {
		return
	}
	f.TegraRelease = true
	f.L4T, f.L4TErr = ParseTegraRelease(data)
	f.HasL4T = f.L4TErr == nil
}

// BoardName is the device tree's model, else /sys/devices/soc0/machine;
// "" when neither is visible.
func (f *Facts) BoardName() string {
	if f.Model != "" {
		return f.Model
	}
	return f.Machine
}

// DeviceClass names the module: from the part numbers of the compatible
// entries, else the words of the board name (see SoC.ModuleClass). When
// neither is visible, it is the SoC's class, "Jetson Orin", with fromSoC
// set; when they are visible but name no module of the table, it is
// "Jetson Orin (other module)" and known is false. Without a SoC it is "".
func (f *Facts) DeviceClass() (class string, known, fromSoC bool) {
	if !f.HasSoC {
		return "", false, false
	}
	if c, ok := f.SoC.ModuleClass(f.Compatible, f.BoardName()); ok {
		return c, true, false
	}
	if len(f.Compatible) == 0 && f.BoardName() == "" {
		return "Jetson " + f.SoC.Family, true, true
	}
	return "Jetson " + f.SoC.Family + " (other module)", false, false
}

// State is the host state for the host rule, without the driver's answer
// (set Driver and HasDriver when the driver was asked).
func (f *Facts) State() computecap.HostState {
	return computecap.HostState{SoC: f.SoC, HasSoC: f.HasSoC, L4T: f.L4T, HasL4T: f.HasL4T}
}

// LibcudaDirs returns the folders where a container runtime mounts the
// host's libcuda.so.1, in the order they are searched: the driver folders
// of table t's JetPack releases, the newest release's first
// (Table.DriverDirs: JetPack 7.2's per-GPU folders, JetPack 6's and 7.0's
// nvidia folder, JetPack 5's tegra folder), then the usual library folders
// of other hosts. LD_LIBRARY_PATH follows them, and CompatDir, the image's
// own forward-compatibility driver, comes last: it is not the host's
// driver.
func LibcudaDirs(t *computecap.Table) []string {
	return append(t.DriverDirs(),
		"/usr/lib/aarch64-linux-gnu",
		"/usr/lib/x86_64-linux-gnu",
		"/usr/lib64",
		"/usr/lib/wsl/lib",
	)
}

// FindLibcuda returns the path under the root of the first libcuda.so.1
// found in LibcudaDirs(t), then the entries of libraryPath, then CompatDir
// ("" when none), and the folders it looked in.
func FindLibcuda(root Root, t *computecap.Table, libraryPath string) (string, []string) {
	dirs := LibcudaDirs(t)
	dirs = append(dirs, strings.Split(libraryPath, ":")...)
	return root.Find(LibcudaName, append(dirs, CompatDir), nil)
}

// ParseTegraRelease reads the first line of /etc/nv_tegra_release, such as
// "# R36 (release), REVISION: 4.7, GCID: 42132812, BOARD: generic, ...",
// into 36.4.7.
func ParseTegraRelease(data []byte) (computecap.L4TVersion, error) {
	line, _, _ := bytes.Cut(data, []byte{'\n'})
	text := strings.TrimSpace(string(line))
	fail := func(msg string) (computecap.L4TVersion, error) {
		return computecap.L4TVersion{}, errors.New("first line " + computecap.QuoteShort(text) + msg)
	}
	rest, ok := strings.CutPrefix(text, "# R")
	if !ok {
		return fail(" does not start with \"# R<major>\"")
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		end = len(rest)
	}
	if _, err := smallNumber(rest[:end]); err != nil {
		return fail(": release major: " + err.Error())
	}
	revision := ""
	for field := range strings.SplitSeq(rest[end:], ",") {
		if r, ok := strings.CutPrefix(strings.TrimSpace(field), "REVISION:"); ok {
			revision = strings.TrimSpace(r)
			break
		}
	}
	if revision == "" {
		return fail(" has no \"REVISION: <minor>.<patch>\" field")
	}
	v, err := computecap.ParseL4TVersion(rest[:end] + "." + revision)
	if err != nil {
		return fail(": REVISION " + computecap.QuoteShort(revision) + ": " + err.Error())
	}
	return v, nil
}

// ParseSocID reads /sys/devices/soc0/soc_id, a decimal number.
func ParseSocID(data []byte) (int, error) {
	id, err := smallNumber(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, errors.New("soc_id: " + err.Error())
	}
	return id, nil
}

// ParseCompatible splits a device-tree compatible property (NUL-separated
// strings from the most specific, the board, to the most general, the SoC)
// into its entries, for Table.SoCFromCompatible.
func ParseCompatible(data []byte) []string {
	var out []string
	for entry := range strings.SplitSeq(string(data), "\x00") {
		if e := strings.TrimSpace(entry); e != "" {
			out = append(out, e)
		}
	}
	return out
}

// ParseModel reads a board name: the device tree's NUL-terminated model, or
// /sys/devices/soc0/machine's line.
func ParseModel(data []byte) string {
	name, _, _ := bytes.Cut(data, []byte{0})
	return strings.TrimSpace(string(name))
}

// smallNumber reads 1 to 4 decimal digits.
func smallNumber(s string) (int, error) {
	if len(s) == 0 || len(s) > 4 {
		return 0, errors.New(computecap.QuoteShort(s) + " is not a number of 1 to 4 digits")
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, errors.New(computecap.QuoteShort(s) + " is not a number of 1 to 4 digits")
		}
	}
	return strconv.Atoi(s)
}
