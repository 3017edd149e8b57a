"""What the joint-graph rewrites (fuse/dynamo/_joint_rewrites.py) save on the
GPU, through torch.compile(backend="fuse"): a language model whose loss
upcasts its logits (HF's causal-LM loss) keeps less in its forward's slab
than without the rewrites (the bf16 logits and a logsumexp per row instead
of the f32 log-probabilities: at least the bf16 logits' bytes less), and its
gradients are eager autocast's. Needs torch 2.x and a CUDA GPU: skipped, with the
reason, elsewhere."""

import pytest
import torch
import torch.nn.functional as F

from conftest import relative_error, requires_cuda, requires_torch2

from fuse import backend
from fuse.dynamo import _joint_rewrites

pytestmark = [pytest.mark.gpu, requires_torch2, requires_cuda]

VOCAB, BATCH, SEQ, WIDTH = 4096, 4, 128, 256


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, WIDTH)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(WIDTH, 4 * WIDTH), torch.nn.GELU(),
                                       torch.nn.Linear(4 * WIDTH, WIDTH))
        self.norm = torch.nn.LayerNorm(WIDTH)
        self.head = torch.nn.Linear(WIDTH, VOCAB, bias=False)

    def forward(self, ids, labels):
        h = self.embed(ids)
        h = h + self.mlp(h)
        logits = self.head(self.norm(h))
        return F.cross_entropy(logits.float().view(-1, VOCAB), labels.view(-1))  # HF's upcast


def _step(model, batch, compiled):
    model.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        loss = compiled(*batch)
    loss.backward()
    return loss.detach(), {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def _compiled_slab(model, batch, cache, rewrites):
    torch._dynamo.reset()
    backend._SLAB_POOLS.clear()
    before = dict(backend.stats["joint"])
    compiled = torch.compile(model, backend="fuse", options={"fallback": "error", "cache_dir": cache})
    if not rewrites:
        original = _joint_rewrites.prepare_joint
        _joint_rewrites.prepare_joint = lambda joint: {key: 0 for key in before}
    try:
        loss, grads = _step(model, batch, compiled)
    finally:
        if not rewrites:
            _joint_rewrites.prepare_joint = original
    changed = {k: backend.stats["joint"][k] - before[k] for k in before}
    return loss, grads, backend.saved_bytes(), changed


def test_the_forward_saves_no_f32_log_probabilities_and_the_gradients_are_eagers(tmp_path):
    torch.manual_seed(0)
    model = TinyLM().cuda()
    batch = (torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda"),
             torch.randint(0, VOCAB, (BATCH, SEQ), device="cuda"))
    eager_loss, eager_grads = _step(model, batch, model)
    bf16_logits = BATCH * SEQ * VOCAB * 2

    loss, grads, slab, changed = _compiled_slab(model, batch, str(tmp_path / "with"), rewrites=True)
    _, plain_grads, plain_slab, _ = _compiled_slab(model, batch, str(tmp_path / "without"), rewrites=False)
    print(f"slab {plain_slab / 2**20:.1f} MiB without the rewrites, {slab / 2**20:.1f} MiB with; {changed}")
    assert changed["shape_only_operands"] >= 1 and changed["log_softmax_from_saved_logsumexp"] >= 1, changed
    assert slab <= plain_slab - bf16_logits, (slab, plain_slab)
    assert relative_error(loss, eager_loss) <= 2e-2
    for name, grad in grads.items():
        assert relative_error(grad, eager_grads[name]) <= 2e-2, name
        assert relative_error(grad, plain_grads[name]) <= 2e-2, name
