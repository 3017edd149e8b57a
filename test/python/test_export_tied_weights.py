"""A weight tied by assignment (a language model's head sharing the token
embedding's table, as GPT-2 and nanoGPT do) is one argument of the exported
step, read by both uses, with the gradient of both, on every torch: torch
1.13's functional_call replaced only the names it was given, so the head
read the module's own weight, which the trace baked in as a constant (two
309 MB literals for GPT-2's table) and which got no gradient."""

import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import matches_torch
from fuse.exporter._steps import Step
from fuse.export import AdamW, export_step


class TiedHead(nn.Module):
    def __init__(self, vocab=40, width=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.norm = nn.LayerNorm(width)
        self.head = nn.Linear(width, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids):
        return self.head(self.norm(self.embed(ids)))


def ce_loss(output, labels):
    return F.cross_entropy(output.reshape(-1, output.shape[-1]), labels.reshape(-1))


def _batch():
    generator = torch.Generator().manual_seed(0)
    return (torch.randint(0, 40, (2, 5), generator=generator),
            torch.randint(0, 40, (2, 5), generator=generator))


def test_a_tied_head_reads_the_embedding_argument_and_both_uses_give_its_gradient(tmp_path):
    torch.manual_seed(0)
    model = TiedHead()
    ids, targets = _batch()
    step = Step(model, {"ids": ids}, "train", ce_loss, {"targets": targets})
    text = export_step(step, index_bounds={"ids": 40, "targets": 40})
    assert step.param_names == ["embed.weight", "norm.weight", "norm.bias"]
    # No constant holds the table's values (or its transpose's): the head
    # reads the argument.
    literals = [line for line in text.splitlines() if "fuse.constant" in line and "dense<\"0x" in line]
    assert literals == [], literals
    matches_torch(step, text, tmp_path)
    # The step's gradient is autograd's on the module itself: the lookup's
    # rows plus the head's whole-table gradient.
    exported = step.run_eager()["grad.embed.weight"]
    model.zero_grad()
    ce_loss(model(ids), targets).backward()
    assert torch.allclose(exported, model.embed.weight.grad, atol=1e-6)


def test_a_tied_head_is_updated_once_by_adamw(tmp_path):
    torch.manual_seed(0)
    model = TiedHead()
    ids, targets = _batch()
    step = Step(model, {"ids": ids}, "train", ce_loss, {"targets": targets}, AdamW())
    text = export_step(step, index_bounds={"ids": 40, "targets": 40})
    assert [n for n in step.result_names if not n.startswith("exp_avg")] == \
        ["loss", "embed.weight", "norm.weight", "norm.bias", "step"]
    matches_torch(step, text, tmp_path)
