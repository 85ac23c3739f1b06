// Command jetbake-probe writes hardware evidence. Every image jetbake builds
// holds it next to jetbake-entrypoint and jetbake-cudaprobe; run it as
//
//	docker run --rm --runtime nvidia --entrypoint jetbake-probe -v $PWD:/out \
//	  -e JETBAKE_IMAGE_DIGEST=sha256:... IMAGE@sha256:... \
//	  --smoke --kernel --serve /model --out /out/evidence.json
//
// Its flags (package flag: -flag and --flag alike) are --smoke, --kernel,
// --serve MODEL (with --allow-download and --load-timeout DURATION) and
// --out FILE; --help lists them. It writes evidence that this exact image
// works on this Jetson, for `jetbake evidence add`. It detects as
// jetbake-entrypoint --explain does (package entrypoint/detect), always
// asking the driver itself (cuInit), but ignores JETBAKE_COMPUTE_CAP and
// JETBAKE_SKIP_L4T_CHECK, and writes JSON (stdout, or FILE through a
// temporary file and a rename, with renameio) with an allow-listed
// profile and nothing else: schema_version; generated_at; the image's
// release, tags and digest (JETBAKE_IMAGE_DIGEST, which the pipeline sets to
// the digest it pulled, else the description's digest field); the jetbake
// revision; the host's architecture, L4T release (parsed, as 36.4.3), JetPack,
// device class, SoC, compute capability and the driver's CUDA version; and
// the result: the binary that would be chosen and the checks
// image-description, image-digest, architecture, jetson-soc, device-class,
// l4t-release, l4t-matches-image (the host rule above), cuda-driver,
// gpu-matches-soc,
// binary-chosen, cuda-kernel (only with --kernel), app (only in an app
// image: image.json's kind "app"), smoke and serve (only with --serve),
// each passed, failed or skipped. The app check "pytorch" runs a python
// snippet with the app's python (next to the command, /opt/venv/bin/python,
// else python3 on PATH; 3 minutes at most): torch.cuda.is_available(),
// torch.version.cuda, the device's name and SM (the Jetson SoC's GPU), and
// a 4x4 CUDA matrix product whose values must be finite; a failure names
// its step and one of evidencespec.AppErrors' phrases (no kernel image,
// named symbol not found, no module named torch, ...), the raw error line
// going to stderr only. With --kernel, jetbake-cudaprobe --kernel runs a CUDA
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
// serving check's client is net/http's, without a proxy, on 127.0.0.1. The
// result is a pass only when every check passed. The device class comes
// from the module part numbers and board-name words of the SoC rows of computecap's table; when neither the
// part number nor the board name is visible it is the SoC's class ("Jetson
// Orin"), which passes. The raw board name, which can carry a serial
// number, is never written, nor are environment variables,
// host or user names, addresses, paths or tokens. Every value copied from the
// image passes a strict form check or is left out. The exit status is 0 for a
// pass, 1 otherwise and 2 for bad arguments. Package evidencespec defines the
// JSON, which builder/evidence reads with the same types.
//
// It is a binary of its own so that jetbake-entrypoint, which starts every
// container, stays small and static: net/http alone would triple the
// entrypoint, and every check it does not run is code it does not carry.
package main
