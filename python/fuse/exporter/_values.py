"""Values the exporter passes around besides SSA values: compile-time
constants, poison (a node that failed to convert), and the errors."""

import torch


class ExportError(Exception):
    """The graph cannot be expressed in the fuse dialect; the message says
    what and where."""


class Unsupported(Exception):
    """Raised by a handler for a use of an op that it does not support."""


_TORCH_TO_ELEMENT = {
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.bool: "i1",
    # Only constants may be f64 (Python floats turned into tensors); they are
    # converted to their consumer's type when they enter the graph.
    torch.float64: "f64",
}
ELEMENT_TO_TORCH = {v: k for k, v in _TORCH_TO_ELEMENT.items()}


def element_of(dtype, where=""):
    try:
        return _TORCH_TO_ELEMENT[dtype]
    except KeyError:
        raise Unsupported(f"dtype {dtype} has no fuse element type{where}") from None


class Const:
    """A tensor known at export time: a real tensor, or a splat (one value,
    shape, dtype) kept lazy so that `torch.zeros(50304, 768)` costs nothing."""

    __slots__ = ("_tensor", "splat", "shape", "dtype")

    def __init__(self, tensor=None, splat=None, shape=None, dtype=None):
        self._tensor = tensor
        self.splat = splat
        if tensor is not None:
            self.shape, self.dtype = tuple(tensor.shape), tensor.dtype
        else:
            self.shape, self.dtype = tuple(int(d) for d in shape), dtype

    @property
    def tensor(self):
        if self._tensor is None:
            self._tensor = torch.full(self.shape, self.splat, dtype=self.dtype)
        return self._tensor

    @property
    def element(self):
        return element_of(self.dtype)

    @property
    def numel(self):
        count = 1
        for d in self.shape:
            count *= d
        return count

    def scalar(self):
        """The one value of a splat or single-element constant, else None."""
        if self.splat is not None:
            return self.splat
        if self.numel == 1:
            return self._tensor.reshape(-1)[0].item()
        return None


class Poison:
    """The result of a node that could not be converted; it propagates
    silently so that only the first failure is reported."""


POISON = Poison()

# Random ops are never evaluated at export time: the graph must draw new
# numbers on every run.
