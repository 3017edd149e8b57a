"""Fuse from Python.

This package will hold the ctypes bindings over Fuse's C API, the PyTorch
exporter and the ``torch.compile`` backend. None of those exist yet: today the
only way to use Fuse is through the command-line tools (``fuse-opt``).
"""

__version__ = "0.1.0"
