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
// library, compute_cap, imagespec and evidencespec, and is stripped to under
// 3 MB, so that it runs in any image and decides in well under a millisecond
// when no driver query is needed (BenchmarkDetectAndPick). A static binary
// cannot dlopen libcuda.so.1, so the driver query lives in a second binary,
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
// without exec.
//
// # Probe: evidence from real hardware
//
// A first argument --probe, followed by --smoke and --out FILE in any
// order, writes evidence that this exact image works on this Jetson, for
// `jetbake evidence add`. It detects as --explain does but ignores
// JETBAKE_COMPUTE_CAP and JETBAKE_SKIP_L4T_CHECK, and writes JSON (stdout,
// or FILE through a temporary file and a rename) with an allow-listed
// profile and nothing else: schema_version; generated_at; the image's
// release, tags and digest (JETBAKE_IMAGE_DIGEST, which the pipeline sets to
// the digest it pulled, else the description's digest field); the jetbake
// revision; the host's architecture, L4T release (parsed, as 36.4.3), JetPack,
// device class, SoC, compute capability and the driver's CUDA version; and
// the result: the binary that would be chosen and the checks
// image-description, image-digest, architecture, jetson-soc, device-class,
// l4t-release, l4t-matches-image, cuda-driver, gpu-matches-soc,
// binary-chosen and smoke, each passed, failed or skipped. With --smoke the
// chosen binary runs with the description's smoke arguments (--version when
// it names none), its output on stderr, and its exit status is recorded;
// without, the smoke check is skipped. The result is a pass only when every
// check passed. The device class comes from a fixed allow-list of module
// part numbers and model words (moduleClasses): the raw model string, which
// can carry a serial number, is never written, nor are environment variables,
// host or user names, addresses, paths or tokens. Every value copied from the
// image passes a strict form check or is left out. The exit status is 0 for a
// pass, 1 otherwise and 2 for bad arguments. Package evidencespec defines the
// JSON, which builder/evidence reads with the same types.
//
// --explain and --probe (with --smoke and --out) are the entrypoint's only
// flags, and only as the first arguments: every other argument belongs to
// the router.
package main
