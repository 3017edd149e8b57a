"""Attention whose mask comes from an input, through torch.compile(backend=
"fuse"): the backend rewrites such SDPA calls to the memory-efficient op
(python/fuse/dynamo/_masked_attention.py) so that Fuse sees one attention op with
a mask operand, not SDPA's math form, and fuse.export's tracing (compile_step)
routes SDPA calls the same way (`routing()`). Checked: the rewrite keeps
SDPA's answer (bool and float masks, a length that is no multiple of 16,
calls it leaves to SDPA), and a BERT-style layer with a padding mask
compiles to Fuse's attention with a mask and matches eager, forward and
backward, through the backend and through compile_step.

Needs torch 2.x (and a CUDA GPU for all but the first test): skipped, with
the reason, elsewhere.
"""

import pytest
import torch
import torch.nn.functional as F

from conftest import relative_error, requires_cuda, requires_torch2
from fuse.dynamo import _masked_attention
from fuse import backend

pytestmark = [requires_torch2]


def test_calls_it_cannot_take_stay_sdpa_on_the_cpu():
    q, k, v = torch.randn(3, 2, 4, 10, 8)
    mask = torch.rand(2, 1, 10, 10) > 0.3
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert torch.equal(_masked_attention.masked_attention(q, k, v, attn_mask=mask), expected)

    def graph(q, k, v, mask):
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    gm = torch.fx.symbolic_trace(graph)
    assert _masked_attention.route(gm) == 1
    assert torch.equal(gm(q, k, v, mask), expected)


def test_routing_hands_sdpa_calls_to_masked_attention_and_leaves_the_rest(monkeypatch):
    q, k, v = torch.randn(3, 2, 4, 10, 8)
    mask = torch.rand(2, 1, 10, 10) > 0.3
    calls = []
    monkeypatch.setattr(_masked_attention, "masked_attention", lambda *a, **kw: calls.append(kw) or a[0])
    with _masked_attention.routing():
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=0.25)
        total = torch.add(q, 1.0)  # any other function is itself
    assert out is q and calls == [{"attn_mask": mask, "dropout_p": 0.25, "_any_device": True}]
    assert torch.equal(total, q + 1.0)
    F.scaled_dot_product_attention(q, k, v, attn_mask=mask)  # outside the context: SDPA
    assert len(calls) == 1


def test_the_exporter_traces_a_padded_layer_with_dropout_on_the_cpu_as_one_masked_attention():
    """fuse.export (and compile_step, which exports a CPU copy) on fake CPU
    tensors: with dropout, SDPA's CPU dispatch takes its math form (batched
    matmuls, a safe softmax, a Bernoulli mask per layer: HF's BERT in the
    bert-hf row spent 355 of 452 ms there); routed, the graph holds Fuse's
    attention with the mask and the dropout, forward and backward."""
    from fuse.export import export_module
    torch.manual_seed(0)
    model = PaddedEncoderLayer(d=64, heads=4, dropout=0.1)
    x = torch.randn(2, 32, 64)
    lengths = torch.tensor([32, 20])
    text = export_module(model, (x, lengths), mode="train", loss_fn=lambda out: out.square().mean())
    line = text.split("fuse.scaled_dot_product_attention ")[1].split("\n")[0]
    assert " mask(" in line and "dropout_p" in line, line
    assert "fuse.scaled_dot_product_attention_backward" in text
    assert "fuse.softmax" not in text and "fuse.random" not in text


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("tk", [64, 50])
@pytest.mark.parametrize("kind", ["bool", "float"])
def test_the_memory_efficient_op_gives_sdpas_answer(kind, tk):
    torch.manual_seed(0)
    q = torch.randn(2, 4, 32, 64, device="cuda", dtype=torch.bfloat16)
    k, v = torch.randn(2, 2, 4, tk, 64, device="cuda", dtype=torch.bfloat16)
    keep = torch.arange(tk, device="cuda")[None, None, None, :] < torch.tensor([tk, tk // 2], device="cuda")[:, None,
                                                                                                              None, None]
    mask = keep.expand(2, 1, 32, tk) if kind == "bool" else torch.where(keep, 0.0, -1e9).expand(2, 1, 32, tk)
    expected = F.scaled_dot_product_attention(q.float(), k.float(), v.float(), attn_mask=mask)
    got = _masked_attention.masked_attention(q, k, v, attn_mask=mask)
    assert relative_error(got.float(), expected) < 2e-2


class PaddedEncoderLayer(torch.nn.Module):
    """Self-attention over a padded batch, its mask made from the input."""

    def __init__(self, d=128, heads=4, dropout=0.0):
        super().__init__()
        self.heads, self.dropout = heads, dropout
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.out = torch.nn.Linear(d, d)

    def forward(self, x, lengths):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.heads, d // self.heads).permute(2, 0, 3, 1, 4)
        keep = torch.arange(t, device=x.device)[None, :] < lengths[:, None]
        mask = keep[:, None, None, :].expand(b, 1, t, t)
        attended = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                                  dropout_p=self.dropout if self.training else 0.0)
        return self.out(attended.transpose(1, 2).reshape(b, t, d))


@pytest.mark.gpu
@requires_cuda
@pytest.mark.usefixtures("exact_f32")
def test_a_padded_encoder_layer_compiles_to_fuses_attention_with_a_mask(cache, compiled_texts):
    torch.manual_seed(0)
    texts = compiled_texts
    model = PaddedEncoderLayer().cuda()
    x = torch.randn(4, 64, 128, device="cuda")
    lengths = torch.tensor([64, 40, 17, 1], device="cuda")
    compiled = torch.compile(model, backend="fuse", options={"amp": None, "fallback": "error", "cache_dir": cache})
    fallbacks = backend.stats["fallbacks"]  # the process's count: earlier tests' fallbacks are theirs
    out = compiled(x, lengths)
    out.square().mean().backward()
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    expected = model(x, lengths)
    expected.square().mean().backward()
    assert backend.stats["fallbacks"] == fallbacks
    forward = next(t for t in texts if "fuse.scaled_dot_product_attention " in t)
    assert " mask(" in forward.split("fuse.scaled_dot_product_attention ")[1].split("\n")[0]
    assert any("fuse.scaled_dot_product_attention_backward" in t for t in texts)
    assert "_safe_softmax" not in "".join(texts) and "fuse.softmax" not in forward
    # Padded queries attend to the kept keys: every row is defined.
    assert relative_error(out, expected) < 1e-3
    for got, want in zip(grads, (p.grad for p in model.parameters())):
        assert relative_error(got, want) < 1e-3


@pytest.mark.gpu
@requires_cuda
@pytest.mark.usefixtures("exact_f32")
def test_a_padded_encoder_layer_through_compile_step_takes_fuses_attention_with_a_mask(cache):
    """compile_step traces the module itself (no dynamo graph to rewrite):
    the padding-masked SDPA reaches Fuse as one attention op with a mask
    (before, as batched matmuls and a safe softmax), and the gradients
    match eager's."""
    import fuse
    torch.manual_seed(0)
    model = PaddedEncoderLayer().cuda()
    x = torch.randn(4, 64, 128, device="cuda")
    lengths = torch.tensor([64, 40, 17, 1], device="cuda")
    step = fuse.compile_step(model, lambda out: out.square().mean(), ((x, lengths), None), amp=None,
                             cache_dir=cache)
    loss = step((x, lengths), None)
    grads = [p.grad.clone() for p in model.parameters()]
    model.zero_grad(set_to_none=True)
    expected = model(x, lengths).square().mean()
    expected.backward()
    text = step.text
    assert " mask(" in text.split("fuse.scaled_dot_product_attention ")[1].split("\n")[0]
    assert "fuse.scaled_dot_product_attention_backward" in text
    assert "fuse.softmax" not in text and "_safe_softmax" not in text
    assert relative_error(loss, expected) < 1e-4
    for got, want in zip(grads, (p.grad for p in model.parameters())):
        assert relative_error(got, want) < 1e-3
