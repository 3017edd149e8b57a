"""aten.linalg_vector_norm (F.normalize and Tensor.norm on torch 2.x; kept
whole on every torch): ord 2, 1, inf, -inf, 0 and any other p as
(Σ|x|^p)^(1/p), over a dimension, several or all, with keepdim and the
dtype argument, exported and checked against PyTorch on the CPU reference
interpreter; and training steps through its backward (sgn, isnan,
masked_fill) for every ord."""

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

from conftest import graph_matches_torch, matches_torch
from fuse.exporter._steps import Step
from fuse.export import export_step

INF = float("inf")
ORDS = [2, 1, INF, -INF, 0, 3, 0.5, -1.5]


def norms(x):
    vector_norm = torch.linalg.vector_norm
    low = x.to(torch.bfloat16)
    return (vector_norm(x, 2, dim=-1), vector_norm(x, 1, dim=(0, 2), keepdim=True), vector_norm(x, INF),
            vector_norm(x, -INF, dim=1), vector_norm(x, 0, dim=-1), vector_norm(x, 3, dim=[1, 2]),
            vector_norm(x, 0.5, dim=0, keepdim=True), vector_norm(x, -1.5, dim=-1),
            # bf16 data summed in f32 by the dtype argument; a 0-d input.
            vector_norm(low, 3, dim=(1, 2), dtype=torch.float32), vector_norm(x[0, 0, 0]))


def test_every_ord_over_dims_with_keepdim_and_dtype(tmp_path):
    torch.manual_seed(0)
    x = torch.randn(3, 4, 5)
    x[0, 1, :3] = 0  # ord 0 counts the nonzero elements
    # make_fx without decompositions: the op as PyTorch's autograd sees it.
    graph = make_fx(norms)(x)
    calls = [n for n in graph.graph.nodes if n.target == torch.ops.aten.linalg_vector_norm.default]
    assert len(calls) == 10
    assert "10 of 10 outputs match" in graph_matches_torch(graph, [x], tmp_path, retrace=False)
    # The exporter's own trace keeps it whole too.
    assert "10 of 10 outputs match" in graph_matches_torch(graph, [x], tmp_path, "retraced")


class Normalized(nn.Module):
    """CLIP's F.normalize, and a norm over two dimensions, of one ord."""

    def __init__(self, ord):
        super().__init__()
        self.fc = nn.Linear(6, 5)
        self.ord = ord

    def forward(self, x):
        h = self.fc(x)
        return F.normalize(h, p=self.ord, dim=-1) + torch.linalg.vector_norm(h, self.ord, dim=(0, 1), keepdim=True)


@pytest.mark.parametrize("ord", ORDS, ids=str)
def test_training_step_through_the_norm_matches_torch(ord, tmp_path):
    torch.manual_seed(0)
    step = Step(Normalized(ord), (torch.randn(2, 3, 6),), mode="train", loss_fn=lambda y: (y * y).sum())
    text = export_step(step)
    assert "3 of 3 outputs match" in matches_torch(step, text, tmp_path)
