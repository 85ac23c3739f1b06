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
// Package computecap/host reads the host as a container sees it, the same
// code jetbake doctor and jetbake pick --sysroot use; the entrypoint keeps
// its facts (host.Facts) as they are and adds what the sources answered.
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
// CUDA the table gives for the host's L4T release. Elsewhere, and with
// --probe, the sources are tried in order, each reporting what it found or
// why not:
//
//  1. JETBAKE_COMPUTE_CAP, a manual override such as "8.7" (first on both
//     paths).
//  2. The CUDA driver API, through jetbake-cudaprobe (below).
//  3. nvidia-smi --query-gpu=compute_cap, when present. JetPack 6 answers
//     "[N/A]" and JetPack 5 has no nvidia-smi: both move on.
//  4. The Tegra device tree (/proc/device-tree/compatible, its first SoC
//     entry), when visible, and /sys/devices/soc0/soc_id, mapped to the
//     SoC's GPU by the table.
//
// A GPU found only from soc_id or the device tree counts as usable only
// when the NVIDIA runtime left a trace: an answer from the driver,
// nv_tegra_release or a GPU device node. --explain says which path was
// taken and why ("path" and "path_why").
//
// # Why two binaries
//
// jetbake-entrypoint is static (CGO_ENABLED=0), imports only the standard
// library, computecap (with computecap/host), imagespec and evidencespec,
// and is stripped to under 3 MB, so that it runs in any image and decides in
// well under a millisecond when no driver query is needed
// (BenchmarkDetectAndPick). A static binary cannot dlopen libcuda.so.1, so
// the driver query lives in a second binary, jetbake-cudaprobe, built with
// purego (also CGO_ENABLED=0, but dynamically linked against the C library's
// loader, which every CUDA image has). The entrypoint runs the probe only
// when it finds libcuda.so.1 under the root (computecap/host's
// FindLibcuda), in the driver folders of computecap's table, the newest
// JetPack's first (/opt/nvidia/l4t-gpu-libs/nvgpu and .../openrm on
// JetPack 7.2, /usr/lib/aarch64-linux-gnu/nvidia on JetPack 6 to 7.1,
// .../tegra on JetPack 5), then /usr/lib/aarch64-linux-gnu,
// /usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/lib/wsl/lib, the entries of
// LD_LIBRARY_PATH and last /usr/local/cuda/compat (the image's own
// forward-compatibility driver, which is not the host's), and the probe
// exists: next to the entrypoint's
// own executable, or at JETBAKE_CUDAPROBE. The probe gets the library's path
// as its argument, calls cuInit, cuDeviceGet, cuDeviceGetAttribute (75 and
// 76) and cuDriverGetVersion, and prints
// {"major":8,"minor":7,"driver_version":12060}, or exits non-zero with a
// one-line reason; with --driver-version first it calls cuDriverGetVersion
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
// # Probe: evidence from real hardware
//
// A first argument --probe, followed by --smoke, --kernel, --serve MODEL
// (with --allow-download and --load-timeout DURATION) and --out FILE in
// any order, writes evidence that this exact image works on this Jetson, for
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
// l4t-release, l4t-matches-image (the host rule above), cuda-driver,
// gpu-matches-soc,
// binary-chosen, cuda-kernel (only with --kernel), smoke and serve (only
// with --serve), each passed, failed or skipped. With --kernel, jetbake-cudaprobe --kernel runs a CUDA
// kernel on the GPU through the host's driver: the driver JIT-compiles a
// small PTX kernel for the GPU's own SM, runs it on 4096 floats and the
// probe checks every value is finite and exact; the check names the driver
// call that failed and its CUDA error (CUDA_ERROR_INVALID_PTX,
// CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_LAUNCH_FAILED, ...), and result.kernel
// keeps the SM it ran on, the failed step, the error's name and the JIT,
// kernel and total times (60 seconds at most). With --smoke the
// chosen binary runs with the description's smoke arguments (--version when
// it names none), its output on stderr, and its exit status is recorded;
// without, the smoke check is skipped. With --serve MODEL the chosen binary
// is started as the router it is, with TEI's flags --model-id MODEL
// --hostname 127.0.0.1 --port (a free port), its output on stderr; the
// probe waits for GET /health (5 minutes, or --load-timeout), reads GET
// /info, sends POST /embed 20 times with fixed inputs, checks one vector per
// input of the model's hidden_size (its config.json) with every value
// finite (TEI's JSON writes NaN as null), then stops it with SIGTERM and,
// 10 seconds later, SIGKILL. MODEL is a folder in the container; a Hub id
// is handed to the router to download only with --allow-download.
// result.serve keeps the dimensions, the dtype /info reported, the request
// count, the failed step and the load time and p50 and p95 latencies, and
// the model id only when it is a Hub id: never the folder's path. The
// HTTP client is a small one over syscall sockets (httpclient.go,
// loopback_linux.go): net/http would triple the binary. The result is a pass only when every
// check passed. The device class comes from the module part numbers and
// board-name words of the SoC rows of computecap's table; when neither the
// part number nor the board name is visible it is the SoC's class ("Jetson
// Orin"), which passes. The raw board name, which can carry a serial
// number, is never written, nor are environment variables,
// host or user names, addresses, paths or tokens. Every value copied from the
// image passes a strict form check or is left out. The exit status is 0 for a
// pass, 1 otherwise and 2 for bad arguments. Package evidencespec defines the
// JSON, which builder/evidence reads with the same types.
//
// --explain and --probe (with its flags above) are the entrypoint's only
// flags, and only as the first arguments: every other argument belongs to
// the router.
package main
