"""Fuse from Python.

``fuse.export`` turns PyTorch models and graphs into ``fuse`` dialect text
(``python -m fuse.export --help`` for the built-in models); ``fuse.models``
holds those models and ``fuse.reference`` saves PyTorch's inputs and outputs
for ``fuse-run --expected``. The ctypes bindings over Fuse's C API and the
``torch.compile`` backend come later. Nothing here is imported eagerly: the
package imports without torch.
"""

__version__ = "0.1.0"
