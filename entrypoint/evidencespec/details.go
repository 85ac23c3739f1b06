package evidencespec

import (
	"strings"
	"time"
)

// A check's detail is one of the fixed phrases of that check below, its
// {slots} filled with parsed values (Fill). That is the structure of the
// allow-list: the probe writes details only with Fill, and the builder
// admits a detail only when it is one of its check's phrases with every
// slot holding a value of the slot's form (ValidDetail). A host name, an
// address, a path or a serial number fits no slot, so evidence cannot
// carry one, however the file was made.

// The phrases, by check. A phrase is fixed text with {slot} placeholders;
// the slots are listed in slotForms.
const (
	DetailImageRead        = "read and valid"
	DetailImageUnusable    = "the image description is missing or not usable: run --explain for why"
	DetailDigestEnvBad     = DigestFromEnv + " is not a digest: want sha256: and 64 lowercase hex digits"
	DetailDigestDiffers    = DigestFromEnv + " differs from the digest in the image description"
	DetailDigestFromEnv    = "from " + DigestFromEnv
	DetailDigestFromImage  = "from the image description"
	DetailDigestImageBad   = "the digest in the image description is not a sha256 digest"
	DetailDigestUnknown    = "the image's digest is unknown: set " + DigestFromEnv + " to the digest the image was pulled by"
	DetailArchArm64        = "arm64, as every Jetson"
	DetailArchOther        = "{arch} is not arm64: no Jetson runs it"
	DetailArchUnknown      = "this architecture is not arm64: no Jetson runs it"
	DetailSoCConflict      = "the device tree and soc_id name different SoCs"
	DetailSoCNone          = "no Jetson SoC in the device tree or soc_id: this is not a Jetson"
	DetailSoC              = "{soc}, Jetson {family}"
	DetailClassNoSoC       = "no Jetson SoC"
	DetailClassUnknown     = "the module is not one the entrypoint knows: add it to the SoC's row in computecap"
	DetailClassFromSoC     = "{class} (the module's part number and board name are not visible)"
	DetailClass            = "{class}"
	DetailL4T              = "L4T R{l4t}"
	DetailL4TJetPack       = "L4T R{l4t}, JetPack {jetpack}"
	DetailL4TUnreadable    = "nv_tegra_release does not read as an L4T release"
	DetailL4TMissing       = "no nv_tegra_release: start the container with --runtime nvidia"
	DetailRuleNoL4T        = "the image names no L4T release"
	DetailRuleUnknown      = "the host's L4T release and driver are unknown"
	DetailRuleRefused      = "the host has {host} but the image needs {need}"
	DetailRuleCompat       = "the host has {host}; the image's forward-compatibility libraries cover {need}"
	DetailRuleMet          = "the host has {host}; the image needs {need}"
	DetailDriverVersion    = "the driver reports CUDA {cuda}"
	DetailDriverAnswered   = "the driver reports SM {sm} and CUDA {cuda}"
	DetailDriverNoLibrary  = "libcuda.so.1 not found: start the container with --runtime nvidia"
	DetailDriverNoProbe    = "jetbake-cudaprobe is missing next to the entrypoint"
	DetailDriverFailed     = "the CUDA driver did not answer: run --explain for its error"
	DetailDriverNoDevice   = "the CUDA driver sees no GPU (CUDA_ERROR_NO_DEVICE) and no GPU device node is visible: start the container with --runtime nvidia"
	DetailDriverNoUse      = "the CUDA driver sees no GPU (CUDA_ERROR_NO_DEVICE) although GPU device nodes are there: check that the container's user can open them"
	DetailDriverNotAsked   = "the driver was not asked"
	DetailGPUNeeds         = "needs the driver's answer and the SoC"
	DetailGPUDiffers       = "the driver reports SM {sm} but {soc} has SM {sm}"
	DetailGPUMatches       = "SM {sm} is the GPU of {soc}"
	DetailBinaryNoImage    = "no image description"
	DetailBinaryChosen     = "a binary for SM {sm} runs on SM {sm}"
	DetailBinaryNoGPU      = "no GPU found: start the container with --runtime nvidia"
	DetailBinaryNoAccess   = "the container has no access to the GPU: start it with --runtime nvidia"
	DetailBinaryNone       = "no binary of the image runs on SM {sm}"
	DetailBinaryNoDevice   = "none: the CUDA driver sees no GPU"
	DetailSmokeNotAsked    = "not run: add --smoke to run the chosen binary"
	DetailSmokeNoBinary    = "no binary was chosen"
	DetailSmokeTimeout     = "no exit within {duration}"
	DetailSmokeSignal      = "the chosen binary was killed by a signal"
	DetailSmokeStartFailed = "the chosen binary could not be started"
	DetailSmokeExited      = "the chosen binary exited {exit}"
	// The CUDA kernel check (cuda-kernel, jetbake-cudaprobe --kernel).
	DetailKernelNoLibrary  = "not run: libcuda.so.1 not found: start the container with --runtime nvidia"
	DetailKernelNoProbe    = "not run: jetbake-cudaprobe is missing next to the entrypoint"
	DetailKernelTimeout    = "the CUDA probe gave no answer within {duration}"
	DetailKernelSignal     = "the CUDA probe was killed by a signal"
	DetailKernelNoStart    = "the CUDA probe could not be started"
	DetailKernelNoLine     = "the CUDA probe exited {exit} without a kernel check line"
	DetailKernelIncoherent = "the CUDA probe's line does not hold together"
	DetailKernelDlopen     = "the driver library could not be loaded (dlopen)"
	DetailKernelDlsym      = "the driver library lacks a call the kernel check makes (dlsym)"
	DetailKernelStep       = "{step} failed: {cudaerror} ({count})"
	DetailKernelStepHint   = "{step} failed: {cudaerror} ({count}): {hint}"
	DetailKernelResults    = "{count} wrong and {count} not finite of {count} values{on}{first}"
	// DetailKernelOn and DetailKernelFirst are the optional parts of
	// DetailKernelResults: its {on} and {first} slots hold "" or one of them.
	DetailKernelOn     = " on SM {sm}"
	DetailKernelFirst  = " (first at index {count}: got {float}, want {float})"
	DetailKernelPassed = "a PTX kernel JIT-compiled by the driver ran on SM {sm}: {count} of {count} values exact (JIT {ms}, kernel {ms})"
	// The serving check (serve, --serve MODEL): the router started with a
	// model, answered on TEI's routes (GET /health, GET /info, POST /embed:
	// "the health route" and so on, since a detail holds no '/') and stopped.
	DetailServeNoBinary   = "not run: no binary was chosen"
	DetailServeNoModel    = "not run: the model folder does not exist in the container: mount the folder into the container and give its path to --serve"
	DetailServeNoDownload = "not run: the model is not a folder in the container, and downloading it was not asked for: mount a folder, or add --allow-download"
	DetailServeNoStart    = "the router could not be started"
	DetailServeExited     = "the router exited {exit} before its health route answered"
	DetailServeSignal     = "the router was killed by a signal before its health route answered"
	DetailServeLoad       = "the router's health route did not answer within {duration}"
	DetailServeInfo       = "the info route did not answer with TEI's model info"
	DetailServeStatus     = "the embed route answered HTTP {status}"
	DetailServeNoAnswer   = "the embed route gave no answer within {duration}"
	DetailServeNotVectors = "the embed route did not answer with a list of vectors"
	DetailServeNoHidden   = "the model's config.json gives no hidden_size to check the vectors against"
	DetailServeCount      = "the embed route gave {count} vectors for {count} inputs"
	DetailServeShape      = "the embed route gave a vector of {count} values, but the model's hidden_size is {count}"
	DetailServeNonFinite  = "the embed route gave {count} values that are not finite (NaN or infinite, null in TEI's JSON)"
	DetailServeNoStop     = "the router served, but was still running {duration} after SIGTERM and was killed"
	DetailServePassed     = "{count} requests to the embed route gave finite vectors of {count} values (load {ms}, p50 {ms}, p95 {ms})"
)

// kernelSteps are the steps of the CUDA kernel check that a failure of a
// driver call can name: the calls of KernelSteps.
func kernelSteps() []string {
	var out []string
	for _, s := range KernelSteps() {
		if strings.HasPrefix(s, "cu") {
			out = append(out, s)
		}
	}
	return out
}

// KernelHints say what a CUDA error of the kernel check means on a Jetson,
// by the error's name: the probe's fixed phrases, the only text the slot
// {hint} holds.
func KernelHints() map[string]string {
	return map[string]string{
		"CUDA_ERROR_NO_DEVICE":               "no GPU is visible: start the container with --runtime nvidia",
		"CUDA_ERROR_STUB_LIBRARY":            "this is CUDA's stub, not the host's driver: start the container with --runtime nvidia",
		"CUDA_ERROR_INVALID_PTX":             "the driver's JIT could not compile the kernel for this GPU",
		"CUDA_ERROR_NO_BINARY_FOR_GPU":       "the driver has no code of the kernel for this GPU",
		"CUDA_ERROR_UNSUPPORTED_PTX_VERSION": "the driver is older than the kernel's PTX ISA",
		"CUDA_ERROR_JIT_COMPILER_NOT_FOUND":  "the driver's PTX JIT compiler library is not in the container",
		"CUDA_ERROR_OUT_OF_MEMORY":           "the GPU had no memory free for the kernel's 32 KB",
		"CUDA_ERROR_LAUNCH_FAILED":           "the kernel faulted on the GPU",
		"CUDA_ERROR_ILLEGAL_ADDRESS":         "the kernel faulted on the GPU",
		"CUDA_ERROR_LAUNCH_TIMEOUT":          "the kernel did not finish: the GPU may be hung",
	}
}

// kernelHint reports whether s is one of KernelHints' phrases.
func kernelHint(s string) bool {
	for _, h := range KernelHints() {
		if s == h {
			return true
		}
	}
	return false
}

// Phrases returns the phrases of every check the probe writes, by check
// name, in the probe's order of checks.
func Phrases() map[string][]string {
	return map[string][]string{
		"image-description": {DetailImageRead, DetailImageUnusable},
		"image-digest": {DetailDigestEnvBad, DetailDigestDiffers, DetailDigestFromEnv, DetailDigestFromImage,
			DetailDigestImageBad, DetailDigestUnknown},
		"architecture":      {DetailArchArm64, DetailArchOther, DetailArchUnknown},
		"jetson-soc":        {DetailSoCConflict, DetailSoCNone, DetailSoC},
		"device-class":      {DetailClassNoSoC, DetailClassUnknown, DetailClassFromSoC, DetailClass},
		"l4t-release":       {DetailL4T, DetailL4TJetPack, DetailL4TUnreadable, DetailL4TMissing},
		"l4t-matches-image": {DetailRuleNoL4T, DetailRuleUnknown, DetailRuleRefused, DetailRuleCompat, DetailRuleMet},
		"cuda-driver": {DetailDriverVersion, DetailDriverAnswered, DetailDriverNoLibrary, DetailDriverNoProbe,
			DetailDriverFailed, DetailDriverNoDevice, DetailDriverNoUse, DetailDriverNotAsked},
		"gpu-matches-soc": {DetailGPUNeeds, DetailGPUDiffers, DetailGPUMatches},
		"binary-chosen": {DetailBinaryNoImage, DetailBinaryChosen, DetailBinaryNoGPU, DetailBinaryNoAccess,
			DetailRuleRefused, DetailBinaryNone, DetailBinaryNoDevice},
		"smoke": {DetailSmokeNotAsked, DetailSmokeNoBinary, DetailSmokeTimeout, DetailSmokeSignal,
			DetailSmokeStartFailed, DetailSmokeExited},
		"cuda-kernel": {DetailKernelNoLibrary, DetailKernelNoProbe, DetailKernelTimeout, DetailKernelSignal, DetailKernelNoStart,
			DetailKernelNoLine, DetailKernelIncoherent, DetailKernelDlopen, DetailKernelDlsym, DetailKernelStep,
			DetailKernelStepHint, DetailKernelResults, DetailKernelPassed},
		CheckServe: {DetailServeNoBinary, DetailServeNoModel, DetailServeNoDownload, DetailServeNoStart, DetailServeExited,
			DetailServeSignal, DetailServeLoad, DetailServeInfo, DetailServeStatus, DetailServeNoAnswer, DetailServeNotVectors,
			DetailServeNoHidden, DetailServeCount, DetailServeShape, DetailServeNonFinite, DetailServeNoStop, DetailServePassed},
		CheckApp: appPhrases(),
	}
}

// Fill writes a phrase with its slots filled by values, in order. The
// probe passes only parsed values (versions, SMs, SoC names, the device
// class from the allow-list); a slot without a value stays empty, which no
// reader admits.
func Fill(phrase string, values ...string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(phrase, '{')
		if open < 0 {
			b.WriteString(phrase)
			return b.String()
		}
		end := strings.IndexByte(phrase[open:], '}') + open
		b.WriteString(phrase[:open])
		if len(values) > 0 {
			b.WriteString(values[0])
			values = values[1:]
		}
		phrase = phrase[end+1:]
	}
}

// ValidDetail reports whether detail is one of the phrases of check with
// every slot holding a value of its form.
func ValidDetail(check, detail string) bool {
	forms := slotForms()
	for _, p := range Phrases()[check] {
		if fits(p, detail, forms) {
			return true
		}
	}
	return false
}

// oneOf reports whether s is one of list.
func oneOf(s string, list []string) bool {
	for _, x := range list {
		if s == x {
			return true
		}
	}
	return false
}

// UnnamedCUDAError is the name the probe gives a CUresult that neither
// the driver nor its table names.
const UnnamedCUDAError = "CUDA error"

// IsCUDAErrorName reports whether s has the form of a CUresult's name:
// CUDA_ERROR_ and up to 50 capitals, digits and underscores. The probe's
// kernel line passes its error name into evidence only in that form.
func IsCUDAErrorName(s string) bool {
	rest, ok := strings.CutPrefix(s, "CUDA_ERROR_")
	if !ok || rest == "" || len(rest) > 50 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// milliseconds reports whether s is a time as the probe writes it:
// digits, a point, three digits and " ms".
func milliseconds(s string) bool {
	v, ok := strings.CutSuffix(s, " ms")
	whole, frac, dot := strings.Cut(v, ".")
	return ok && dot && digits(whole, 1, 7) && digits(frac, 3, 3)
}

// float reports whether s is a number as strconv.FormatFloat(v, 'g', -1,
// 32) writes it: "1.5", "-3", "1e+06", "NaN", "+Inf".
func float(s string) bool {
	if s == "NaN" || s == "+Inf" || s == "-Inf" {
		return true
	}
	if len(s) == 0 || len(s) > 16 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == '-' || c == '+') {
			return false
		}
	}
	return s[0] != 'e'
}

// slotForm is what one slot may hold: a value leaf accepts, or one of the
// phrases of forms (a composite slot, such as the host rule's wording).
type slotForm struct {
	leaf  func(string) bool
	forms []string
}

// slotForms are the slots of the phrases. The composite ones mirror how
// computecap's host rule writes a host and a need (HostVerdict.Host and
// Need), which the probe copies.
func slotForms() map[string]slotForm {
	return map[string]slotForm{
		"arch":      {leaf: goArch},
		"soc":       {leaf: func(s string) bool { return len(s) == 8 && strings.HasPrefix(s, "tegra") && digits(s[5:], 3, 3) }},
		"family":    {leaf: capitalWord},
		"class":     {leaf: deviceClass},
		"l4t":       {leaf: func(s string) bool { return version(s, 3, 3, 4) }},
		"l4tmm":     {leaf: func(s string) bool { return version(s, 2, 2, 4) }},
		"major":     {leaf: func(s string) bool { return digits(s, 1, 4) }},
		"jetpack":   {leaf: func(s string) bool { return version(s, 1, 3, 2) }},
		"cuda":      {leaf: func(s string) bool { return version(s, 2, 2, 2) }},
		"sm":        {leaf: func(s string) bool { return version(strings.TrimSuffix(s, "a"), 2, 2, 2) }},
		"exit":      {leaf: func(s string) bool { return digits(s, 1, 3) }},
		"status":    {leaf: func(s string) bool { return digits(s, 3, 3) }},
		"duration":  {leaf: goDuration},
		"count":     {leaf: func(s string) bool { return digits(s, 1, 8) }},
		"ms":        {leaf: func(s string) bool { return milliseconds(s) }},
		"step":      {leaf: func(s string) bool { return oneOf(s, kernelSteps()) }},
		"cudaerror": {leaf: func(s string) bool { return s == UnnamedCUDAError || IsCUDAErrorName(s) }},
		"hint":      {leaf: kernelHint},
		"on":        {forms: []string{"", DetailKernelOn}},
		"first":     {forms: []string{"", DetailKernelFirst}},
		"float":     {leaf: float},
		"appstep":   {leaf: appStep},
		"apperror":  {leaf: appError},
		"host": {forms: []string{"L4T R{l4t}", "L4T R{l4t} (JetPack {jetpack})", "a driver for CUDA {cuda}",
			"a driver for CUDA {cuda} on L4T R{l4t}", "a driver for CUDA {cuda} on L4T R{l4t} (JetPack {jetpack})"}},
		"need": {forms: []string{"L4T R{l4tmm} or a later R{major} release", "a driver for CUDA {cuda} or a later {major}.x"}},
	}
}

// fits reports whether s is phrase with its slots filled by values of
// their forms. It tries each length for a slot's value, shortest first; a
// detail is at most a few hundred bytes.
func fits(phrase, s string, forms map[string]slotForm) bool {
	open := strings.IndexByte(phrase, '{')
	if open < 0 {
		return phrase == s
	}
	if !strings.HasPrefix(s, phrase[:open]) {
		return false
	}
	end := strings.IndexByte(phrase[open:], '}') + open
	form, rest, s := forms[phrase[open+1:end]], phrase[end+1:], s[open:]
	// The value ends where the text after the slot starts.
	next := rest
	if i := strings.IndexByte(rest, '{'); i >= 0 {
		next = rest[:i]
	}
	first := 1 // a value is not empty, unless its form may be
	if form.leaf == nil && oneOf("", form.forms) {
		first = 0
	}
	for n := first; n <= len(s); n++ {
		if next == "" && rest == "" && n != len(s) || !strings.HasPrefix(s[n:], next) {
			continue
		}
		if form.holds(s[:n], forms) && fits(rest, s[n:], forms) {
			return true
		}
	}
	return false
}

// holds reports whether v is a value of the form.
func (f slotForm) holds(v string, forms map[string]slotForm) bool {
	if f.leaf != nil {
		return f.leaf(v)
	}
	for _, p := range f.forms {
		if fits(p, v, forms) {
			return true
		}
	}
	return false
}

// digits reports whether s is min to max ASCII digits.
func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// version reports whether s is min to max dot-separated numbers of at
// most width digits each.
func version(s string, min, max, width int) bool {
	parts := strings.Split(s, ".")
	if len(parts) < min || len(parts) > max {
		return false
	}
	for _, p := range parts {
		if !digits(p, 1, width) {
			return false
		}
	}
	return true
}

// capitalWord reports whether s is a word of 2 to 16 letters and digits
// that starts with a capital letter or a digit, as a Jetson family ("Orin",
// "TX2") or a word of a device class is.
func capitalWord(s string) bool {
	if len(s) < 1 || len(s) > 16 || !(s[0] >= 'A' && s[0] <= 'Z' || s[0] >= '0' && s[0] <= '9') {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// deviceClass reports whether s has the form of a device class of the
// allow-list: "Jetson", one to four capitalised words, and " (other
// module)" for a module the table does not know.
func deviceClass(s string) bool {
	rest, ok := strings.CutPrefix(s, "Jetson ")
	if !ok {
		return false
	}
	rest = strings.TrimSuffix(rest, " (other module)")
	words := strings.Split(rest, " ")
	if len(words) > 4 {
		return false
	}
	for _, w := range words {
		if !capitalWord(w) {
			return false
		}
	}
	return true
}

// goArch reports whether s is an architecture Go builds for, as
// runtime.GOARCH names it.
func goArch(s string) bool {
	switch s {
	case "386", "amd64", "arm", "arm64", "loong64", "mips", "mipsle", "mips64", "mips64le",
		"ppc64", "ppc64le", "riscv64", "s390x", "wasm":
		return true
	}
	return false
}

// goDuration reports whether s is a duration above zero as time.Duration
// writes it: "1m0s", "90s", "1.25s", "100ms"; at most 12 bytes.
func goDuration(s string) bool {
	if s == "" || len(s) > 12 {
		return false
	}
	d, err := time.ParseDuration(s)
	return err == nil && d > 0 && d.String() == s
}
