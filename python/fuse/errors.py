"""The exception Fuse raises when its C API reports a failure.

Kept in a module of its own, with no imports, so that `fuse.FuseError` can be
caught without loading the shared library or torch.
"""


class FuseError(RuntimeError):
    """A failure inside Fuse (parsing, a pass, code generation, NVRTC, CUDA,
    a file): the message is the C API's own (`fuseLastError`), which names
    what failed and where (a graph's line:column, a pass, a kernel, a step).
    Mistakes in how a compiled graph is called (a tensor of the wrong dtype,
    shape or device) are TypeError or ValueError instead, raised before
    anything reaches the library."""
