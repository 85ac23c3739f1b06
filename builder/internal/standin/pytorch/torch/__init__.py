"""jetbake's stand-in for PyTorch (the test bed has no GPU and no NGC image).

It models the parts of torch's contract that jetbake and an app's Jetson
gate rely on: torch.version (__version__, cuda), torch.cuda.is_available(),
get_device_name(), get_device_capability(), get_arch_list() and a small
tensor operation on the GPU. The CUDA side asks the host's driver,
libcuda.so.1, through ctypes, as real torch does through the CUDA runtime,
and its GPU code is the .nv_fatbin of torch/lib/libtorch_cuda.so: a device
whose SM has no cubin there (and no PTX it can JIT) fails a kernel with
"CUDA error: no kernel image is available for execution on the device".
"""
import math as _math

from torch import version as version
from torch.version import __version__ as __version__
from torch import cuda as cuda

float32 = "float32"


class device:
    def __init__(self, spec):
        spec = str(spec)
        self.type, _, index = spec.partition(":")
        if self.type not in ("cpu", "cuda"):
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + spec)
        self.index = int(index) if index else (0 if self.type == "cuda" else None)

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)

    __repr__ = __str__


class Tensor:
    """A 1-D float32 tensor: values on the CPU, or device memory from the driver."""

    def __init__(self, values, dev="cpu"):
        self.device = device(dev)
        self._values = [float(v) for v in values]
        self._mem = None
        if self.device.type == "cuda":
            self._mem = cuda._to_device(self._values, self.device.index)

    def __len__(self):
        return len(self._values)

    def _binary(self, other, fn):
        if self.device.type == "cuda":
            cuda._launch(self.device.index)
        if isinstance(other, Tensor):
            vals = [fn(a, b) for a, b in zip(self._values, other._values)]
        else:
            vals = [fn(a, other) for a in self._values]
        return Tensor(vals, str(self.device))

    def __add__(self, other):
        return self._binary(other, lambda a, b: a + b)

    def __mul__(self, other):
        return self._binary(other, lambda a, b: a * b)

    def __matmul__(self, other):
        if self.device.type == "cuda":
            cuda._launch(self.device.index)
        return Tensor([sum(a * b for a, b in zip(self._values, other._values))], str(self.device))

    __radd__ = __add__
    __rmul__ = __mul__

    def sum(self):
        return self._binary(0.0, lambda a, b: a)._reduce(sum)

    def _reduce(self, fn):
        return Tensor([fn(self._values)], str(self.device))

    def to(self, dev):
        return Tensor(self.cpu()._values, dev)

    def cuda(self):
        return self.to("cuda")

    def cpu(self):
        if self.device.type == "cuda":
            return Tensor(cuda._from_device(self._mem, len(self._values), self.device.index))
        return self

    def tolist(self):
        return list(self.cpu()._values)

    def item(self):
        vals = self.tolist()
        if len(vals) != 1:
            raise RuntimeError("a Tensor with %d elements cannot be converted to Scalar" % len(vals))
        return vals[0]

    def all(self):
        return Tensor([float(all(v != 0.0 for v in self.cpu()._values))])

    def __bool__(self):
        return bool(self.item())

    def __repr__(self):
        suffix = "" if self.device.type == "cpu" else ", device='%s'" % self.device
        return "tensor(%r%s)" % (self.tolist(), suffix)


def tensor(values, device="cpu"):
    return Tensor(values, device)


def ones(n, device="cpu", dtype=None):
    return Tensor([1.0] * n, device)


def arange(n, device="cpu", dtype=None):
    return Tensor(range(n), device)


def randn(n, device="cpu", dtype=None):
    return Tensor([((i * 7919) % 101) / 50.0 - 1.0 for i in range(n)], device)


def isfinite(t):
    return Tensor([float(_math.isfinite(v)) for v in t.tolist()], "cpu")
