"""fuse.compile_step's gradient clipping by global norm (max_grad_norm) and
gradient accumulation (accumulation_steps), inside the graph, against the
eager loop a user would write (torch.nn.utils.clip_grad_norm_, `(loss /
N).backward()` over N micro-batches, optimizer.step()), step by step. Runs
on the CPU reference interpreter (step_interpreter.py); the GPU variants
skip, with the reason, without a CUDA GPU."""

import copy

import pytest
import torch
import torch.nn.functional as F

import fuse
from conftest import relative_error, requires_cuda
from step_interpreter import on_interpreter


def assert_close(actual, expected, tolerance, what=""):
    error = relative_error(actual, expected)
    assert error <= tolerance, f"{what}: relative error {error:.3e} over {tolerance:g}"


def _mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def _batches(count, rows=6, seed=1, scale=3.0):
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randn(rows, 8, generator=generator) * scale, torch.randint(0, 4, (rows,), generator=generator))
            for _ in range(count)]


def _eager_update(model, optimizer, micro_batches, max_grad_norm):
    """The eager loop: gradients of loss / N summed over the micro-batches,
    clipped, one optimizer step. Returns (losses, norm before clipping)."""
    for p in model.parameters():
        p.grad = None
    losses = []
    for x, y in micro_batches:
        loss = F.cross_entropy(model(x), y)
        (loss / len(micro_batches)).backward()
        losses.append(loss.detach())
    norm = None
    if max_grad_norm is not None:
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    if optimizer is not None:
        optimizer.step()
    return losses, norm


def _compiled(model, optimizer, example, tmp_path, **options):
    step = fuse.compile_step(model, F.cross_entropy, example, optimizer=optimizer, arch="sm_90a", cache_dir=False,
                             **options)
    return on_interpreter(step, tmp_path)


def _compare(fuse_model, eager_model, tolerance, what):
    for (name, p), q in zip(fuse_model.named_parameters(), eager_model.parameters()):
        assert_close(p, q, tolerance, f"{what}: {name}")


# -- clipping -------------------------------------------------------------------------------

@pytest.mark.parametrize("max_norm", [0.05, 1e3])  # clipping, and a norm below the limit
def test_clipped_gradients_match_clip_grad_norm(max_norm, tmp_path):
    model = _mlp()
    eager = copy.deepcopy(model)
    batch = _batches(1)[0]
    step = _compiled(model, None, batch, tmp_path, max_grad_norm=max_norm)
    assert step.last_grad_norm is None
    assert step.compiled.output_names[-1] == "grad_norm"
    loss = step(batch)
    (expected_loss,), norm = _eager_update(eager, None, [batch], max_norm)
    assert_close(loss, expected_loss, 1e-5, "loss")
    assert_close(step.last_grad_norm, norm, 1e-5, "grad norm")
    for (name, p), q in zip(model.named_parameters(), eager.parameters()):
        assert_close(p.grad, q.grad, 1e-4, name)
    if max_norm < 1:
        total = torch.sqrt(sum((p.grad.double() ** 2).sum() for p in model.parameters()))
        assert abs(float(total) - max_norm) < 1e-4 * max_norm, "clipped to the limit"


def test_clipping_with_adamw_tracks_eager_step_by_step(tmp_path):
    model = _mlp()
    eager = copy.deepcopy(model)
    make = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)  # noqa: E731
    fuse_opt, eager_opt = make(model), make(eager)
    batches = _batches(3)
    step = _compiled(model, fuse_opt, batches[0], tmp_path, max_grad_norm=0.5)
    for i, batch in enumerate(batches):
        loss = step(batch)
        (expected,), norm = _eager_update(eager, eager_opt, [batch], 0.5)
        assert_close(loss, expected, 1e-4, f"loss {i}")
        assert_close(step.last_grad_norm, norm, 1e-4, f"norm {i}")
        assert float(norm) > 0.5, "the test should clip"
        _compare(model, eager, 1e-4, f"step {i}")
    assert float(fuse_opt.state[model[0].weight]["step"]) == 3


def test_f16_unscales_then_clips_then_skips_the_update_on_overflow(tmp_path):
    model = _mlp()
    eager = copy.deepcopy(model)
    make = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2)  # noqa: E731
    fuse_opt, eager_opt = make(model), make(eager)
    batches = _batches(2)
    step = _compiled(model, fuse_opt, batches[0], tmp_path, max_grad_norm=0.5, amp="f16")
    assert "loss_scale" in step.compiled.input_names and "found_inf" in step.compiled.output_names
    step(batches[0])
    _, norm = _eager_update(eager, eager_opt, [batches[0]], 0.5)
    assert not bool(step.found_inf)
    # The norm is of the unscaled gradients (the scale is 2^16), within f16's error.
    assert_close(step.last_grad_norm, norm, 2e-2, "norm")
    _compare(model, eager, 2e-2, "after one f16 step")
    # A scale that overflows f16: the update is skipped, the scale halves.
    before = [p.detach().clone() for p in model.parameters()]
    moments = fuse_opt.state[model[0].weight]["exp_avg"].clone()
    step._buffers["carried"]["loss_scale"].fill_(3e38)
    step(batches[1])
    assert bool(step.found_inf)
    assert not torch.isfinite(step.last_grad_norm)
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))
    assert torch.equal(fuse_opt.state[model[0].weight]["exp_avg"], moments)
    assert float(step._buffers["carried"]["loss_scale"]) == pytest.approx(1.5e38, rel=1e-6)


# -- accumulation ---------------------------------------------------------------------------

@pytest.mark.parametrize("max_grad_norm", [None, 0.5])
def test_accumulation_matches_the_eager_loop(max_grad_norm, tmp_path):
    model = _mlp()
    eager = copy.deepcopy(model)
    make = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)  # noqa: E731
    fuse_opt, eager_opt = make(model), make(eager)
    micro = _batches(6)
    step = _compiled(model, fuse_opt, micro[0], tmp_path, accumulation_steps=3, max_grad_norm=max_grad_norm)
    assert "accumulate.apply" in step.compiled.input_names
    for update in range(2):
        group = micro[3 * update:3 * update + 3]
        before = [p.detach().clone() for p in model.parameters()]
        losses = []
        for k, batch in enumerate(group):
            losses.append(step(batch))
            assert step.updated == (k == 2) and step.micro_step == (k + 1) % 3
            if k < 2:
                assert all(torch.equal(a, p) for a, p in zip(before, model.parameters())), "updated too early"
        expected, norm = _eager_update(eager, eager_opt, group, max_grad_norm)
        for k, (a, b) in enumerate(zip(losses, expected)):
            assert_close(a, b, 1e-4, f"update {update}, loss {k}")
        if max_grad_norm is not None:
            assert_close(step.last_grad_norm, norm, 1e-4, f"update {update}, norm")
        _compare(model, eager, 1e-4, f"update {update}")
    assert float(fuse_opt.state[model[0].weight]["step"]) == 2


def test_accumulation_without_optimizer_leaves_the_mean_gradient(tmp_path):
    model = _mlp()
    eager = copy.deepcopy(model)
    micro = _batches(4)
    step = _compiled(model, None, micro[0], tmp_path, accumulation_steps=2)
    for update in range(2):
        for batch in micro[2 * update:2 * update + 2]:
            step(batch)
        _eager_update(eager, None, micro[2 * update:2 * update + 2], None)
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            assert_close(p.grad, q.grad, 1e-4, f"update {update}: {name}")


def test_accumulation_refuses_a_micro_batch_of_another_shape(tmp_path):
    model = _mlp()
    micro = _batches(1)[0]
    step = _compiled(model, None, micro, tmp_path, accumulation_steps=2)
    with pytest.raises(ValueError, match=r"micro-batch input 'input' .*expected f32 \[6, 8\], got f32 \[3, 8\]"
                                         r".*every micro-batch must have them"):
        step(micro[0][:3], micro[1][:3])
    assert step.micro_step == 0


def test_f16_accumulation_skips_the_update_when_a_micro_batch_overflowed(tmp_path):
    model = _mlp()
    eager = copy.deepcopy(model)
    make = lambda m: torch.optim.SGD(m.parameters(), lr=0.1)  # noqa: E731
    fuse_opt, eager_opt = make(model), make(eager)
    micro = _batches(6)
    step = _compiled(model, fuse_opt, micro[0], tmp_path, accumulation_steps=2, amp="f16")
    step._allocate(step.compiled.device)  # the buffers, to set the loss scale before the first call
    scale = step._buffers["carried"]["loss_scale"]
    before = [p.detach().clone() for p in model.parameters()]
    for overflowing in (0, 1):  # the first micro-batch of a sum overflows, then the last one
        for k in range(2):
            scale.fill_(3e38 if k == overflowing else 2.0 ** 16)
            step(micro[2 * overflowing + k])
            assert bool(step.found_inf) == (k == overflowing)
        assert step.updated
        assert all(torch.equal(a, p) for a, p in zip(before, model.parameters())), \
            f"micro-batch {overflowing} overflowed: the whole update is skipped"
    scale.fill_(2.0 ** 16)
    step(micro[4])
    step(micro[5])  # a new sum: only micro-batches 4 and 5
    assert not bool(step.found_inf)
    _eager_update(eager, eager_opt, micro[4:6], None)
    _compare(model, eager, 2e-2, "after two skipped sums and one good one")


def test_options_are_checked():
    model = _mlp()
    batch = _batches(1)[0]
    with pytest.raises(ValueError, match="max_grad_norm must be a positive number"):
        fuse.compile_step(model, F.cross_entropy, batch, max_grad_norm=0.0, arch="sm_90a")
    with pytest.raises(ValueError, match="accumulation_steps must be a positive integer"):
        fuse.compile_step(model, F.cross_entropy, batch, accumulation_steps=0, arch="sm_90a")
    rmsprop = torch.optim.RMSprop(model.parameters())
    with pytest.raises(ValueError, match="accumulation_steps needs the optimizer's update inside the compiled "
                                         "step, and compile_step cannot run RMSprop there"):
        fuse.compile_step(model, F.cross_entropy, batch, optimizer=rmsprop, accumulation_steps=2, arch="sm_90a")
    with pytest.raises(ValueError, match="amp='f16' needs the optimizer's update inside"):
        fuse.compile_step(model, F.cross_entropy, batch, optimizer=rmsprop, amp="f16", arch="sm_90a")


def test_an_optimizer_the_graph_cannot_run_is_stepped_after_it(tmp_path):
    model = _mlp()
    eager = copy.deepcopy(model)
    fuse_opt, eager_opt = (torch.optim.RMSprop(m.parameters(), lr=1e-2) for m in (model, eager))
    batches = _batches(2)
    step = _compiled(model, fuse_opt, batches[0], tmp_path)
    for batch in batches:
        step(batch)
        _eager_update(eager, eager_opt, [batch], None)
    _compare(model, eager, 1e-4, "RMSprop after the graph")


# -- on the GPU -------------------------------------------------------------------------

@requires_cuda
@pytest.mark.parametrize("accumulation_steps,max_grad_norm", [(1, 0.5), (3, None), (3, 0.5)])
def test_gpu_clip_and_accumulate_match_eager(accumulation_steps, max_grad_norm, tmp_path):
    torch.backends.cuda.matmul.allow_tf32 = False
    model = _mlp().cuda()
    eager = copy.deepcopy(model)
    make = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)  # noqa: E731
    fuse_opt, eager_opt = make(model), make(eager)
    micro = [(x.cuda(), y.cuda()) for x, y in _batches(2 * accumulation_steps)]
    step = fuse.compile_step(model, F.cross_entropy, micro[0], optimizer=fuse_opt, amp=None, cache_dir=tmp_path,
                             max_grad_norm=max_grad_norm, accumulation_steps=accumulation_steps)
    for update in range(2):
        group = micro[accumulation_steps * update:accumulation_steps * (update + 1)]
        losses = [step(batch) for batch in group]
        expected, norm = _eager_update(eager, eager_opt, group, max_grad_norm)
        for a, b in zip(losses, expected):
            assert_close(a, b, 1e-4, f"update {update}: loss")
        if norm is not None:
            assert_close(step.last_grad_norm, norm, 1e-4, f"update {update}: norm")
        _compare(model, eager, 1e-4, f"update {update}")


@requires_cuda
def test_gpu_f16_clipping_runs_and_skips_on_overflow(tmp_path):
    model = _mlp().cuda()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batches = [(x.cuda(), y.cuda()) for x, y in _batches(2)]
    step = fuse.compile_step(model, F.cross_entropy, batches[0], optimizer=optimizer, amp="f16", cache_dir=tmp_path,
                             max_grad_norm=0.5)
    step(batches[0])
    assert not bool(step.found_inf) and torch.isfinite(step.last_grad_norm)
    before = [p.detach().clone() for p in model.parameters()]
    step._buffers["carried"]["loss_scale"].fill_(3e38)
    step(batches[1])
    assert bool(step.found_inf)
    assert all(torch.equal(a, p) for a, p in zip(before, model.parameters()))


@requires_cuda
def test_gpu_graph_with_the_update_in_a_conditional_node_matches_plain_launches(tmp_path):
    """With clipping and accumulation the update's kernels run after the
    global norm, each returning at once on a micro-batch that only
    accumulates; the captured graph holds them in a CUDA graph conditional
    node that their guard opens on the last micro-batch only. The same step
    launched kernel by kernel (cuda_graphs=False) gives bitwise the same
    losses, norms and parameters, over updates and the micro-batches
    between them."""
    def model():
        torch.manual_seed(0)
        return torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.Tanh(), torch.nn.Linear(128, 128),
                                   torch.nn.Tanh(), torch.nn.Linear(128, 128), torch.nn.Tanh(),
                                   torch.nn.Linear(128, 16)).cuda()
    generator = torch.Generator().manual_seed(7)
    micro = [(torch.randn(32, 64, generator=generator).cuda(), torch.randint(0, 16, (32,), generator=generator).cuda())
             for _ in range(9)]
    models, steps = [], []
    for graphs in (True, False):
        m = model()
        optimizer = torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)
        models.append(m)
        steps.append(fuse.compile_step(m, F.cross_entropy, micro[0], optimizer=optimizer, cache_dir=tmp_path,
                                       max_grad_norm=1.0, accumulation_steps=3, cuda_graphs=graphs))
    assert "changes-when" in steps[0].compiled.plan
    for call, batch in enumerate(micro):
        losses = [step(batch) for step in steps]
        assert torch.equal(losses[0], losses[1]), f"call {call}: loss"
        assert torch.equal(steps[0].last_grad_norm, steps[1].last_grad_norm), f"call {call}: norm"
        for (name, p), q in zip(models[0].named_parameters(), models[1].parameters()):
            assert torch.equal(p, q), f"call {call}: {name}"
    assert steps[0].compiled.session.compile_report()["conditional_runs"] >= 1
    assert steps[1].compiled.session.compile_report()["graph_captures"] == 0
