package evidencespec

import "strings"

// KindApp is Image.Kind for an app image (issue 33: a Python app on a
// framework container, /etc/jetbake/image.json's kind "app"); a router's
// evidence leaves Kind empty.
const KindApp = "app"

// CheckApp names the check the probe adds for an app image: the app check
// its image description names (check "pytorch": the app's python imports
// torch, finds CUDA and a Jetson GPU, and a small CUDA matrix product is
// finite). An app's evidence is "supported" only with it passed.
const CheckApp = "app"

// AppCheckPyTorch is the only app check the probe knows.
const AppCheckPyTorch = "pytorch"

// The app check's phrases. A detail holds no '/' and no text of the
// host's, so a python error is named by one of AppErrors' phrases, and
// the raw line goes only to the probe's stderr.
const (
	DetailAppNoBinary   = "not run: the host does not meet the image's rules"
	DetailAppUnknown    = "the image names an app check this probe does not know: use the jetbake-probe of the jetbake that built it"
	DetailAppNoPython   = "no python for the app: none next to its command, no venv python and no python3 on PATH"
	DetailAppTimeout    = "the app check's python gave no answer within {duration}"
	DetailAppSignal     = "the app check's python was killed by a signal"
	DetailAppNoStart    = "the app check's python could not be started"
	DetailAppNoLine     = "the app check's python exited {exit} without a result line: run the image's python for its error"
	DetailAppIncoherent = "the app check's line does not hold together"
	DetailAppFailed     = "{appstep} failed: {apperror}"
	DetailAppCPUTorch   = "torch.version.cuda is None: this torch was built without CUDA, it is not the base's: keep the vendor torch"
	DetailAppNoCUDA     = "torch.cuda.is_available() is False for torch built for CUDA {cuda}: start the container with --runtime nvidia"
	DetailAppNotJetson  = "torch's device 0 is not a Jetson GPU"
	DetailAppNonFinite  = "a CUDA matrix product in torch gave values that are not finite on SM {sm}"
	DetailAppPassed     = "torch for CUDA {cuda} sees the Jetson {family} GPU (SM {sm}) and a CUDA matrix product on it is finite"
)

// AppSteps are the steps of the app check, in order, as its python
// snippet names them: the key, and the words a detail uses.
func AppSteps() map[string]string {
	return map[string]string{
		"import":    "import torch",
		"available": "torch.cuda.is_available()",
		"device":    "torch.cuda.get_device_name(0)",
		"matmul":    "a CUDA matrix product",
	}
}

// AppUnknownError is the {apperror} of an error none of AppErrors names.
const AppUnknownError = "an error the probe does not name: its output says which"

// AppErrors name the errors a PyTorch app meets on a Jetson: a part of the
// python's error line, and the phrase the evidence says with the fix.
func AppErrors() [][2]string {
	return [][2]string{
		{"no kernel image is available for execution on the device",
			"CUDA error: no kernel image is available for execution on the device: this torch holds no code for the GPU's SM, take the base's torch"},
		{"named symbol not found",
			"CUDA error: named symbol not found: a library was built for SBSA servers, not the L4T runtime; build it for the Jetson"},
		{"No module named 'torch'",
			"No module named 'torch': the app's python does not see the base's torch; make its venv with --system-site-packages"},
		{"Found no NVIDIA driver",
			"Found no NVIDIA driver on your system: start the container with --runtime nvidia"},
		{"CUDA driver version is insufficient",
			"CUDA driver version is insufficient for CUDA runtime version: the host's driver is older than the image's CUDA"},
		{"out of memory", "CUDA out of memory: free memory on the Jetson and run the probe again"},
		{"cannot open shared object file", "a shared library could not be loaded: cannot open shared object file"},
	}
}

// AppError is the phrase for a python error line: the first of AppErrors
// whose part it holds, else AppUnknownError.
func AppError(line string) string {
	for _, e := range AppErrors() {
		if strings.Contains(line, e[0]) {
			return e[1]
		}
	}
	return AppUnknownError
}

// appPhrases are the app check's phrases.
func appPhrases() []string {
	return []string{DetailAppNoBinary, DetailAppUnknown, DetailAppNoPython, DetailAppTimeout, DetailAppSignal, DetailAppNoStart,
		DetailAppNoLine, DetailAppIncoherent, DetailAppFailed, DetailAppCPUTorch, DetailAppNoCUDA, DetailAppNotJetson, DetailAppNonFinite, DetailAppPassed}
}

// appStep reports whether s is the words of one of AppSteps.
func appStep(s string) bool {
	for _, w := range AppSteps() {
		if s == w {
			return true
		}
	}
	return false
}

// appError reports whether s is one of AppErrors' phrases or AppUnknownError.
func appError(s string) bool {
	return s == AppUnknownError || AppError(s) == s
}
