"""torch.topk with a small k (a mixture of experts' router) through Fuse's
own decomposition into k passes of reductions and a gather: the same values
and indices as torch.topk (largest and smallest, any dim, NaN and -inf), a
router's training step exported and checked against PyTorch on the CPU
reference interpreter, and a large k left to torch."""

import pytest
import torch
import torch.nn as nn

from conftest import matches_torch
from fuse.exporter._steps import Step
from fuse.exporter._tracing import TOPK_PASSES, _topk, trace
from fuse.export import export_step

INF, NAN = float("inf"), float("nan")


@pytest.mark.parametrize("k, dim, largest", [(2, -1, True), (3, 0, False), (8, 1, True), (1, 1, False)])
def test_the_decomposition_is_topk(k, dim, largest):
    x = torch.randn(5, 8, generator=torch.Generator().manual_seed(k))
    values, indices = _topk(x, k, dim, largest)
    expected = torch.topk(x, k, dim, largest)
    assert torch.equal(values, expected.values) and torch.equal(indices, expected.indices)


def test_nan_counts_as_the_largest_and_minus_infinity_is_taken_once():
    x = torch.tensor([[-INF, -INF, 1.0, NAN, 0.5]])
    values, indices = _topk(x, 5)
    assert indices.tolist() == [[3, 2, 4, 0, 1]] and values[0, 0].isnan()
    values, indices = _topk(x, 5, largest=False)
    assert indices.tolist() == [[0, 1, 4, 2, 3]]


def test_a_large_k_stays_torch_topk():
    x = torch.randn(2, 64)
    assert _topk(x, TOPK_PASSES + 1) is NotImplemented
    graph = trace(lambda t: torch.topk(t, TOPK_PASSES + 1).values, [x])
    assert "aten.topk.default" in {str(n.target) for n in graph.graph.nodes}


class Router(nn.Module):
    """Top-2 of 8 experts per token, the chosen experts' outputs weighted
    by their renormalised router probabilities (Mixtral's routing, with
    experts as one batched matmul)."""

    def __init__(self, d=16, experts=8):
        super().__init__()
        self.gate = nn.Linear(d, experts, bias=False)
        self.experts = nn.Parameter(torch.randn(experts, d, d) / d ** 0.5)

    def forward(self, x):
        probabilities = self.gate(x).softmax(-1)
        weights, chosen = torch.topk(probabilities, 2, dim=-1)
        weights = weights / weights.sum(-1, keepdim=True)
        every = torch.einsum("td,edf->tef", x, self.experts)
        picked = every.gather(1, chosen[:, :, None].expand(-1, -1, every.shape[-1]))
        return (weights[:, :, None] * picked).sum(1)


def test_a_routers_training_step_matches_torch(tmp_path):
    torch.manual_seed(0)
    step = Step(Router(), (torch.randn(12, 16),), mode="train", loss_fn=lambda y: (y * y).sum())
    text = export_step(step)
    assert "fuse.argmax" in text
    assert "3 of 3 outputs match" in matches_torch(step, text, tmp_path)
