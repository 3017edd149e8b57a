"""torch.gather (same-rank indices) and its backward, aten.scatter_add,
aten.scatter (sources or a value; topk's and max's backward) and
index_add, exported as one fuse.gather / fuse.scatter_add over the operand
flattened at computed positions, checked against PyTorch on the CPU
reference interpreter along every dimension."""

import pytest
import torch
import torch.nn as nn

from conftest import matches_torch, ops_in
from fuse.exporter._steps import Step
from fuse.export import export_step


class GatherOfParameter(nn.Module):
    def __init__(self, dim, index):
        super().__init__()
        self.x = nn.Parameter(torch.randn(4, 5, 6))
        self.dim = dim
        self.register_buffer("index", index)

    def forward(self, weights):
        return (torch.gather(self.x, self.dim, self.index) * weights).sum()


@pytest.mark.parametrize("dim", [0, 1, 2, -1])
def test_gather_and_its_backward_along_every_dimension(dim, tmp_path):
    torch.manual_seed(dim % 3)
    shape = [3, 4, 5]  # smaller than x along every dimension: only that part is read
    index = torch.randint(0, (4, 5, 6)[dim], shape)
    model = GatherOfParameter(dim, index)
    weights = torch.randn(shape)
    step = Step(model, (weights,), mode="train", loss_fn=lambda loss: loss)
    text = export_step(step)
    assert "2 of 2 outputs match" in matches_torch(step, text, tmp_path, "train")
    ops = ops_in(text)
    assert ops["fuse.gather"] == 1 and ops["fuse.scatter_add"] == 1  # repeated indices accumulate


class IndexAdd(nn.Module):
    def __init__(self):
        super().__init__()
        self.x = nn.Parameter(torch.randn(6, 3))

    def forward(self, source, index):
        return self.x.index_add(0, index, source, alpha=0.5)


def test_index_add_accumulates_repeated_indices(tmp_path):
    torch.manual_seed(0)
    step = Step(IndexAdd(), (torch.randn(4, 3), torch.tensor([5, 0, 5, 2])))
    assert "1 of 1 outputs match" in matches_torch(step, export_step(step), tmp_path, "infer")


class TakeColumns(nn.Module):
    def __init__(self):
        super().__init__()
        self.x = nn.Parameter(torch.randn(3, 6))

    def forward(self, columns, weights):
        return (self.x[:, columns] * weights).sum()


def test_negative_advanced_indices_count_from_the_end(tmp_path):
    """x[:, idx] with idx < 0 (Falcon's fused[:, :, [-2]]): torch counts
    from the end; a constant index folds that in, a computed one selects."""
    torch.manual_seed(0)
    columns = torch.tensor([-1, 0, -6, 2, -1])
    step = Step(TakeColumns(), (columns, torch.randn(3, 5)), mode="train", loss_fn=lambda loss: loss)
    text = export_step(step)
    assert "fuse.select" in text  # the index is an input: wrapped where it is negative
    assert "2 of 2 outputs match" in matches_torch(step, text, tmp_path, "train")


class Scatter(nn.Module):
    """x.scatter of sources and of one value at indices that never repeat
    along dim (a permutation's first entries), onto a parameter."""

    def __init__(self, dim, index):
        super().__init__()
        self.x = nn.Parameter(torch.randn(4, 5, 6))
        self.dim = dim
        self.register_buffer("index", index)

    def forward(self, src):
        return (self.x.scatter(self.dim, self.index, src) * 3 + self.x.scatter(self.dim, self.index, -2.0)).sum()


@pytest.mark.parametrize("dim", [0, 1, 2])
def test_scatter_of_sources_and_of_a_value_and_its_backward(dim, tmp_path):
    torch.manual_seed(dim)
    shape = [4, 5, 6]
    shape[dim] = 3
    # Along dim, each line's indices are the first three of a permutation.
    index = torch.rand(4, 5, 6).argsort(dim).narrow(dim, 0, 3).contiguous()
    step = Step(Scatter(dim, index), (torch.randn(shape),), mode="train", loss_fn=lambda loss: loss)
    text = export_step(step)
    assert "fuse.select" in text
    assert "2 of 2 outputs match" in matches_torch(step, text, tmp_path, "train")
