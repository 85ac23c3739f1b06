"""torch.cuda of jetbake's stand-in torch: the host's driver through ctypes."""
import ctypes
import os
import warnings

from torch import version as _version
from torch.cuda import _fatbin

_state = {}

_LIB = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "lib", "libtorch_cuda.so")

_NO_KERNEL = ("CUDA error: no kernel image is available for execution on the device\n"
              "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
              "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
              "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


def _compiled():
    return _version.cuda is not None and os.path.exists(_LIB)


def _driver():
    """The host's driver and its device count, or None with torch's warning."""
    if "driver" in _state:
        return _state["driver"]
    _state["driver"] = None
    if not _compiled():
        return None
    ctypes.CDLL(_LIB)  # torch loads its CUDA library at import, as real torch does
    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        warnings.warn("CUDA initialization: Found no NVIDIA driver on your system. Please check that you have "
                      "an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx")
        return None
    rc = lib.cuInit(0)
    if rc != 0:
        warnings.warn("CUDA initialization: Unexpected error from cudaGetDeviceCount(). Did you run some cuda "
                      "functions before calling NumCudaDevices() that might have already set an error? "
                      "Error %d: cuInit failed" % rc)
        return None
    ver = ctypes.c_int(0)
    lib.cuDriverGetVersion(ctypes.byref(ver))
    if ver.value // 1000 < int(_version.cuda.split(".")[0]):
        warnings.warn("CUDA initialization: The NVIDIA driver on your system is too old (found version %d). "
                      "Please update your GPU driver by downloading and installing a new version from the URL: "
                      "http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to "
                      "install a PyTorch version that has been compiled with your version of the CUDA driver."
                      % ver.value)
        return None
    count = ctypes.c_int(0)
    if lib.cuDeviceGetCount(ctypes.byref(count)) != 0 or count.value < 1:
        return None
    _state["driver"] = lib
    return lib


def is_available():
    return _driver() is not None


def device_count():
    lib = _driver()
    if lib is None:
        return 0
    count = ctypes.c_int(0)
    lib.cuDeviceGetCount(ctypes.byref(count))
    return count.value


def _lazy_init():
    if not _compiled():
        raise AssertionError("Torch not compiled with CUDA enabled")
    lib = _driver()
    if lib is None:
        raise RuntimeError("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU "
                           "and installed a driver from http://www.nvidia.com/Download/index.aspx")
    if "ctx" not in _state:
        _check_capability()
        ctx = ctypes.c_void_p()
        dev = ctypes.c_int(0)
        lib.cuDeviceGet(ctypes.byref(dev), 0)
        if lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) != 0 or lib.cuCtxSetCurrent(ctx) != 0:
            raise RuntimeError("CUDA error: initialization error")
        _state["ctx"] = ctx
    return lib


def _device(index):
    if index not in (None, 0) and index >= device_count():
        raise RuntimeError("CUDA error: invalid device ordinal")
    return 0


def get_device_capability(device=None):
    lib = _lazy_init()
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    lib.cuDeviceGetAttribute(ctypes.byref(major), 75, _device(device))
    lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, _device(device))
    return (major.value, minor.value)


def get_device_name(device=None):
    lib = _lazy_init()
    buf = ctypes.create_string_buffer(256)
    lib.cuDeviceGetName(buf, 256, _device(device))
    return buf.value.decode()


def get_arch_list():
    """The compiled arch list (torch._C._cuda_getArchFlags): sm_XY per cubin, compute_XY per PTX,
    each once, as the build's arch flags name them (a kernel built for one GPU alone, in a module of
    its own, adds no flag)."""
    if not _compiled():
        return []
    out = []
    for kind, arch in _fatbin.entries(_LIB):
        flag = "%s_%d" % ("sm" if kind == "cubin" else "compute", arch)
        if flag not in out:
            out.append(flag)
    return out


def _check_capability():
    major, minor = _capability_raw()
    arch = major * 10 + minor
    if arch not in [a for kind, a in _fatbin.entries(_LIB) if kind == "cubin"]:
        warnings.warn("\n%s with CUDA capability sm_%d is not compatible with the current PyTorch installation.\n"
                      "The current PyTorch install supports CUDA capabilities %s.\nIf you want to use the %s GPU "
                      "with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/\n"
                      % (_name_raw(), arch, " ".join(get_arch_list()), _name_raw()))


def _capability_raw():
    lib = _state["driver"]
    major, minor = ctypes.c_int(0), ctypes.c_int(0)
    lib.cuDeviceGetAttribute(ctypes.byref(major), 75, 0)
    lib.cuDeviceGetAttribute(ctypes.byref(minor), 76, 0)
    return major.value, minor.value


def _name_raw():
    buf = ctypes.create_string_buffer(256)
    _state["driver"].cuDeviceGetName(buf, 256, 0)
    return buf.value.decode()


def _launch(index):
    """A kernel launch: the library needs a cubin for the device's own SM (Tegra has no binary
    compatibility) or PTX for an SM at or below it, which the driver JIT-compiles."""
    _lazy_init()
    _device(index)
    major, minor = _capability_raw()
    arch = major * 10 + minor
    for kind, a in _fatbin.entries(_LIB):
        if (kind == "cubin" and a == arch) or (kind == "ptx" and a <= arch):
            return
    raise RuntimeError(_NO_KERNEL)


def _to_device(values, index):
    lib = _lazy_init()
    _device(index)
    n = max(len(values), 1)
    ptr = ctypes.c_ulonglong(0)
    rc = lib.cuMemAlloc_v2(ctypes.byref(ptr), ctypes.c_size_t(4 * n))
    if rc != 0:
        raise RuntimeError("CUDA error: out of memory" if rc == 2 else "CUDA error: %d" % rc)
    host = (ctypes.c_float * n)(*values)
    rc = lib.cuMemcpyHtoD_v2(ptr, host, ctypes.c_size_t(4 * len(values)))
    if rc != 0:
        raise RuntimeError("CUDA error: %d" % rc)
    return ptr


def _from_device(ptr, n, index):
    lib = _lazy_init()
    host = (ctypes.c_float * max(n, 1))()
    rc = lib.cuMemcpyDtoH_v2(host, ptr, ctypes.c_size_t(4 * n))
    if rc != 0:
        raise RuntimeError("CUDA error: %d" % rc)
    return list(host)[:n]


def synchronize(device=None):
    lib = _lazy_init()
    rc = lib.cuCtxSynchronize()
    if rc != 0:
        raise RuntimeError("CUDA error: %d" % rc)
