// Command jetbake-entrypoint is the entrypoint of every image jetbake builds.
// It finds the compute capability of the host's GPU and execs the router
// binary built for it, or says in one paragraph exactly why it cannot.
//
// # What it reads
//
// The image describes itself in /etc/jetbake/image.json (package imagespec):
// the router's name, one binary per SM target, the JetPack, L4T and CUDA
// versions, its tags and its family of sibling releases. Every path the
// entrypoint reads (that file, the host files, libcuda, nvidia-smi and the
// router binaries) is read under a root directory (computecap/host's
// Root) that defaults to "/" and is set by JETBAKE_SYSROOT, for tests and
// debugging.
//
// # Detection
//
// Package entrypoint/detect, which jetbake-probe imports too, does the
// detection and the choice below. Package computecap/host reads the host as
// a container sees it, the same code jetbake doctor and jetbake pick
// --sysroot use; detection keeps its facts (host.Facts) as they are and adds
// what the sources answered.
// In a default `docker run --runtime nvidia` the device tree is NOT
// visible: Docker masks /sys/firmware, and /proc/device-tree points there.
// What stays visible is the kernel's soc bus, /sys/devices/soc0: family ("Tegra"),
// soc_id (the Tegra chip id: 25 Xavier, 35 Orin, 38 Thor) and machine, the
// board name the kernel copies from the device tree's model (Linux
// drivers/base/soc.c, soc_device_register). The NVIDIA runtime adds
// /etc/nv_tegra_release (the L4T release), the GPU device nodes and the
// host's libcuda.so.1.
//
// On a Jetson (a Tegra soc_id that names a SoC of computecap's table) the
// entrypoint takes the fast path: the SM comes from the table, and the
// driver is asked only for its CUDA version (jetbake-cudaprobe
// --driver-version, which calls cuDriverGetVersion and no cuInit). It asks
// the driver in full only when that answer is missing or disagrees with the
// CUDA the table gives for the host's L4T release. When it asks cuInit and
// the driver says CUDA_ERROR_NO_DEVICE (it loads but sees no GPU: no
// device nodes, or nodes this user cannot open), it refuses with one
// sentence, unless JETBAKE_COMPUTE_CAP chose the binary. The fast path
// never meets that error (jetbake-probe, which always asks cuInit, does),
// and a version answer needs no device node, so it checks the nodes
// itself, with a stat call per name (computecap/host's ReadGPUNodes): the
// nodes the table says the GPU driver of the SoC's JetPack line needs
// (nvgpu: /dev/nvhost-ctrl-gpu or /dev/nvgpu/igpu0/ctrl, and /dev/nvmap;
// OpenRM on Thor: /dev/nvidiactl and /dev/nvidia0). With the runtime's
// files but a node missing it refuses in one sentence that names the nodes
// and --runtime nvidia, unless JETBAKE_COMPUTE_CAP chose the binary or
// cuInit answered; --explain shows the check ("device_nodes").
// Elsewhere, and in
// jetbake-probe, the sources are tried in order, each reporting what it
// found or why not:
//
//  1. JETBAKE_COMPUTE_CAP, a manual override such as "8.7" (first on both
//     paths).
//  2. The CUDA driver API, through jetbake-cudaprobe (below).
//  3. nvidia-smi --query-gpu=compute_cap, when present. JetPack 6 answers
//     "[N/A]" and JetPack 5 has no nvidia-smi: both move on. An exit status
//     NVIDIA documents reads as what it means (12: NVML, libnvidia-ml.so.1,
//     not found; 9: no driver to talk to), not as nvidia-smi's own text.
//  4. The Tegra device tree (/proc/device-tree/compatible, its first SoC
//     entry), when visible, and /sys/devices/soc0/soc_id, mapped to the
//     SoC's GPU by the table.
//
// A GPU found only from soc_id or the device tree counts as usable only
// when the NVIDIA runtime left a trace: an answer from the driver,
// nv_tegra_release or a GPU device node. --explain says which path was
// taken and why ("path" and "path_why").
//
// # Why jetbake-cudaprobe
//
// jetbake-entrypoint is static (CGO_ENABLED=0), imports only the standard
// library, computecap (with computecap/host), imagespec and
// entrypoint/detect, and is stripped to under 3 MB, so that it runs in any
// image and decides in well under a millisecond when no driver query is
// needed (BenchmarkDetectAndPick). A static binary cannot dlopen
// libcuda.so.1, so the driver query lives in a second binary,
// jetbake-cudaprobe, built with purego (also CGO_ENABLED=0, but dynamically
// linked against the C library's loader, which every CUDA image has). The
// entrypoint runs the CUDA probe only when it finds libcuda.so.1 under the root (computecap/host's
// FindLibcuda), in the driver folders of computecap's table, the newest
// JetPack's first (/opt/nvidia/l4t-gpu-libs/nvgpu and .../openrm on
// JetPack 7.2, /usr/lib/aarch64-linux-gnu/nvidia on JetPack 6 to 7.1,
// .../tegra on JetPack 5), then /usr/lib/aarch64-linux-gnu,
// /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/lib/wsl/lib, the entries of
// LD_LIBRARY_PATH and last /usr/local/cuda/compat (the image's own
// forward-compatibility driver, which is not the host's), and the CUDA
// probe exists: next to the entrypoint's own executable, or at
// JETBAKE_CUDAPROBE. The CUDA probe gets the library's path
// as its argument, calls cuInit, cuDeviceGet, cuDeviceGetAttribute (75 and
// 76) and cuDriverGetVersion, and prints
// {"major":8,"minor":7,"driver_version":12060}, or exits non-zero with a
// one-line reason on stderr and the failed call's CUDA error on stdout
// ({"step":"cuInit","error":"CUDA_ERROR_NO_DEVICE","code":100}); with
// --driver-version first it calls cuDriverGetVersion
// alone and prints {"driver_version":12060}. It gets 5 seconds, as does
// nvidia-smi. cuInit dominates the start-up time when the full query runs
// (about 0.25 s on an H200); the fast path does not pay it
// (BenchmarkStartFastPath, BenchmarkStartFullDriverQuery).
//
// # Choice and exec
//
// computecap.Pick chooses among the image's targets. Before that, the host
// rule of the image's JetPack flavour (computecap's Table.CheckHost, which
// the builder applies too) must hold, unless JETBAKE_SKIP_L4T_CHECK=1:
//
//   - Tegra flavour (JetPack 6 and earlier): the host's L4T major is the
//     image's and its minor at least what the image's CUDA needs (a 36.4
//     image with CUDA 12.6 needs a 36.4 or later host);
//   - SBSA flavour (JetPack 7 and later): the driver's CUDA version
//     (cuDriverGetVersion, else the table's CUDA for the host's L4T) has the
//     image's major and at least its minor, unless the image ships
//     forward-compatibility libraries for the host's GPU (compat_orin for
//     Orin in CUDA 13.2 images), which are then prepended to
//     LD_LIBRARY_PATH.
//
// A refusal names the host's version, what the image needs, the family
// image that fits and the JetPack to upgrade to. The chosen binary replaces
// the entrypoint by execve, with every argument and the environment, so the
// router becomes PID 1. For an image that is not for a Jetson, when
// /usr/local/cuda/compat exists and the driver's CUDA version is older than
// the image's, that folder is prepended to LD_LIBRARY_PATH.
//
// # Explain
//
// A first argument --explain, or JETBAKE_EXPLAIN=1, prints as indented JSON
// every source tried and its result, the host facts, each candidate binary
// with whether it runs and why, and the choice or the failure, and exits 0
// without exec.
//
// # Evidence
//
// Evidence that this image works on this Jetson, for `jetbake evidence
// add`, is jetbake-probe's job (package entrypoint/probe), a binary of its
// own in the same folder: docker run --runtime nvidia --entrypoint
// jetbake-probe IMAGE --smoke --kernel --serve /model --out FILE.
//
// --explain is the entrypoint's only flag, and only as the first argument:
// every other argument belongs to the router.
package main
