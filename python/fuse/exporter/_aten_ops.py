"""The ATen op table: how each ATen op becomes fuse ops.

Handlers register themselves in `HANDLERS` (by ATen overload name) when
their family module is imported: `_aten_pointwise` (elementwise, comparisons,
casts), `_aten_shapes` (views, slicing, indexing, reductions), `_aten_nn`
(matmul, norms, softmax, losses, attention, randomness), `_aten_batch_norm`
(batch norm and its backward) and `_aten_conv` (convolution and its
backward as im2col + GEMM). `_aten_common` holds what they share.
"""

from . import _aten_batch_norm, _aten_conv, _aten_nn, _aten_pointwise, _aten_shapes  # noqa: F401  (they register handlers)
from ._aten_common import HANDLERS, REJECTED, splat_creation

__all__ = ["HANDLERS", "REJECTED", "splat_creation"]
