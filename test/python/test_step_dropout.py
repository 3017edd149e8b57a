"""fuse.compile_step on a model with dropout: the graph's `rng.seed` and
`rng.offset` are bound to fresh values every call, taken from torch's
generator, so two calls drop different units and `torch.manual_seed`
makes a run reproducible. Runs on the CPU reference interpreter
(step_interpreter.py); the GPU variants (torch's CUDA Philox generator, the
compiled kernels) skip, with the reason, without a CUDA GPU."""

import pytest
import torch

import fuse
from fuse.training import _step_rng
from conftest import requires_cuda
from step_interpreter import on_interpreter


def _dropout_mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Dropout(0.1),
                                torch.nn.Linear(64, 8))
    batch = (torch.randn(4, 32), torch.randint(0, 8, (4,)))
    return model, batch, lambda out, target: torch.nn.functional.cross_entropy(out, target)


def _mask_probe(p=0.5, width=4096):
    """A model whose bias gradient is the dropout mask over (1 - p): the
    loss is the sum of the first row of dropout(x W^T + b). (Two rows: a
    batch of one trips the code generator on a sum over a dimension of 1.)"""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, width), torch.nn.Dropout(p))
    batch = (torch.randn(2, 4), None)
    return model, batch, lambda out: out[0].sum()


def test_dropout_mlp_compiles_and_binds_the_seed(tmp_path):
    model, batch, loss_fn = _dropout_mlp()
    step = on_interpreter(fuse.compile_step(model, loss_fn, batch, arch="sm_90a", cache_dir=False), tmp_path)
    assert step.compiled.input_names[-2:] == ["rng.seed", "rng.offset"]
    torch.manual_seed(1)
    first = float(step(batch))
    first_grad = model[0].weight.grad.clone()
    second = float(step(batch))
    assert first != second and not torch.equal(first_grad, model[0].weight.grad), "two calls drew the same mask"
    torch.manual_seed(1)
    assert float(step(batch)) == first and torch.equal(first_grad, model[0].weight.grad)


def test_dropout_keeps_one_minus_p_of_the_units(tmp_path):
    model, batch, loss_fn = _mask_probe()
    step = on_interpreter(fuse.compile_step(model, loss_fn, batch, arch="sm_90a", cache_dir=False), tmp_path)
    masks = []
    for _ in range(2):
        step(batch)
        grad = model[0].bias.grad.clone()
        assert set(grad.unique().tolist()) <= {0.0, 2.0}  # kept units scaled by 1 / (1 - p)
        masks.append(grad != 0)
    for mask in masks:
        assert 0.45 < float(mask.float().mean()) < 0.55
    agree = float((masks[0] == masks[1]).float().mean())
    assert 0.4 < agree < 0.6, "the second call's mask should be independent of the first's"


class _FakePhilox:
    """torch's CUDA generator as advance_philox sees it (torch >= 2.1)."""

    def __init__(self, seed, offset):
        self.seed, self.offset = seed, offset

    def initial_seed(self):
        return self.seed

    def get_offset(self):
        return self.offset

    def set_offset(self, offset):
        self.offset = offset


def test_the_generator_advances_past_the_counters_the_step_uses():
    generator = _FakePhilox(seed=2 ** 64 - 5, offset=8)
    assert _step_rng.advance_philox(generator, 10) == (2 ** 64 - 5, 2)  # counter = offset / 4
    assert generator.offset == 8 + 4 * 10
    assert _step_rng.advance_philox(generator, 1) == (2 ** 64 - 5, 12)
    # A seed above 2^63 reaches the i64 input with the same bits.
    assert _step_rng.as_int64(2 ** 64 - 5) == -5 and _step_rng.as_int64(7) == 7


# -- on the GPU -------------------------------------------------------------------------

@requires_cuda
def test_gpu_dropout_follows_torchs_cuda_generator(tmp_path):
    model, batch, loss_fn = _mask_probe()
    model = model.cuda()
    batch = (batch[0].cuda(), None)
    step = fuse.compile_step(model, loss_fn, batch, amp=None, cache_dir=tmp_path)
    generator = torch.cuda.default_generators[torch.cuda.current_device()]
    torch.cuda.manual_seed(3)
    before = _step_rng.advance_philox(generator, 0)[1]
    step(batch)
    first = model[0].bias.grad.clone()
    after = _step_rng.advance_philox(generator, 0)[1]
    assert after - before == step._rng_counters > 0, "the generator must advance past the step's counters"
    step(batch)
    second = model[0].bias.grad.clone()
    for grad in (first, second):
        assert set(grad.unique().tolist()) <= {0.0, 2.0}
        assert 0.45 < float((grad != 0).float().mean()) < 0.55
    assert not torch.equal(first, second)
    torch.cuda.manual_seed(3)
    step(batch)
    assert torch.equal(model[0].bias.grad, first), "torch.cuda.manual_seed must reproduce the mask"


@requires_cuda
def test_gpu_dropout_mlp_trains_like_eager_in_expectation(tmp_path):
    # Different bits from eager's dropout, the same distribution: with p
    # small the step's loss stays near eager's and the model learns.
    model, batch, loss_fn = _dropout_mlp()
    model = model.cuda()
    batch = (batch[0].cuda(), batch[1].cuda())
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    step = fuse.compile_step(model, loss_fn, batch, optimizer=optimizer, amp=None, cache_dir=tmp_path)
    losses = [float(step(batch)) for _ in range(30)]
    assert losses[-1] < losses[0] * 0.5, losses
