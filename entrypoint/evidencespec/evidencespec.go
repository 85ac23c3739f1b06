// Package evidencespec defines the hardware evidence that
// `jetbake-probe` writes and that jetbake's builder/evidence
// package reads: one JSON object naming the image, profiling the host and
// listing the probe's checks.
//
// The evidence is an allow-listed profile. Nothing may be added to it that
// identifies a person or a machine: no environment variables, host names,
// user names, addresses, serial numbers, paths or tokens. The probe fills
// these types from parsed values and fixed phrases only, and the builder
// refuses any field or value of another form.
//
// It imports only the standard library so that the entrypoint stays small.
package evidencespec

// SchemaVersion is the version of the evidence the probe writes and the
// builder reads.
const SchemaVersion = 1

// Status is the outcome of one check of the probe.
type Status string

// The statuses of a check. The result is a pass only when every check passed.
const (
	// Passed says the check held.
	Passed Status = "passed"
	// Failed says the check did not hold.
	Failed Status = "failed"
	// Skipped says the check could not run, which proves nothing.
	Skipped Status = "skipped"
)

// The values of Image.DigestSource, which say where the probe read the
// image's digest.
const (
	// DigestFromEnv says the digest came from the JETBAKE_IMAGE_DIGEST
	// environment variable, which the pipeline sets to the digest it pulled
	// the image by. It is also the name of the variable the probe reads.
	DigestFromEnv = "JETBAKE_IMAGE_DIGEST"
	// DigestFromImage says the digest came from the digest field of the
	// image's description, /etc/jetbake/image.json.
	DigestFromImage = "image.json"
)

// Evidence is the whole document: an allow-listed profile of the image and
// the host, and the result.
type Evidence struct {
	// SchemaVersion is SchemaVersion.
	SchemaVersion int `json:"schema_version"`
	// GeneratedAt is when the probe ran, in RFC 3339 form in UTC.
	GeneratedAt string `json:"generated_at"`
	// Image names the image the probe ran in.
	Image ProbedImage `json:"image"`
	// Revision is the jetbake source revision the image was built from.
	Revision string `json:"revision,omitempty"`
	// Host is the host's profile.
	Host Host `json:"host"`
	// Result is the chosen binary, the checks and the smoke run.
	Result Result `json:"result"`
	// Audit is the build-time audit of the image's GPU code, per SM
	// target. The probe never writes it: `jetbake evidence add` copies it,
	// when it admits the evidence, from what jetbake knows of the image
	// (the build metadata's releases[].audit, or the image's
	// io.jetbake.audit annotation). Evidence stored before it existed has
	// none.
	Audit []Audit `json:"audit,omitempty"`
}

// The values of Audit.From: where jetbake read the audit.
const (
	// AuditFromMetadata: the build metadata's releases[].audit, which
	// judged the router binaries and the libraries they load.
	AuditFromMetadata = "build-metadata"
	// AuditFromAnnotation: the image's io.jetbake.audit annotation, which
	// says the router binaries' verdicts only.
	AuditFromAnnotation = "annotation"
)

// AuditSources are the values Audit.From may take.
func AuditSources() []string { return []string{AuditFromMetadata, AuditFromAnnotation} }

// Audit is the build-time audit's result for one SM target of the image:
// whether the audit found GPU code that runs there.
type Audit struct {
	// SM is the target, such as "8.7".
	SM string `json:"sm"`
	// Verdict is the audit's word: "runs", "JIT", "no code", or "none"
	// when no file read for the SM holds a CUDA fat binary (the words of
	// io.jetbake.audit).
	Verdict string `json:"verdict"`
	// From is one of AuditSources.
	From string `json:"from"`
}

// ProbedImage names the image the probe ran in.
type ProbedImage struct {
	// Release is the matrix release name from the image's description.
	Release string `json:"release,omitempty"`
	// Tags are the references from the image's description. The probe
	// always writes the list, empty or not.
	Tags []string `json:"tags"`
	// Digest is the image's digest, such as "sha256:c2ef...".
	Digest string `json:"digest,omitempty"`
	// DigestSource says where the probe read the digest: DigestFromEnv or
	// DigestFromImage.
	DigestSource string `json:"digest_source,omitempty"`
	// Kind is KindApp for an app image; empty for a router's.
	Kind string `json:"kind,omitempty"`
}

// Host is the host's profile, built from parsed values only.
type Host struct {
	// Architecture is the entrypoint's architecture, "arm64" on a Jetson.
	Architecture string `json:"architecture"`
	// L4T is the Jetson Linux release, such as "36.4.3".
	L4T string `json:"l4t,omitempty"`
	// JetPack is the JetPack derived from L4T, such as "6.2".
	JetPack string `json:"jetpack,omitempty"`
	// DeviceClass is the module, such as "Jetson AGX Orin", from a fixed
	// allow-list: never the raw device-tree model.
	DeviceClass string `json:"device_class,omitempty"`
	// SoC is the device-tree name of the SoC, such as "tegra234".
	SoC string `json:"soc,omitempty"`
	// ComputeCapability is the GPU's, such as "8.7".
	ComputeCapability string `json:"compute_capability,omitempty"`
	// CUDADriver is the CUDA version of the driver, such as "12.6".
	CUDADriver string `json:"cuda_driver,omitempty"`
}

// Result is what the probe found.
type Result struct {
	// Pass is true exactly when every check passed.
	Pass bool `json:"pass"`
	// Binary is the router binary that would be chosen, when one would.
	Binary *Binary `json:"binary,omitempty"`
	// Checks are the probe's checks, in order.
	Checks []Check `json:"checks"`
	// Smoke is the smoke run, when --smoke asked for it and a binary was
	// chosen.
	Smoke *Smoke `json:"smoke,omitempty"`
	// Kernel is the CUDA kernel check's run, when --kernel asked for it
	// and the check ran.
	Kernel *Kernel `json:"kernel,omitempty"`
	// Serve is the serving check's run, when --serve asked for it and the
	// router was started.
	Serve *Serve `json:"serve,omitempty"`
}

// Binary is the router binary that would be chosen.
type Binary struct {
	// SM is the compute capability it was built for, such as "8.7".
	SM string `json:"sm"`
	// Name is its file name, such as "router-87".
	Name string `json:"name,omitempty"`
}

// Check is one named check of the probe.
type Check struct {
	// Name names the check, such as "cuda-driver".
	Name string `json:"name"`
	// Status is Passed, Failed or Skipped.
	Status Status `json:"status"`
	// Detail says what was found. The probe writes it from fixed phrases
	// and parsed values only (letters, digits, spaces and . , : ; ( ) _ '
	// + = -), never from text read on the host.
	Detail string `json:"detail"`
}

// Smoke is the smoke run of the chosen binary.
type Smoke struct {
	// Args are the router's arguments, such as ["--version"], when each is
	// a safe token.
	Args []string `json:"args,omitempty"`
	// ExitCode is the router's exit status, when it ran to an end.
	ExitCode *int `json:"exit_code,omitempty"`
}

// CheckCUDAKernel names the check that --kernel adds: a CUDA kernel,
// JIT-compiled by the host's driver from PTX, ran on the GPU and every value
// it computed is exact. Without --kernel the check is absent.
const CheckCUDAKernel = "cuda-kernel"

// KernelStepResults is the Kernel.Step of a kernel that ran but computed
// values that are wrong or not finite.
const KernelStepResults = "results"

// Kernel is the run of the CUDA kernel check (jetbake-cudaprobe --kernel).
// Its check, CheckCUDAKernel, says whether it passed.
type Kernel struct {
	// SM is the compute capability of the GPU the kernel ran on, as the
	// driver reported it, such as "8.7"; empty when the driver did not
	// answer.
	SM string `json:"sm,omitempty"`
	// Elements is how many values the kernel computed.
	Elements int `json:"elements"`
	// Step is what failed, one of KernelSteps; empty on a pass.
	Step string `json:"step,omitempty"`
	// Error is the CUDA error of the failed call, such as
	// "CUDA_ERROR_INVALID_PTX"; empty on a pass, for wrong values, and
	// for a code without a name.
	Error string `json:"error,omitempty"`
	// Wrong and NonFinite count the values that were finite but not the
	// expected ones, and those that were NaN or infinite.
	Wrong     int `json:"wrong,omitempty"`
	NonFinite int `json:"non_finite,omitempty"`
	// JITMillis is how long the driver took to compile the PTX,
	// KernelMillis the launch until the GPU was done, and TotalMillis the
	// whole check from cuInit on, in milliseconds.
	JITMillis    float64 `json:"jit_ms"`
	KernelMillis float64 `json:"kernel_ms"`
	TotalMillis  float64 `json:"total_ms"`
}

// KernelSteps are the values Kernel.Step may take, in the order the check
// takes them: loading the library ("dlopen", "dlsym"), the driver calls as
// cuda.h names them, and KernelStepResults.
func KernelSteps() []string {
	return []string{"dlopen", "dlsym", "cuInit", "cuDeviceGet", "cuDeviceGetAttribute", "cuDriverGetVersion",
		"cuDevicePrimaryCtxRetain", "cuCtxSetCurrent", "cuModuleLoadDataEx", "cuModuleGetFunction", "cuMemAlloc",
		"cuMemcpyHtoD", "cuLaunchKernel", "cuCtxSynchronize", "cuMemcpyDtoH", KernelStepResults,
		"cuMemFree", "cuModuleUnload", "cuDevicePrimaryCtxRelease"}
}

// CheckServe names the check that --serve adds: the chosen router, started
// with a model on 127.0.0.1 with TEI's own flags, answered GET /health,
// GET /info and POST /embed with finite vectors of the model's hidden size,
// and stopped on SIGTERM. Without --serve the check is absent.
const CheckServe = "serve"

// The values of Serve.Step: the part of the serving check that failed.
const (
	// ServeStepStart: the router could not be started, or it ended before
	// it answered GET /health (the compute-cap refusal, a model folder
	// without config.json).
	ServeStepStart = "start"
	// ServeStepHealth: it did not answer GET /health in time (a slow load).
	ServeStepHealth = "health"
	// ServeStepInfo: GET /info did not answer with TEI's model info.
	ServeStepInfo = "info"
	// ServeStepEmbed: POST /embed failed or answered something else than
	// vectors.
	ServeStepEmbed = "embed"
	// ServeStepShape: the vectors are not one per input of the model's
	// hidden size.
	ServeStepShape = "shape"
	// ServeStepFinite: a value is NaN or infinite.
	ServeStepFinite = "finite"
	// ServeStepStop: the router ignored SIGTERM and was killed.
	ServeStepStop = "stop"
)

// ServeSteps are the values Serve.Step may take, in the order the check
// takes them.
func ServeSteps() []string {
	return []string{ServeStepStart, ServeStepHealth, ServeStepInfo, ServeStepEmbed, ServeStepShape, ServeStepFinite, ServeStepStop}
}

// Serve is the run of the serving check (--serve). It keeps sizes, the
// model's dtype and times only: never the model folder's path.
type Serve struct {
	// ModelID is the model's Hub id ("BAAI/bge-small-en-v1.5") when the
	// router was asked to download it (--allow-download) and the id is a
	// safe token; empty for a local folder, whose path is not kept.
	ModelID string `json:"model_id,omitempty"`
	// Dimensions is the model's hidden_size, which every vector must have;
	// 0 when its config.json gives none.
	Dimensions int `json:"dimensions"`
	// DType is the model_dtype GET /info reported, "float16" or "float32".
	DType string `json:"dtype,omitempty"`
	// Requests is how many POST /embed requests were answered with vectors.
	Requests int `json:"requests"`
	// Step is what failed, one of ServeSteps; empty on a pass.
	Step string `json:"step,omitempty"`
	// LoadMillis is the time from the router's start until GET /health
	// answered 200, and P50Millis and P95Millis the median and 95th
	// percentile of the POST /embed requests, in milliseconds.
	LoadMillis float64 `json:"load_ms"`
	P50Millis  float64 `json:"p50_ms"`
	P95Millis  float64 `json:"p95_ms"`
}
