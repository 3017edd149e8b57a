"""aten.sin and aten.cos (a rotary table computed inside the graph, as
Mixtral's under torch.compile, whose buffers are not baked in): exported to
fuse.sin and fuse.cos and checked against PyTorch on the CPU reference
interpreter, with arguments of thousands of radians (positions times the
first frequencies), and a training step through their backward."""

import torch
import torch.nn as nn
from torch.fx.experimental.proxy_tensor import make_fx

from conftest import graph_matches_torch, matches_torch
from fuse.exporter._steps import Step
from fuse.export import export_step


def rotary_table(positions, inv_freq):
    angles = positions[:, None].float() * inv_freq[None, :]
    return angles.cos(), angles.sin()


def test_a_rotary_table_of_large_angles_matches_torch(tmp_path):
    positions = torch.arange(4096)
    inv_freq = 1.0 / (10000 ** (torch.arange(0, 64, 2).float() / 64))
    graph = make_fx(rotary_table)(positions, inv_freq)
    targets = {str(n.target) for n in graph.graph.nodes}
    assert {"aten.cos.default", "aten.sin.default"} <= targets
    report = graph_matches_torch(graph, [positions, inv_freq], tmp_path, retrace=False)
    assert "2 of 2 outputs match" in report


class Rotated(nn.Module):
    """Features rotated by angles a layer computes: the backward goes
    through sin and cos."""

    def __init__(self):
        super().__init__()
        self.angle = nn.Linear(8, 8)
        self.out = nn.Linear(8, 4)

    def forward(self, x):
        a = self.angle(x)
        return self.out(x * a.cos() + x.flip(-1) * a.sin())


def test_training_step_through_sin_and_cos_matches_torch(tmp_path):
    torch.manual_seed(0)
    step = Step(Rotated(), (torch.randn(3, 8),), mode="train", loss_fn=lambda y: (y * y).sum())
    text = export_step(step)
    assert "fuse.sin" in text and "fuse.cos" in text
    assert "5 of 5 outputs match" in matches_torch(step, text, tmp_path)
