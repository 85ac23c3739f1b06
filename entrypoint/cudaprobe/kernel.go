package main

import (
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"
	"unsafe"
)

// kernelResult is the line the probe prints with --kernel, pass or not.
type kernelResult struct {
	// Pass is true when every call succeeded and every value is exact.
	Pass bool `json:"pass"`
	// SM is the compute capability of device 0, which ran the kernel, such as "8.7".
	SM string `json:"sm,omitempty"`
	// DriverVersion is cuDriverGetVersion's answer.
	DriverVersion int `json:"driver_version,omitempty"`
	// Kernel and Target name the PTX entry and its .target.
	Kernel string `json:"kernel"`
	Target string `json:"ptx_target"`
	// Elements is how many values the kernel computes.
	Elements int `json:"elements"`
	// Step is the call that failed, named as in cuda.h ("cuModuleLoadDataEx"),
	// "dlopen" or "dlsym" for the library, or "results" for values that are
	// wrong; empty on a pass.
	Step string `json:"step,omitempty"`
	// Error and Code are the CUresult of the failed call; Error is empty
	// when neither the driver nor the probe knows the code's name.
	Error string `json:"error,omitempty"`
	Code  int    `json:"code,omitempty"`
	// Wrong and NonFinite count the values that are not the expected ones:
	// finite but different, and NaN or infinite. FirstBad is the first of them.
	Wrong     int       `json:"wrong,omitempty"`
	NonFinite int       `json:"non_finite,omitempty"`
	FirstBad  *badValue `json:"first_bad,omitempty"`
	// JITMillis is cuModuleLoadDataEx (the driver's compilation),
	// KernelMillis the launch to the end of cuCtxSynchronize, TotalMillis
	// the whole check from cuInit on, in milliseconds.
	JITMillis    float64 `json:"jit_ms"`
	KernelMillis float64 `json:"kernel_ms"`
	TotalMillis  float64 `json:"total_ms"`
}

// badValue is a value the kernel got wrong, written as strconv writes a
// float32 ("NaN", "+Inf", "1025.25"): JSON has no NaN.
type badValue struct {
	Index int    `json:"index"`
	Got   string `json:"got"`
	Want  string `json:"want"`
}

// kernelAPI holds the driver calls of the kernel check, besides the device
// queries.
type kernelAPI struct {
	primaryCtxRetain  func(ctx *uintptr, dev int32) int32
	primaryCtxRelease func(dev int32) int32
	ctxSetCurrent     func(ctx uintptr) int32
	ctxSynchronize    func() int32
	moduleLoadDataEx  func(mod *uintptr, image unsafe.Pointer, numOptions uint32, options *int32, values *uintptr) int32
	moduleGetFunction func(fn *uintptr, mod uintptr, name string) int32
	moduleUnload      func(mod uintptr) int32
	memAlloc          func(dptr *uint64, size uintptr) int32
	memFree           func(dptr uint64) int32
	memcpyHtoD        func(dst uint64, src unsafe.Pointer, n uintptr) int32
	memcpyDtoH        func(dst unsafe.Pointer, src uint64, n uintptr) int32
	launchKernel      func(f uintptr, gx, gy, gz, bx, by, bz, sharedMem uint32, stream uintptr, params, extra *unsafe.Pointer) int32
}

// symbols are the calls to resolve, under the names cuda.h maps them to
// (cuMemAlloc is cuMemAlloc_v2: the unversioned symbols take 32-bit device
// pointers), older names after.
func (k *kernelAPI) symbols() []symbol {
	return []symbol{
		{[]string{"cuDevicePrimaryCtxRetain"}, &k.primaryCtxRetain},
		{[]string{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}, &k.primaryCtxRelease},
		{[]string{"cuCtxSetCurrent"}, &k.ctxSetCurrent},
		{[]string{"cuCtxSynchronize"}, &k.ctxSynchronize},
		{[]string{"cuModuleLoadDataEx"}, &k.moduleLoadDataEx},
		{[]string{"cuModuleGetFunction"}, &k.moduleGetFunction},
		{[]string{"cuModuleUnload"}, &k.moduleUnload},
		{[]string{"cuMemAlloc_v2"}, &k.memAlloc},
		{[]string{"cuMemFree_v2"}, &k.memFree},
		{[]string{"cuMemcpyHtoD_v2"}, &k.memcpyHtoD},
		{[]string{"cuMemcpyDtoH_v2"}, &k.memcpyDtoH},
		{[]string{"cuLaunchKernel"}, &k.launchKernel},
	}
}

// kernelRun is one run of the check: the driver, the result so far, what
// the driver or the loader said about a failure (the JIT's error log, or
// why the library is not usable) and the clean-ups still to do.
type kernelRun struct {
	ptx  string
	api  *driverAPI
	k    kernelAPI
	res  kernelResult
	log  string
	undo []func()
}

// runKernel loads the driver at path and runs the kernel check on device
// 0; it returns the result and what the driver or the loader said about a
// failure. The driver's current context belongs to a thread, so the whole
// run stays on one.
func runKernel(path string) (kernelResult, string) {
	return runKernelPTX(path, kernelPTX)
}

// runKernelPTX is runKernel with the kernel's PTX text given, for tests of
// how the driver reads PTX.
func runKernelPTX(path, ptx string) (kernelResult, string) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := time.Now()
	r := &kernelRun{ptx: ptx, res: kernelResult{Kernel: kernelName, Target: kernelTarget, Elements: elements}}
	r.run(path)
	for i := len(r.undo) - 1; i >= 0; i-- {
		r.undo[i]()
	}
	r.res.TotalMillis = millis(time.Since(start))
	r.res.Pass = r.res.Step == ""
	return r.res, r.log
}

// fail records the first failure; later ones (a clean-up after a fault
// returns the fault again) do not replace it.
func (r *kernelRun) fail(step string, code int32) {
	if r.res.Step != "" {
		return
	}
	r.res.Step, r.res.Code = step, int(code)
	if r.api != nil && code != 0 {
		r.res.Error = r.api.cudaName(code)
	}
}

// call reports whether code is CUDA_SUCCESS, recording a failure of step.
func (r *kernelRun) call(step string, code int32) bool {
	if code != 0 {
		r.fail(step, code)
	}
	return code == 0
}

// later queues a clean-up call, made at the end whatever happened.
func (r *kernelRun) later(step string, f func() int32) {
	r.undo = append(r.undo, func() { r.call(step, f()) })
}

// run takes the steps in order and stops at the first failure.
func (r *kernelRun) run(path string) {
	if !r.load(path) || !r.device() || !r.context() {
		return
	}
	fn, ok := r.module()
	if !ok {
		return
	}
	y, x, ok := r.buffers()
	if !ok || !r.launch(fn, y, x) {
		return
	}
	got := make([]float32, elements)
	if r.call("cuMemcpyDtoH", r.k.memcpyDtoH(unsafe.Pointer(&got[0]), y, elements*4)) {
		r.check(got)
	}
}

// load opens the library and resolves every call of the check.
func (r *kernelRun) load(path string) bool {
	api, err := load(path)
	if err != nil {
		step := "dlopen"
		if _, missing := err.(*missingError); missing {
			step = "dlsym"
		}
		r.fail(step, 0)
		r.log = err.Error()
		return false
	}
	r.api = api
	if err := api.resolve(r.k.symbols()); err != nil {
		r.fail("dlsym", 0)
		r.log = err.Error()
		return false
	}
	return true
}

// device asks for device 0, its SM and the driver's CUDA version.
func (r *kernelRun) device() bool {
	var dev, major, minor, version int32
	api := r.api
	ok := r.call("cuInit", api.cuInit(0)) && r.call("cuDeviceGet", api.cuDeviceGet(&dev, 0)) &&
		r.call("cuDeviceGetAttribute", api.cuDeviceGetAttribute(&major, attrComputeCapabilityMajor, dev)) &&
		r.call("cuDeviceGetAttribute", api.cuDeviceGetAttribute(&minor, attrComputeCapabilityMinor, dev)) &&
		r.call("cuDriverGetVersion", api.cuDriverGetVersion(&version))
	if ok {
		r.res.SM = strconv.Itoa(int(major)) + "." + strconv.Itoa(int(minor))
		r.res.DriverVersion = int(version)
	}
	return ok
}

// context makes device 0's primary context current, as the CUDA runtime
// does, and releases it at the end.
func (r *kernelRun) context() bool {
	var ctx uintptr
	if !r.call("cuDevicePrimaryCtxRetain", r.k.primaryCtxRetain(&ctx, 0)) {
		return false
	}
	r.later("cuDevicePrimaryCtxRelease", func() int32 { return r.k.primaryCtxRelease(0) })
	return r.call("cuCtxSetCurrent", r.k.ctxSetCurrent(ctx))
}

// JIT options of cuModuleLoadDataEx (CUjit_option in cuda.h).
const (
	jitErrorLogBuffer     = 5
	jitErrorLogBufferSize = 6
	jitLogSize            = 4096
)

// module has the driver compile the PTX and finds the kernel in it; the
// JIT's error log is kept for the report.
func (r *kernelRun) module() (uintptr, bool) {
	image := append([]byte(r.ptx), 0)
	logBuf := make([]byte, jitLogSize)
	var pinner runtime.Pinner
	defer pinner.Unpin()
	pinner.Pin(&logBuf[0])
	options := []int32{jitErrorLogBuffer, jitErrorLogBufferSize}
	values := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), jitLogSize}
	var mod, fn uintptr
	start := time.Now()
	code := r.k.moduleLoadDataEx(&mod, unsafe.Pointer(&image[0]), uint32(len(options)), &options[0], &values[0])
	r.res.JITMillis = millis(time.Since(start))
	runtime.KeepAlive(logBuf)
	if !r.call("cuModuleLoadDataEx", code) {
		r.log = cString(logBuf)
		return 0, false
	}
	r.later("cuModuleUnload", func() int32 { return r.k.moduleUnload(mod) })
	return fn, r.call("cuModuleGetFunction", r.k.moduleGetFunction(&fn, mod, kernelName))
}

// buffers allocates y and x on the device and copies x, and y filled with
// NaN so that a value the kernel does not write cannot pass.
func (r *kernelRun) buffers() (y, x uint64, ok bool) {
	const size = elements * 4
	if !r.call("cuMemAlloc", r.k.memAlloc(&y, size)) {
		return 0, 0, false
	}
	r.later("cuMemFree", func() int32 { return r.k.memFree(y) })
	if !r.call("cuMemAlloc", r.k.memAlloc(&x, size)) {
		return 0, 0, false
	}
	r.later("cuMemFree", func() int32 { return r.k.memFree(x) })
	hostX, hostY := make([]float32, elements), make([]float32, elements)
	for i := range hostX {
		hostX[i], hostY[i] = input(i), float32(math.NaN())
	}
	ok = r.call("cuMemcpyHtoD", r.k.memcpyHtoD(x, unsafe.Pointer(&hostX[0]), size)) &&
		r.call("cuMemcpyHtoD", r.k.memcpyHtoD(y, unsafe.Pointer(&hostY[0]), size))
	return y, x, ok
}

// launchArgs are the kernel's parameters; cuLaunchKernel reads each
// through a pointer.
type launchArgs struct {
	y, x uint64
	a, b float32
	n    uint32
}

// launch runs the kernel on the default stream and waits for it.
func (r *kernelRun) launch(fn uintptr, y, x uint64) bool {
	args := &launchArgs{y: y, x: x, a: coefA, b: coefB, n: elements}
	params := &[5]unsafe.Pointer{unsafe.Pointer(&args.y), unsafe.Pointer(&args.x),
		unsafe.Pointer(&args.a), unsafe.Pointer(&args.b), unsafe.Pointer(&args.n)}
	var pinner runtime.Pinner
	defer pinner.Unpin()
	pinner.Pin(args)
	pinner.Pin(params)
	start := time.Now()
	ok := r.call("cuLaunchKernel", r.k.launchKernel(fn, (elements+blockSize-1)/blockSize, 1, 1, blockSize, 1, 1, 0, 0, &params[0], nil)) &&
		r.call("cuCtxSynchronize", r.k.ctxSynchronize())
	r.res.KernelMillis = millis(time.Since(start))
	return ok
}

// check compares every value with the exact one.
func (r *kernelRun) check(got []float32) {
	for i, v := range got {
		want := expected(i)
		switch f := float64(v); {
		case math.IsNaN(f) || math.IsInf(f, 0):
			r.res.NonFinite++
		case v != want:
			r.res.Wrong++
		default:
			continue
		}
		if r.res.FirstBad == nil {
			r.res.FirstBad = &badValue{Index: i, Got: formatFloat(v), Want: formatFloat(want)}
		}
	}
	if r.res.Wrong+r.res.NonFinite > 0 {
		r.fail("results", 0)
	}
}

// describe is the failure as one sentence.
func (res *kernelResult) describe() string {
	switch {
	case res.Pass:
		return ""
	case res.Step == "results":
		return "the kernel's results are not exact: " + strconv.Itoa(res.Wrong) + " wrong and " +
			strconv.Itoa(res.NonFinite) + " not finite of " + strconv.Itoa(res.Elements) + " values (first at index " +
			strconv.Itoa(res.FirstBad.Index) + ": " + res.FirstBad.Got + ", want " + res.FirstBad.Want + ")"
	case res.Code == 0:
		return res.Step + " failed"
	}
	name := res.Error
	if name == "" {
		name = "CUDA error"
	}
	return res.Step + " failed: " + name + " (" + strconv.Itoa(res.Code) + ")"
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// formatFloat writes v as the shortest float32 that reads back as v.
func formatFloat(v float32) string { return strconv.FormatFloat(float64(v), 'g', -1, 32) }

// cString is the NUL-terminated text at the start of buf, trimmed.
func cString(buf []byte) string {
	if i := strings.IndexByte(string(buf), 0); i >= 0 {
		buf = buf[:i]
	}
	return strings.TrimSpace(string(buf))
}
