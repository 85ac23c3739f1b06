package computecap

import "strings"

// This file is the one place that holds the Jetson facts: one row per SoC,
// one per JetPack release, one per SM that nvcc builds, and NVIDIA's base
// image repositories with their CUDA flavour. Adding a Jetson, a JetPack
// release, an SM target or a base repository means adding rows here and
// nowhere else.
//
// Public sources, re-checked before a row is relied on for a release:
//   - NVIDIA Jetson Linux (L4T) and JetPack release notes and archive:
//     https://developer.nvidia.com/embedded/jetpack-archive,
//     https://developer.nvidia.com/embedded/jetson-linux-archive
//     (JetPack 5.1.2 is L4T 35.4.1; 6.2.1 is 36.4.4, 36.4.7 is also reported
//     as 6.2.1; 7.0 is 38.2.0, 7.1 is 38.4.0, 7.2 is 39.2.0 and 7.2.1 is
//     39.2.1; the JetPack 5.0 and 5.0.1 developer previews are L4T R34, and
//     JetPack 5.0.2 is R35.1.0).
//   - jetson_stats' table of L4T to JetPack:
//     https://github.com/rbonghi/jetson_stats/blob/master/jtop/core/jetson_variables.py
//   - jetson-containers' l4t_version and l4t_version_compatible (R36 images
//     split at 36.4; R38 and R39 hosts are compatible for SBSA images):
//     https://github.com/dusty-nv/jetson-containers/blob/master/jetson_containers/l4t_version.py
//   - The CUDA programming guide (compute capabilities of Jetson GPUs; cubin
//     compatibility across minor versions is desktop-only):
//     https://docs.nvidia.com/cuda/cuda-c-programming-guide/#compute-capabilities
//   - The CUDA compatibility guide and NVIDIA's CUDA 13.2 images, which ship
//     Orin's forward-compatibility libraries in /usr/local/cuda/compat_orin:
//     https://docs.nvidia.com/deploy/cuda-compatibility/,
//     https://gitlab.com/nvidia/container-images/cuda
//   - nvidia-container-toolkit (CSV mode on Tegra; toolkit 1.19 selects
//     compat_orin on Orin): https://github.com/NVIDIA/nvidia-container-toolkit
//   - The Linux kernel: /sys/devices/soc0/soc_id is the Tegra chip id
//     (drivers/soc/tegra/fuse/fuse-tegra.c: 0x19 T194, 0x23 T234, 0x26
//     T264; 0x24 is T241 Grace, not a Jetson).
//   - The CPU cores: NVIDIA's Jetson module data sheets (Xavier: Carmel,
//     Orin: Arm Cortex-A78AE, Thor: Arm Neoverse V3AE). Cortex-A78AE's
//     features are Arm's Technical Reference Manual's
//     (https://developer.arm.com/documentation/101779/) as Linux names them,
//     the same list that lscpu prints on an Orin Nano under JetPack 6
//     (L4T 36.4.7): no SVE, no i8mm, no bf16. The kernel's names:
//     arch/arm64/kernel/cpuinfo.c.
//   - Where the driver lives: nvidia-container-toolkit's CSV lists and its
//     test roots (testdata/lookup/rootfs-orin and rootfs-thor-dgpu:
//     /usr/lib/aarch64-linux-gnu/nvidia/libcuda.so.1.1 on JetPack 6, 7.0
//     and 7.1; JetPack 5's l4t.csv lists /usr/lib/aarch64-linux-gnu/tegra).
//     L4T R39 (JetPack 7.2) keeps one driver per GPU, Orin's nvgpu in
//     /opt/nvidia/l4t-gpu-libs/nvgpu and Thor's OpenRM in .../openrm, which
//     its drivers.csv lists: the nvidia-l4t-cuda-nvgpu and -openrm files of
//     jetpack-nixos' pkgs/containers/r39-l4t.json
//     (https://github.com/anduril/jetpack-nixos/blob/master/pkgs/containers/r39-l4t.json).
//   - bitsandbytes issue 1939: its sm_80 cubins were reported to run on an
//     Orin, which the CUDA guide does not promise (SoC.Unpromised):
//     https://github.com/bitsandbytes-foundation/bitsandbytes/issues/1939
//   - LLVM's table of CUDA GPUs (clang/lib/Basic/Cuda.cpp) and
//     text-embeddings-inference's compute-cap table
//     (backends/candle/src/compute_cap.rs) as peer references.

// newDefaultTable builds the shipped rows.
func newDefaultTable() *Table {
	return &Table{SoCs: socRows(), JetPacks: jetPackRows(), Toolchain: toolchainRows(),
		BaseRepositories: baseRepositoryRows(), BaseImages: baseImageRows(), Frameworks: frameworkRows(),
		CrossTargets: crossTargetRows(), CrossRecipes: crossRecipeRows()}
}

// socRows are the Jetson SoCs, oldest first. Module part numbers are
// NVIDIA's: p3701 AGX Orin, p3767-0000/0001 Orin NX, p3767-0003/0004/0005
// Orin Nano (a "-super" board entry from JetPack 6.2), p3834-0008 AGX Thor
// (T5000), p2888 AGX Xavier, p3668 Xavier NX, p3448 Nano, p2180 TX1, p3310
// and p3489 TX2, p3636 TX2 NX.
func socRows() []SoC {
	cc := func(major, minor int) Capability { return Capability{Major: major, Minor: minor} }
	return []SoC{
		{Name: "tegra210", SocID: 33, Family: "Nano/TX1", Capability: cc(5, 3), JetPacks: []string{"4"},
			Modules: []Module{
				{Class: "Jetson TX1", Parts: []string{"p2180"}, Words: []string{"TX1"}},
				{Class: "Jetson Nano", Parts: []string{"p3448"}, Words: []string{"Jetson Nano"}},
			}},
		{Name: "tegra186", SocID: 24, Family: "TX2", Capability: cc(6, 2), JetPacks: []string{"4"},
			Modules: []Module{
				{Class: "Jetson TX2 NX", Parts: []string{"p3636"}, Words: []string{"TX2 NX"}},
				{Class: "Jetson TX2", Parts: []string{"p3310", "p3489"}, Words: []string{"TX2"}},
			}},
		{Name: "tegra194", SocID: 25, Family: "Xavier", Capability: cc(7, 2), JetPacks: []string{"4", "5"},
			CPU: CPU{Name: "Carmel"},
			Modules: []Module{
				{Class: "Jetson AGX Xavier", Parts: []string{"p2888"}, Words: []string{"AGX Xavier"}},
				{Class: "Jetson Xavier NX", Parts: []string{"p3668"}, Words: []string{"Xavier NX"}},
			}},
		{Name: "tegra234", SocID: 35, Family: "Orin", Capability: cc(8, 7), JetPacks: []string{"5", "6", "7.2"},
			CPU: CPU{Name: "Cortex-A78AE", Features: strings.Fields("fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp " +
				"asimdhp cpuid asimdrdm lrcpc dcpop asimddp uscat ilrcpc flagm paca pacg")},
			Modules: []Module{
				{Class: "Jetson AGX Orin", Parts: []string{"p3701"}, Words: []string{"AGX Orin"}},
				{Class: "Jetson Orin Nano Super", Parts: []string{"p3767-0003-super", "p3767-0004-super", "p3767-0005-super"},
					Words: []string{"Orin Nano", "Super"}},
				{Class: "Jetson Orin NX", Parts: []string{"p3767-0000", "p3767-0001"}, Words: []string{"Orin NX"}},
				{Class: "Jetson Orin Nano", Parts: []string{"p3767-0003", "p3767-0004", "p3767-0005"}, Words: []string{"Orin Nano"}},
			},
			ForwardCompat: []ForwardCompat{{Dir: "/usr/local/cuda/compat_orin", Since: CUDAVersion{Major: 13, Minor: 2}, Flavour: FlavourSBSA}},
			Unpromised:    []UnpromisedCode{{Compiled: cc(8, 0), Source: "bitsandbytes issue 1939"}}},
		{Name: "tegra264", SocID: 38, Family: "Thor", Capability: cc(11, 0), Aliases: []Capability{cc(10, 1)},
			JetPacks: []string{"7"}, CPU: CPU{Name: "Neoverse-V3AE"},
			Modules: []Module{
				{Class: "Jetson AGX Thor", Parts: []string{"p3834-0008"}, Words: []string{"AGX Thor"}},
			}},
	}
}

// jetPackRows are the JetPack releases, oldest first.
func jetPackRows() []JetPackRelease {
	v := func(major, minor int) CUDAVersion { return CUDAVersion{Major: major, Minor: minor} }
	// The GPU drivers and the device nodes CUDA needs of them, as NVIDIA's
	// runtime mounts them (the "dev" lines of the host's CSV files): nvgpu
	// (Xavier, Orin) opens its control node, /dev/nvhost-ctrl-gpu, also
	// /dev/nvgpu/igpu0/ctrl on newer kernels, and /dev/nvmap for memory;
	// OpenRM (Thor) /dev/nvidiactl and the GPU's /dev/nvidia0. Sources:
	// JetPack 5's l4t.csv and JetPack 6's and 7's devices.csv
	// (OE4T/meta-tegra recipes-bsp/tegra-binaries/tegra-configs,
	// nvidia-container-toolkit testdata/lookup/rootfs-orin and
	// rootfs-thor-dgpu, whose devices.csv lists both drivers' nodes and a
	// host has those of its own); the toolkit's CSV device generator
	// (pkg/nvcdi/lib-csv.go) treats /dev/nvidiactl and /dev/nvidia<index> as
	// a Thor GPU's. /dev/nvidia-uvm is not required: meta-tegra's
	// devices.csv lists it, the toolkit's Thor root does not.
	nvgpu := GPUDriver{Name: "nvgpu", Nodes: []DeviceNode{{"/dev/nvhost-ctrl-gpu", "/dev/nvgpu/igpu0/ctrl"}, {"/dev/nvmap"}}}
	openRM := GPUDriver{Name: "OpenRM", Nodes: []DeviceNode{{"/dev/nvidiactl"}, {"/dev/nvidia0"}}}
	// The driver's folders: JetPack 4 and 5; 6, 7.0 and 7.1; 7.2, one per GPU driver.
	tegraDriver := []DriverDir{{Dir: "/usr/lib/aarch64-linux-gnu/tegra", Driver: nvgpu}}
	nvgpuDriver := []DriverDir{{Dir: "/usr/lib/aarch64-linux-gnu/nvidia", Driver: nvgpu}}
	openRMDriver := []DriverDir{{Dir: "/usr/lib/aarch64-linux-gnu/nvidia", Driver: openRM}}
	perGPUDriver := []DriverDir{{Dir: "/opt/nvidia/l4t-gpu-libs/nvgpu", Family: "Orin", Driver: nvgpu},
		{Dir: "/opt/nvidia/l4t-gpu-libs/openrm", Family: "Thor", Driver: openRM}}
	tegra := func(jp, l4t string, cuda CUDAVersion, ubuntu string) JetPackRelease {
		dirs := nvgpuDriver
		if strings.HasPrefix(jp, "5.") {
			dirs = tegraDriver
		}
		return JetPackRelease{JetPack: jp, L4T: l4t, CUDA: cuda, Ubuntu: ubuntu, Flavour: FlavourTegra, Rule: RuleL4T, DriverDirs: dirs}
	}
	sbsa := func(jp, l4t string, cuda CUDAVersion) JetPackRelease {
		dirs := openRMDriver
		if strings.HasPrefix(l4t, "39.") {
			dirs = perGPUDriver
		}
		return JetPackRelease{JetPack: jp, L4T: l4t, CUDA: cuda, Ubuntu: "24.04", Flavour: FlavourSBSA, Rule: RuleDriverCUDA, DriverDirs: dirs}
	}
	preview := func(r JetPackRelease) JetPackRelease { r.Preview = true; return r }
	also := func(r JetPackRelease, l4t ...string) JetPackRelease { r.AlsoL4T = l4t; return r }
	return []JetPackRelease{
		preview(tegra("5.0", "34.1.0", v(11, 4), "20.04")),
		preview(tegra("5.0.1", "34.1.1", v(11, 4), "20.04")),
		tegra("5.0.2", "35.1.0", v(11, 4), "20.04"),
		tegra("5.1", "35.2.1", v(11, 4), "20.04"),
		tegra("5.1.2", "35.4.1", v(11, 4), "20.04"),
		tegra("6.0", "36.3.0", v(12, 2), "22.04"),
		tegra("6.1", "36.4.0", v(12, 6), "22.04"),
		tegra("6.2", "36.4.3", v(12, 6), "22.04"),
		also(tegra("6.2.1", "36.4.4", v(12, 6), "22.04"), "36.4.7"),
		sbsa("7.0", "38.2.0", v(13, 0)),
		sbsa("7.1", "38.4.0", v(13, 0)),
		sbsa("7.2", "39.2.0", v(13, 2)),
		sbsa("7.2.1", "39.2.1", v(13, 2)),
	}
}

// toolchainRows lists, one row per SM, the CUDA releases whose nvcc builds
// a working binary for it. Thor (10.1 and 11.0) and sm_110a are handled in
// thorToolchain. Sources: the CUDA toolkit release notes
// (https://docs.nvidia.com/cuda/cuda-toolkit-release-notes/) and LLVM's
// CUDA table (clang/lib/Basic/Cuda.cpp).
func toolchainRows() []ToolchainRow {
	const (
		maxwellPascalVolta = "offline compilation for Maxwell, Pascal and Volta was removed in CUDA 13.0"
	)
	v := func(major, minor int) CUDAVersion { return CUDAVersion{Major: major, Minor: minor} }
	c := func(major, minor int, arch bool) Capability {
		return Capability{Major: major, Minor: minor, ArchSpecific: arch}
	}
	return []ToolchainRow{
		{SM: c(5, 0, false), Since: v(6, 0), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(5, 2, false), Since: v(6, 5), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(5, 3, false), Since: v(7, 0), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(6, 0, false), Since: v(8, 0), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(6, 1, false), Since: v(8, 0), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(6, 2, false), Since: v(8, 0), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(7, 0, false), Since: v(9, 0), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(7, 2, false), Since: v(9, 1), Until: v(13, 0), Gone: maxwellPascalVolta},
		{SM: c(7, 5, false), Since: v(10, 0)},
		{SM: c(8, 0, false), Since: v(11, 0)},
		{SM: c(8, 6, false), Since: v(11, 1)},
		{SM: c(8, 7, false), Since: v(11, 4)},
		{SM: c(8, 9, false), Since: v(11, 8)},
		{SM: c(9, 0, false), Since: v(11, 8)},
		{SM: c(9, 0, true), Since: v(12, 0)},
		{SM: c(10, 0, false), Since: v(12, 8)},
		{SM: c(10, 0, true), Since: v(12, 8)},
		{SM: c(10, 3, false), Since: v(12, 9)},
		{SM: c(10, 3, true), Since: v(12, 9)},
		{SM: c(12, 0, false), Since: v(12, 8)},
		{SM: c(12, 0, true), Since: v(12, 8)},
		{SM: c(12, 1, false), Since: v(12, 9)},
		{SM: c(12, 1, true), Since: v(12, 9)},
	}
}

// baseRepositoryRows are NVIDIA's base image repositories whose linux/arm64
// images have a known CUDA flavour. Sources:
//   - l4t-jetpack, l4t-cuda and l4t-base are the Jetson (L4T) containers,
//     arm64 only, with Tegra CUDA (targets/aarch64-linux); l4t-base carries
//     no CUDA from L4T R34.1 on ("the l4t-base will not bring CUDA, CuDNN
//     and TensorRT from the host file system"):
//     https://catalog.ngc.nvidia.com/orgs/nvidia/containers/l4t-jetpack,
//     https://catalog.ngc.nvidia.com/orgs/nvidia/containers/l4t-cuda,
//     https://catalog.ngc.nvidia.com/orgs/nvidia/containers/l4t-base
//   - nvidia/cuda is multi-arch; its arm64 images are built from NVIDIA's
//     sbsa package repositories (NVARCH=sbsa in the Dockerfiles of
//     https://gitlab.com/nvidia/container-images/cuda), the CUDA that
//     JetPack 7 runs on Thor: https://catalog.ngc.nvidia.com/orgs/nvidia/containers/cuda,
//     the same images as https://hub.docker.com/r/nvidia/cuda.
//   - The targets folders: the CUDA installation guide's cross-platform
//     packages (cuda-cross-aarch64 installs targets/aarch64-linux for
//     Jetson, cuda-cross-sbsa targets/sbsa-linux):
//     https://docs.nvidia.com/cuda/cuda-installation-guide-linux/;
//     jetson-containers tags the two builds "tegra-aarch64" and "arm64-sbsa"
//     (https://github.com/dusty-nv/jetson-containers).
func baseRepositoryRows() []BaseRepository {
	return []BaseRepository{
		{Repository: "nvcr.io/nvidia/l4t-jetpack", Flavour: FlavourTegra, Tags: TagL4T},
		{Repository: "nvcr.io/nvidia/l4t-cuda", Flavour: FlavourTegra, Tags: TagCUDA},
		{Repository: "nvcr.io/nvidia/l4t-base", Flavour: FlavourTegra, Tags: TagNoCUDA},
		{Repository: "nvcr.io/nvidia/cuda", Flavour: FlavourSBSA, Tags: TagCUDA},
		{Repository: "docker.io/nvidia/cuda", Flavour: FlavourSBSA, Tags: TagCUDA},
	}
}

// baseImageRows are base images known to exist on NGC (the catalog pages
// above list their tags), build (devel) bases first: the fixes offer them
// for a release whose base does not fit. l4t-jetpack r36.4.3 was reported
// missing; no l4t-jetpack tag for L4T R38 is known, and NVIDIA points
// JetPack 7 to the nvidia/cuda images.
func baseImageRows() []BaseImage {
	devel := func(ref string) BaseImage { return BaseImage{Ref: ref, Devel: true} }
	runtime := func(ref string) BaseImage { return BaseImage{Ref: ref} }
	return []BaseImage{
		devel("nvcr.io/nvidia/l4t-jetpack:r35.4.1"),
		devel("nvcr.io/nvidia/l4t-cuda:11.4.19-devel"),
		devel("nvcr.io/nvidia/l4t-jetpack:r36.3.0"),
		devel("nvcr.io/nvidia/l4t-jetpack:r36.2.0"),
		devel("nvcr.io/nvidia/l4t-cuda:12.2.12-devel"),
		devel("nvcr.io/nvidia/l4t-jetpack:r36.4.0"),
		devel("nvcr.io/nvidia/cuda:13.0.1-devel-ubuntu24.04"),
		devel("nvcr.io/nvidia/cuda:13.2.0-devel-ubuntu24.04"),
		runtime("nvcr.io/nvidia/l4t-cuda:11.4.19-runtime"),
		runtime("nvcr.io/nvidia/l4t-cuda:12.2.12-runtime"),
		runtime("nvcr.io/nvidia/l4t-cuda:12.6.11-runtime"),
		runtime("nvcr.io/nvidia/l4t-base:r36.2.0"),
		runtime("nvcr.io/nvidia/cuda:13.0.1-runtime-ubuntu24.04"),
		runtime("nvcr.io/nvidia/cuda:13.2.0-runtime-ubuntu24.04"),
	}
}

// frameworkRows are NVIDIA's PyTorch containers for Jetson by JetPack line,
// oldest first, from NVIDIA's "PyTorch for Jetson Platform" release notes
// (April 2026): 23.06 is JetPack 5.1; 24.05 to 24.08 JetPack 6.0; 24.09 to
// 25.01 6.1; 25.02 to 25.06 6.2, the Tegra "-igpu" tags; 25.08 to 25.11
// JetPack 7.0 and 25.12 to 26.03 7.1, the unified arm64 server (SBSA)
// containers, plain "-py3" (CUDA 13 is one Arm toolkit for servers and
// Thor). NGC published no 25.07. From 26.03 NVIDIA no longer produces
// "-igpu" containers; 26.02-py3-igpu was reported to run on a JetPack 7.2
// (R39.2) Orin NX. CUDA, PyTorch and Python are filled in only where a
// source gives them (25.06-py3-igpu: CUDA 12.9, torch 2.8.0a0, Python
// 3.12, from its catalog page; 25.08-py3, the one jetbake init writes for
// JetPack 7.0: CUDA 13.0, torch 2.8.0a0 (2.8.0a0+34c6371d24) and Ubuntu
// 24.04's Python 3.12, from NVIDIA's PyTorch release notes of 25.08,
// https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-25-08.html);
// the rest stay empty, "unknown", never guessed. JetPack 5's
// Jetson containers are l4t-pytorch's: r35.2.1-pth2.0-py3 (L4T R35.2.1,
// JetPack 5.1, PyTorch 2.0 on Ubuntu 20.04's Python 3.8 and JetPack 5's
// CUDA 11.4), from NGC's l4t-pytorch catalog page; its other r35 tags
// have no row until a source lists them, so such a tag is refused naming
// the newest known container. A new container is one row.
func frameworkRows() []FrameworkContainer {
	const (
		notes   = "https://docs.nvidia.com/deeplearning/frameworks/install-pytorch-jetson-platform-release-notes/"
		catalog = "https://catalog.ngc.nvidia.com/orgs/nvidia/containers/pytorch"
	)
	row := func(tag, line string, f Flavour) FrameworkContainer {
		return FrameworkContainer{Framework: FrameworkPyTorch, Repository: "nvcr.io/nvidia/pytorch", Tag: tag,
			Line: line, Flavour: f, Source: notes}
	}
	months := func(year string, from, to int, suffix, line string, f Flavour) []FrameworkContainer {
		var out []FrameworkContainer
		for m := from; m <= to; m++ {
			if year == "25" && m == 7 {
				continue // NGC published no 25.07
			}
			out = append(out, row(year+"."+twoDigits(m)+suffix, line, f))
		}
		return out
	}
	l4t := FrameworkContainer{Framework: FrameworkPyTorch, Repository: "nvcr.io/nvidia/l4t-pytorch", Tag: "r35.2.1-pth2.0-py3",
		Line: "5.1", Flavour: FlavourTegra, CUDA: "11.4", Python: "3.8",
		Source: "https://catalog.ngc.nvidia.com/orgs/nvidia/containers/l4t-pytorch"}
	rows := []FrameworkContainer{l4t}
	rows = append(rows, row("23.06-py3-igpu", "5.1", FlavourTegra))
	rows = append(rows, months("24", 5, 8, "-py3-igpu", "6.0", FlavourTegra)...)
	rows = append(rows, months("24", 9, 12, "-py3-igpu", "6.1", FlavourTegra)...)
	rows = append(rows, months("25", 1, 1, "-py3-igpu", "6.1", FlavourTegra)...)
	rows = append(rows, months("25", 2, 6, "-py3-igpu", "6.2", FlavourTegra)...)
	r2506 := &rows[len(rows)-1]
	r2506.CUDA, r2506.PyTorch, r2506.Python, r2506.Source = "12.9", "2.8.0a0", "3.12", catalog
	rows = append(rows, months("25", 8, 11, "-py3", "7.0", FlavourSBSA)...)
	r2508 := &rows[len(rows)-4]
	r2508.CUDA, r2508.PyTorch, r2508.Python = "13.0", "2.8.0a0", "3.12"
	r2508.Source = "https://docs.nvidia.com/deeplearning/frameworks/pytorch-release-notes/rel-25-08.html"
	rows = append(rows, months("25", 12, 12, "-py3", "7.1", FlavourSBSA)...)
	rows = append(rows, months("26", 1, 3, "-py3", "7.1", FlavourSBSA)...)
	reported := row("26.02-py3-igpu", "7.2", FlavourTegra)
	reported.Note = "reported to run on a JetPack 7.2 (R39.2) Orin NX"
	return append(rows, reported)
}

// twoDigits writes a month as two digits.
func twoDigits(m int) string {
	return string([]byte{byte('0' + m/10), byte('0' + m%10)})
}
