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
// router binaries) is read under a root directory that defaults to "/" and
// is set by JETBAKE_SYSROOT, for tests and debugging.
//
// # Detection
//
// The sources are tried in order; each reports what it found or why not:
//
//  1. JETBAKE_COMPUTE_CAP, a manual override such as "8.7".
//  2. The CUDA driver API, through jetbake-cudaprobe (below).
//  3. nvidia-smi --query-gpu=compute_cap, when present. JetPack 6 answers
//     "[N/A]" and JetPack 5 has no nvidia-smi: both move on.
//  4. The Tegra device tree (/proc/device-tree/compatible, SoC last) and
//     /sys/devices/soc0/soc_id, mapped to the SoC's GPU by compute_cap.
//
// It also reads the host's Jetson Linux release from /etc/nv_tegra_release,
// the board name from /proc/device-tree/model and which GPU device nodes
// exist under /dev. A Tegra device tree is visible in every container, so a
// GPU found only there counts as usable only when the NVIDIA runtime left a
// trace: nv_tegra_release or a GPU device node.
//
// # Why two binaries
//
// jetbake-entrypoint is static (CGO_ENABLED=0), imports only the standard
// library, compute_cap and imagespec, and is stripped to under 3 MB, so that
// it runs in any image and decides in well under a millisecond when no driver
// query is needed (BenchmarkDetectAndPick). A static binary cannot dlopen
// libcuda.so.1, so the driver query lives in a second binary,
// jetbake-cudaprobe, built with purego (also CGO_ENABLED=0, but dynamically
// linked against the C library's loader, which every CUDA image has). The
// entrypoint runs the probe only when it finds libcuda.so.1 under the root,
// in /usr/lib/aarch64-linux-gnu/nvidia, /usr/lib/aarch64-linux-gnu,
// /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/lib/wsl/lib, the entries of
// LD_LIBRARY_PATH and last /usr/local/cuda/compat (the image's own
// forward-compatibility driver, which is not the host's), and the probe
// exists: next to the entrypoint's own executable, or at JETBAKE_CUDAPROBE.
// The probe gets the library's path as its only argument, calls cuInit,
// cuDeviceGet, cuDeviceGetAttribute (75 and 76) and cuDriverGetVersion, and
// prints {"major":8,"minor":7,"driver_version":12060}, or exits non-zero with
// a one-line reason. It gets 5 seconds, as does nvidia-smi. cuInit dominates
// the start-up time when the probe runs (about 0.25 s on an H200).
//
// # Choice and exec
//
// compute_cap.Pick chooses among the image's targets. Before that, a host
// whose L4T major differs from the image's (a JetPack 6 image on an R35 or
// R38 host) is refused with the image to use instead, unless
// JETBAKE_SKIP_L4T_CHECK=1. The chosen binary replaces the entrypoint by
// execve, with every argument and the environment, so the router becomes
// PID 1. When /usr/local/cuda/compat exists and the driver's CUDA version is
// older than the image's, that folder is prepended to LD_LIBRARY_PATH.
//
// # Explain
//
// A first argument --explain, or JETBAKE_EXPLAIN=1, prints as indented JSON
// every source tried and its result, the host facts, each candidate binary
// with whether it runs and why, and the choice or the failure, and exits 0
// without exec. --explain is the entrypoint's only flag: every other argument
// belongs to the router.
package main
