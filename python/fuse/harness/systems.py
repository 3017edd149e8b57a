"""The systems the harness compares, each turned into a `step()` callable
over the same model, batch and step function.

    eager                     PyTorch, bf16 autocast
    inductor                  torch.compile(step function), default mode
    inductor-reduce-overhead  torch.compile(step function, mode="reduce-overhead")
                              (CUDA graphs through cudagraph trees)
    fuse-compile              torch.compile(step function, backend="fuse"), and with
                              options={"fallback": "error"} when prepared with
                              fuse_fallback="error" (a graph Fuse cannot compile
                              then fails the row instead of running eagerly)
    fuse-step                 training: fuse.compile_step(model, loss_fn, batch,
                              amp="bf16"); inference: fuse.compile of the
                              model's exported inference graph (amp="bf16",
                              logits returned in bf16 as autocast returns them)

The step function is the same Python function for eager and the three
torch.compile systems, with the model *and* the loss inside the compiled
region: `loss_fn(model(*inputs), *targets)` under bf16 autocast (training;
the caller then runs `loss.backward()` with every `param.grad` set to None
first), or `logits(model(*inputs))` under autocast and torch.no_grad
(inference). fuse.compile_step takes the same model and loss_fn and
compiles forward, loss and backward as one graph, writing `param.grad`.
No system runs an optimizer, unless the workload declares a recipe.

A workload with a recipe (workloads.Recipe: bert-hf) trains by whole
optimizer steps, and each system builds the step a user of it would write
(`prepare_recipe`): for eager and the torch.compile systems the loop over
the recipe's micro-batches, the same compiled step function (model and
loss) for each, `(loss / N).backward()` after it, then
`torch.nn.utils.clip_grad_norm_`, `optimizer.step()` and
`optimizer.zero_grad()`, all eager around the compiled forward and loss;
for fuse-step `fuse.compile_step(model, loss_fn, micro-batch,
optimizer=..., max_grad_norm=..., accumulation_steps=N)`, called once per
micro-batch, the Nth call clipping and updating inside its graph. Each
system gets a fresh optimizer of the recipe (`Recipe.build_optimizer`); a
step returns the mean of its micro-batches' losses.
"""

import dataclasses
import time

from .workloads import call_arguments, target_arguments, to_device

SYSTEMS = ("eager", "inductor", "inductor-reduce-overhead", "fuse-compile", "fuse-step")
COMPILERS = SYSTEMS[1:]


@dataclasses.dataclass
class Prepared:
    """step() runs one step and returns its value (the loss, or the
    logits); fallbacks() counts the graphs a compiler ran eagerly instead;
    phases() says where Fuse's compile time went ({} for the others)."""
    step: object
    fallbacks: object = lambda: 0  # noqa: E731
    close: object = lambda: None  # noqa: E731
    phases: object = dict
    optimizer: object = None  # a recipe's torch optimizer (the errors read its state)


def _torch_compiled(function, system, fuse_fallback="eager"):
    import torch
    if system == "eager":
        return function
    if system == "inductor":
        return torch.compile(function)
    if system == "inductor-reduce-overhead":
        return torch.compile(function, mode="reduce-overhead")
    if system == "fuse-compile":
        import fuse  # noqa: F401  (registers the backend)
        if fuse_fallback == "eager":
            return torch.compile(function, backend="fuse")
        return torch.compile(function, backend="fuse", options={"fallback": fuse_fallback})
    raise ValueError(f"{system} is not a torch.compile system")


def _fuse_fallbacks():
    from .. import backend
    return backend.stats["fallbacks"]


def _fuse_backend_phases():
    from .. import backend
    return dict(backend.stats["seconds"])


def _torch_prepared(step, system, optimizer=None):
    if system == "fuse-compile":
        return Prepared(step, _fuse_fallbacks, phases=_fuse_backend_phases, optimizer=optimizer)
    return Prepared(step, optimizer=optimizer)


def prepare_train(system, built, cache_dir, fuse_fallback="eager"):
    """The training step of `system` on `built` (a workloads.Built on the GPU)."""
    import torch
    if built.recipe is not None:
        return prepare_recipe(system, built, cache_dir, fuse_fallback)
    model = built.model.train()
    params = [p for p in model.parameters() if p.requires_grad]
    if system == "fuse-step":
        import fuse
        batch = (built.train_inputs, built.train_targets)
        compiled = fuse.compile_step(model, built.loss_fn, batch, amp="bf16", cache_dir=cache_dir)
        return Prepared(lambda: compiled(batch), close=compiled.close, phases=lambda: dict(compiled.timings))

    loss_fn = built.loss_fn

    def step_function(args, kwargs, targets):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return loss_fn(model(*args, **kwargs), *targets)

    runner = _torch_compiled(step_function, system, fuse_fallback)
    args, kwargs = call_arguments(built.train_inputs)
    targets = target_arguments(built.train_targets)
    mark_step = _step_marker(system)

    def step():
        for p in params:
            p.grad = None
        mark_step()
        loss = runner(args, kwargs, targets)
        loss.backward()
        return loss

    return _torch_prepared(step, system)


def prepare_recipe(system, built, cache_dir, fuse_fallback="eager"):
    """The optimizer step of `system` on `built`, whose recipe says how
    (see the module's docstring); step() returns the mean loss of its
    micro-batches."""
    import torch
    recipe = built.recipe
    model = built.model.train()
    optimizer = recipe.build_optimizer(model)
    batches = built.training_batches()
    count = len(batches)
    if system == "fuse-step":
        import fuse
        compiled = fuse.compile_step(model, built.loss_fn, batches[0], optimizer=optimizer, amp="bf16",
                                     cache_dir=cache_dir, max_grad_norm=recipe.max_grad_norm,
                                     accumulation_steps=count)

        def step():
            total = None
            for batch in batches:
                loss = compiled(batch)
                total = loss if total is None else total + loss
            if not compiled.updated:
                raise RuntimeError(f"compile_step did not update after {count} micro-batches (micro_step "
                                   f"{compiled.micro_step})")
            return total / count
        return Prepared(step, close=compiled.close, phases=lambda: dict(compiled.timings), optimizer=optimizer)

    loss_fn = built.loss_fn
    params = [p for p in model.parameters() if p.requires_grad]

    def step_function(args, kwargs, targets):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return loss_fn(model(*args, **kwargs), *targets)

    runner = _torch_compiled(step_function, system, fuse_fallback)
    calls = [(call_arguments(inputs), target_arguments(targets)) for inputs, targets in batches]
    mark_step = _step_marker(system)
    # CUDA graph trees hand the backward's gradients out in memory that the
    # next replay overwrites: a micro-batch's gradient that autograd keeps
    # as a `param.grad` it found None is overwritten by the next one's
    # (torch issue 169545: silently wrong sums, or "accessing tensor output
    # of CUDAGraphs that has been overwritten"). A user of reduce-overhead
    # with accumulation keeps the gradients allocated, so that autograd adds
    # every micro-batch's into them in place, and zeroes them after the
    # update instead of dropping them.
    keep_grads = system == "inductor-reduce-overhead"
    if keep_grads:
        for p in params:
            p.grad = torch.zeros_like(p)

    def step():
        total = None
        for (args, kwargs), targets in calls:
            mark_step()
            loss = runner(args, kwargs, targets) / count  # a new tensor: not a CUDA graph's output
            loss.backward()
            total = loss.detach() if total is None else total + loss.detach()
        if recipe.max_grad_norm is not None:
            torch.nn.utils.clip_grad_norm_(params, recipe.max_grad_norm)
        optimizer.step()
        optimizer.zero_grad(set_to_none=not keep_grads)
        return total

    return _torch_prepared(step, system, optimizer)


def prepare_infer(system, built, cache_dir, fuse_fallback="eager"):
    """The inference step of `system` on `built`: the logits, bf16."""
    import torch
    model = built.model.eval()
    if system == "fuse-step":
        import fuse
        from ..export import export_module
        # The exporter traces on the CPU (a Fuse graph has no device).
        device = next(model.parameters()).device
        cpu_inputs = to_device(built.infer_inputs, "cpu")
        started = time.perf_counter()
        text = export_module(model.cpu(), cpu_inputs, mode="infer")
        exported = time.perf_counter() - started
        model.to(device)
        compiled = fuse.compile(text, amp="bf16", amp_results=True, cache_dir=cache_dir)
        args, kwargs = call_arguments(built.infer_inputs)
        # The parameters themselves, as a user passes them: check_inputs
        # passes a Parameter it has seen at the same address without a check
        # (a detached copy would be checked again on every call, about 1.5
        # us per tensor on the critical path of a synchronized step).
        tensors = list(model.parameters()) + list(args) + list(kwargs.values())

        def step():
            return built.logits(compiled(*tensors))
        return Prepared(step, close=compiled.close, phases=lambda: dict(compiled.timings, export=exported))

    logits = built.logits

    def step_function(args, kwargs):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            return logits(model(*args, **kwargs))

    runner = _torch_compiled(step_function, system, fuse_fallback)
    args, kwargs = call_arguments(built.infer_inputs)
    mark_step = _step_marker(system)

    def step():
        with torch.no_grad():
            mark_step()
            return runner(args, kwargs)

    return _torch_prepared(step, system)


def _step_marker(system):
    """cudagraph trees need to know where a step begins when one step's
    outputs may still be alive at the next (torch's documented call)."""
    import torch
    if system == "inductor-reduce-overhead":
        return torch.compiler.cudagraph_mark_step_begin
    return lambda: None


def prepare(system, mode, built, cache_dir=None, fuse_fallback="eager"):
    """The step of `system` in `mode` on `built`. fuse_fallback: the
    fuse-compile system's "fallback" option, "eager" (the backend's default)
    or "error"."""
    if system not in SYSTEMS:
        raise ValueError(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
    if mode not in ("train", "infer"):
        raise ValueError(f"mode must be 'train' or 'infer', not {mode!r}")
    if fuse_fallback not in ("eager", "error"):
        raise ValueError(f"fuse_fallback must be 'eager' or 'error', not {fuse_fallback!r}")
    return (prepare_train if mode == "train" else prepare_infer)(system, built, cache_dir, fuse_fallback)
