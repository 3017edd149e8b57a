"""The optimizers fuse.compile_step runs inside the graph, step by step
against their eager `optimizer.step()`: SGD (momentum, dampening,
Nesterov, weight decay, maximize), Adam (L2 weight decay), AdamW with
parameter groups of their own learning rate and weight decay under an LR
scheduler, Adafactor (factored second moments, as torch.optim.Adafactor;
on a torch without it, against a transcription of its algorithm) and
fuse.optim.Lion; parameters outside the optimizer; options the step
cannot run. Runs on the CPU reference interpreter (step_interpreter.py);
the GPU variants skip, with the reason, without a CUDA GPU."""

import copy
import math

import pytest
import torch
import torch.nn.functional as F

import fuse
from conftest import relative_error, requires_cuda
from step_interpreter import on_interpreter

TORCH_ADAFACTOR = getattr(torch.optim, "Adafactor", None)


class _Net(torch.nn.Module):
    """A linear layer, a tanh and a head whose weight is the sum of a 3-d
    parameter (so Adafactor factors over the last two of three dims)."""

    def __init__(self):
        super().__init__()
        self.hidden = torch.nn.Linear(8, 16)
        self.head = torch.nn.Parameter(torch.randn(2, 4, 16) * 0.2)
        self.bias = torch.nn.Parameter(torch.zeros(4))

    def forward(self, x):
        return F.linear(torch.tanh(self.hidden(x)), self.head.sum(0), self.bias)


def _net(seed=0):
    torch.manual_seed(seed)
    return _Net()


def _batches(count, seed=1):
    generator = torch.Generator().manual_seed(seed)
    return [(torch.randn(6, 8, generator=generator), torch.randint(0, 4, (6,), generator=generator))
            for _ in range(count)]


def _eager_step(model, optimizer, batch):
    optimizer.zero_grad(set_to_none=True)
    loss = F.cross_entropy(model(batch[0]), batch[1])
    loss.backward()
    optimizer.step()
    return loss.detach()


def _run_both(make_optimizer, tmp_path, steps=3, tolerance=1e-4, schedule=None, device="cpu", model=None):
    """Trains two copies of the net `steps` steps, eagerly and through the
    compiled step, and checks loss, parameters and optimizer state after
    every step. Returns (fuse model, fuse optimizer, step)."""
    model = (model or _net()).to(device)
    eager = copy.deepcopy(model)
    fuse_opt, eager_opt = make_optimizer(model), make_optimizer(eager)
    schedulers = [schedule(o) for o in (fuse_opt, eager_opt)] if schedule else []
    batches = [(x.to(device), y.to(device)) for x, y in _batches(steps)]
    if device == "cpu":
        step = fuse.compile_step(model, F.cross_entropy, batches[0], optimizer=fuse_opt, arch="sm_90a",
                                 cache_dir=False)
        on_interpreter(step, tmp_path)
    else:
        step = fuse.compile_step(model, F.cross_entropy, batches[0], optimizer=fuse_opt, amp=None,
                                 cache_dir=tmp_path)
    for i, batch in enumerate(batches):
        loss = step(batch)
        expected = _eager_step(eager, eager_opt, batch)
        assert relative_error(loss, expected) <= tolerance, f"step {i}: loss"
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            assert relative_error(p, q) <= tolerance, f"step {i}: {name}"
            state, reference = fuse_opt.state.get(p, {}), eager_opt.state.get(q, {})
            for key, value in reference.items():
                if isinstance(value, torch.Tensor) and value.dim() > 0:
                    assert key in state, f"step {i}: {name} has no {key}"
                    assert relative_error(state[key], value) <= tolerance, f"step {i}: {key} of {name}"
                elif key == "step":
                    assert float(state[key]) == float(value), f"step {i}: step of {name}"
        for scheduler in schedulers:
            scheduler.step()
    return model, fuse_opt, step


# -- SGD ------------------------------------------------------------------------------------

@pytest.mark.parametrize("options", [
    dict(),
    dict(momentum=0.9),
    dict(momentum=0.9, nesterov=True, weight_decay=1e-2),
    dict(momentum=0.8, dampening=0.3, weight_decay=1e-2),
    dict(momentum=0.9, maximize=True),
], ids=["plain", "momentum", "nesterov-decay", "dampening", "maximize"])
def test_sgd_matches_torch_step_by_step(options, tmp_path):
    model, optimizer, step = _run_both(lambda m: torch.optim.SGD(m.parameters(), lr=0.1, **options), tmp_path)
    names = step.compiled.input_names
    assert any(n.startswith("momentum_buffer.") for n in names) == bool(options.get("momentum"))
    assert ("step" in names) == bool(options.get("dampening")), "a step count only where the first step differs"


# -- Adam, AdamW, parameter groups, LR schedulers ------------------------------------------------

def test_adam_with_l2_weight_decay_matches_torch(tmp_path):
    _run_both(lambda m: torch.optim.Adam(m.parameters(), lr=1e-2, betas=(0.8, 0.9), weight_decay=0.05), tmp_path)


def _groups(model, lrs=(1e-2, 3e-3), decays=(0.1, 0.0)):
    matrices = [p for p in model.parameters() if p.dim() >= 2]
    vectors = [p for p in model.parameters() if p.dim() < 2]
    return [{"params": matrices, "lr": lrs[0], "weight_decay": decays[0]},
            {"params": vectors, "lr": lrs[1], "weight_decay": decays[1], "betas": (0.8, 0.95)}]


def test_adamw_groups_with_their_own_lr_and_decay_under_a_scheduler(tmp_path):
    schedule = lambda o: torch.optim.lr_scheduler.LambdaLR(o, [lambda s: 1.0 / (s + 1), lambda s: 0.5 ** s])  # noqa
    model, optimizer, step = _run_both(lambda m: torch.optim.AdamW(_groups(m)), tmp_path, steps=4, schedule=schedule)
    assert {"lr.0", "lr.1"} <= set(step.compiled.input_names)
    assert optimizer._step_count == 4  # LR schedulers see the optimizer stepped (no warning)
    assert float(step._buffers["lr.1"]) == pytest.approx(3e-3 * 0.5 ** 3)


def test_parameters_outside_the_optimizer_are_left_alone(tmp_path):
    def make(model):
        return torch.optim.AdamW([model.hidden.weight, model.hidden.bias], lr=1e-2)
    model = _net()
    frozen = [model.head.detach().clone(), model.bias.detach().clone()]
    model, optimizer, step = _run_both(make, tmp_path, model=model)
    assert torch.equal(model.head, frozen[0]) and torch.equal(model.bias, frozen[1])
    names = step.compiled.input_names
    assert "exp_avg.hidden.weight" in names and "exp_avg.head" not in names and "exp_avg.bias" not in names
    assert "head" not in step.compiled.output_names and "hidden.weight" in step.compiled.output_names


def test_a_changed_hyperparameter_asks_for_a_new_compile(tmp_path):
    model = _net()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    batch = _batches(1)[0]
    step = on_interpreter(fuse.compile_step(model, F.cross_entropy, batch, optimizer=optimizer, arch="sm_90a",
                                            cache_dir=False), tmp_path)
    step(batch)
    optimizer.param_groups[0]["lr"] = 0.05  # read at every call: fine
    step(batch)
    optimizer.param_groups[0]["momentum"] = 0.5
    with pytest.raises(ValueError, match=r"SGD's momentum in parameter group 0 changed from 0.9 to 0.5.*"
                                         r"compile the step again"):
        step(batch)


def test_options_the_step_cannot_run_are_refused():
    model = _net()
    batch = _batches(1)[0]
    with pytest.raises(ValueError, match=r"AdamW\(amsgrad=True\) is not supported"):
        fuse.compile_step(model, F.cross_entropy, batch, arch="sm_90a",
                          optimizer=torch.optim.AdamW(model.parameters(), amsgrad=True))
    with pytest.raises(ValueError, match="nesterov=True"):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, nesterov=True)
        optimizer.param_groups[0]["dampening"] = 0.5
        fuse.compile_step(model, F.cross_entropy, batch, arch="sm_90a", optimizer=optimizer)


# -- Lion -------------------------------------------------------------------------------------

def test_lion_matches_its_eager_step(tmp_path):
    def make(model):
        groups = _groups(model, lrs=(1e-3, 3e-4), decays=(1.0, 0.0))
        groups[1]["betas"] = (0.95, 0.98)
        return fuse.optim.Lion(groups, betas=(0.9, 0.99))
    _run_both(make, tmp_path, steps=4)


def test_lion_eager_step_is_the_published_rule():
    torch.manual_seed(0)
    p = torch.nn.Parameter(torch.randn(5))
    p.grad = torch.randn(5)
    m = torch.randn(5)
    optimizer = fuse.optim.Lion([p], lr=0.1, betas=(0.9, 0.99), weight_decay=0.5)
    optimizer.state[p]["exp_avg"] = m.clone()
    before = p.detach().clone()
    optimizer.step()
    expected = before * (1 - 0.1 * 0.5) - 0.1 * torch.sign(0.9 * m + 0.1 * p.grad)
    assert torch.allclose(p.detach(), expected)
    assert torch.allclose(optimizer.state[p]["exp_avg"], 0.99 * m + 0.01 * p.grad)


# -- Adafactor --------------------------------------------------------------------------------

class _ReferenceAdafactor(torch.optim.Optimizer):
    """torch.optim.Adafactor's single-tensor algorithm (torch 2.5+), written
    out for a torch that lacks it: the step count t, 1 - beta2_t = t^decay,
    rho = min(lr, 1/sqrt(t)), alpha = max(eps2, RMS(p)) * rho, decoupled
    decay lr * wd, row/column means of g^2 (over the last two dims) or a
    full variance, the estimate R C / max(mean(R), eps1), the update
    g / max(sqrt(V), eps1), scaled down to RMS d."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0, weight_decay=0.0, *,
                 foreach=None, maximize=False):
        super().__init__(params, dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d, weight_decay=weight_decay,
                                      foreach=foreach, maximize=maximize))
        self.denominators = []  # each update's max(1, RMS / d): above 1 where it was clipped

    @torch.no_grad()
    def step(self, closure=None):
        for group in self.param_groups:
            eps1, eps2 = group["eps"]
            lr = group["lr"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                grad = -p.grad if group["maximize"] else p.grad
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    if grad.dim() > 1:
                        state["row_var"] = grad.new_zeros(grad.shape[:-1] + (1,))
                        state["col_var"] = grad.new_zeros(grad.shape[:-2] + (1,) + grad.shape[-1:])
                    else:
                        state["variance"] = torch.zeros_like(grad)
                eps1 = torch.finfo(p.dtype).eps if eps1 is None else eps1
                state["step"] += 1
                t = float(state["step"])
                weight = t ** group["beta2_decay"]
                rho = min(lr, 1 / t ** 0.5)
                alpha = max(eps2, float(p.norm(2)) / p.numel() ** 0.5) * rho
                if group["weight_decay"]:
                    p.mul_(1 - lr * group["weight_decay"])
                if grad.dim() > 1:
                    row, col = state["row_var"], state["col_var"]
                    row.lerp_((grad * grad).mean(dim=-1, keepdim=True), weight)
                    col.lerp_((grad * grad).mean(dim=-2, keepdim=True), weight)
                    estimate = (row @ col) / row.mean(dim=-2, keepdim=True).clamp(min=eps1)
                else:
                    state["variance"].lerp_(grad * grad, weight)
                    estimate = state["variance"].clone()
                update = estimate.clamp(min=eps1 * eps1).rsqrt() * grad
                denominator = max(1.0, float(update.norm(2)) / (update.numel() ** 0.5 * group["d"]))
                self.denominators.append(denominator)
                p.add_(update, alpha=-alpha / denominator)


@pytest.fixture
def adafactor(monkeypatch):
    """torch.optim.Adafactor, or the transcription where torch lacks it."""
    if TORCH_ADAFACTOR is None:
        monkeypatch.setattr(torch.optim, "Adafactor", _ReferenceAdafactor, raising=False)
        print("torch.optim.Adafactor needs torch >= 2.5: checked against a transcription of its algorithm")
    return torch.optim.Adafactor


# d = 1.02 (torch 2.11 refuses d < 1): on this net some updates' RMS is
# above it (clipped) and some below.
@pytest.mark.parametrize("options", [dict(), dict(lr=0.05, weight_decay=0.1, d=1.02, eps=(1e-30, 1e-3)),
                                     dict(maximize=True, beta2_decay=-0.6)], ids=["defaults", "decay", "maximize"])
def test_adafactor_matches_torch_step_by_step(adafactor, options, tmp_path):
    model, optimizer, step = _run_both(lambda m: adafactor(m.parameters(), **options), tmp_path, steps=4,
                                       tolerance=2e-4)
    if "d" in options:  # the clipping path is taken, and not always
        net = _net()
        reference = _ReferenceAdafactor(net.parameters(), **options)
        for batch in _batches(4):
            _eager_step(net, reference, batch)
        assert max(reference.denominators) > 1 and min(reference.denominators) == 1, reference.denominators
    names = step.compiled.input_names
    assert "row_var.head" in names and "col_var.head" in names and "variance.bias" in names
    assert tuple(optimizer.state[model.head]["row_var"].shape) == (2, 4, 1)
    assert tuple(optimizer.state[model.head]["col_var"].shape) == (2, 1, 16)


def test_the_reference_adafactor_is_torchs_where_torch_has_it():
    if TORCH_ADAFACTOR is None:
        pytest.skip(f"torch {torch.__version__} has no torch.optim.Adafactor (torch >= 2.5; the GPU machine)")
    models = [_net(), _net()]
    optimizers = [TORCH_ADAFACTOR(models[0].parameters(), weight_decay=0.1),
                  _ReferenceAdafactor(models[1].parameters(), weight_decay=0.1)]
    for batch in _batches(3):
        for model, optimizer in zip(models, optimizers):
            _eager_step(model, optimizer, batch)
    for p, q in zip(*(m.parameters() for m in models)):
        assert relative_error(p, q) <= 1e-6


# -- on the GPU -------------------------------------------------------------------------

GPU_OPTIMIZERS = {
    "sgd-nesterov": lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "sgd-dampening": lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.8, dampening=0.3),
    "adam-l2": lambda m: torch.optim.Adam(m.parameters(), lr=1e-2, weight_decay=0.05),
    "adamw-groups": lambda m: torch.optim.AdamW(_groups(m)),
    "lion": lambda m: fuse.optim.Lion(_groups(m, lrs=(1e-3, 3e-4), decays=(1.0, 0.0))),
    "adafactor": lambda m: TORCH_ADAFACTOR(m.parameters(), weight_decay=0.1),
}


@requires_cuda
@pytest.mark.parametrize("name", sorted(GPU_OPTIMIZERS))
def test_gpu_optimizers_match_torch(name, tmp_path):
    if name == "adafactor" and TORCH_ADAFACTOR is None:
        pytest.skip(f"torch {torch.__version__} has no torch.optim.Adafactor (needs torch >= 2.5)")
    torch.backends.cuda.matmul.allow_tf32 = False
    schedule = (lambda o: torch.optim.lr_scheduler.StepLR(o, 1, gamma=0.5)) if name == "adamw-groups" else None
    _run_both(GPU_OPTIMIZERS[name], tmp_path, steps=4, tolerance=2e-4, schedule=schedule, device="cuda")


@requires_cuda
def test_gpu_lion_trains_with_bf16(tmp_path):
    model = _net().cuda()
    optimizer = fuse.optim.Lion(model.parameters(), lr=3e-3)
    batch = tuple(t.cuda() for t in _batches(1)[0])
    step = fuse.compile_step(model, F.cross_entropy, batch, optimizer=optimizer, cache_dir=tmp_path)
    losses = [float(step(batch)) for _ in range(20)]
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0]
