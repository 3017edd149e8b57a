"""Slices with a step (x[..., ::2], x[..., 1::2]: GPT-J's interleaved
rotary pairs), their backward and aten.slice_scatter with a step, exported
as concatenations and reshapes (each written element followed by the step
- 1 elements after its place, as one run) and checked against PyTorch on
the CPU reference interpreter. torch 1.13 writes a slice's backward as
slice_backward, torch 2.x as new_zeros + slice_scatter; both are checked
here on whichever torch runs."""

import pytest
import torch
import torch.nn as nn
from torch.fx.experimental.proxy_tensor import make_fx

from conftest import graph_matches_torch, matches_torch, ops_in
from fuse.exporter._steps import Step
from fuse.export import export_step


def rotate_every_two(x):
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.stack((-x2, x1), dim=-1).flatten(-2)


def rotary_loss(x, y, sin, cos, weights):
    """GPT-J's rotary embedding on interleaved pairs, and a stride-3 slice
    that stops short of the end."""
    rotated = x * cos + rotate_every_two(x) * sin
    return (rotated * rotated).sum() + (y[:, 1:8:3] * weights).sum()


class InterleavedRotary(nn.Module):
    def __init__(self):
        super().__init__()
        self.x = nn.Parameter(torch.randn(2, 3, 4, 8))
        self.y = nn.Parameter(torch.randn(3, 10))

    def forward(self, sin, cos, weights):
        return rotary_loss(self.x, self.y, sin, cos, weights)


def _rotary_step():
    torch.manual_seed(0)
    angles = torch.randn(4, 4)
    sin, cos = (torch.repeat_interleave(f(angles), 2, dim=-1) for f in (torch.sin, torch.cos))
    return Step(InterleavedRotary(), (sin, cos, torch.randn(3, 3)), mode="train", loss_fn=lambda loss: loss)


def test_interleaved_rotary_forward_and_backward_match_torch(tmp_path):
    step = _rotary_step()
    text = export_step(step)
    assert "3 of 3 outputs match" in matches_torch(step, text, tmp_path)
    assert "stride = [1, 1, 1, 2]" in text  # the forward's strided slices
    assert "fuse.scatter_add" not in text and "fuse.gather" not in text


def test_the_backward_as_torch_2_writes_it(tmp_path):
    """A slice's backward as new_zeros + slice_scatter (torch 2.x's
    decomposition of slice_backward), whatever torch traces here."""
    step = _rotary_step()
    inputs = [p.detach().clone().requires_grad_(True) for p in step.module.parameters()] + list(step.example[2:])

    def loss_and_grads(x, y, sin, cos, weights):
        loss = rotary_loss(x, y, sin, cos, weights)
        return (loss,) + torch.autograd.grad(loss, [x, y])

    def slice_backward(grad, input_sizes, dim, start, end, step):
        return torch.slice_scatter(grad.new_zeros(input_sizes), grad, dim, start, end, step)

    graph = make_fx(loss_and_grads, decomposition_table={torch.ops.aten.slice_backward.default: slice_backward})(
        *inputs)
    targets = {str(n.target) for n in graph.graph.nodes}
    assert "aten.slice_scatter.default" in targets and "aten.slice_backward.default" not in targets
    graph_matches_torch(graph, [t.detach() for t in inputs], tmp_path, retrace=False)


@pytest.mark.parametrize("dim, start, end, step", [
    (-1, 0, None, 2), (-1, 1, None, 2), (1, 1, 8, 3), (1, 0, 9, 4), (0, 2, None, 5), (1, -7, -1, 2), (0, 0, 1, 3),
])
def test_slice_scatter_with_a_step(dim, start, end, step, tmp_path):
    base = torch.randn(7, 9)
    source = torch.randn_like(base[(slice(None),) * (dim % 2) + (slice(start, end, step),)]) * 10

    def f(base, source):
        return torch.slice_scatter(base, source, dim, start, end, step) * 2

    graph = make_fx(f)(base, source)
    graph_matches_torch(graph, [base, source], tmp_path, retrace=False)
