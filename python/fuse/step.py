"""`fuse.compile_step`: a whole training step (forward, loss, backward and,
optionally, the AdamW update) compiled as one Fuse graph and run on the
model's own tensors.

    step = fuse.compile_step(model, loss_fn, (inputs, targets), optimizer=None, amp="bf16")
    for inputs, targets in batches:
        loss = step(inputs, targets)       # or step((inputs, targets))

The batch: `inputs` is what the model takes (a tensor, a tuple of positional
arguments or a dict of keyword arguments) and `targets` what `loss_fn` takes
after the model's output (a tensor, a tuple, a dict whose values are passed
in order, or None): `loss_fn(model(*inputs), *targets)` must be a scalar.
Every later batch must have the example's structure, dtypes and shapes (a
step is compiled for static shapes; compile another step for another shape).

Zero copy: the parameters' memory is bound directly (`param.data_ptr()`),
and so are the gradients and the optimizer state.
  - Without an optimizer the step writes each gradient into `param.grad`
    (allocated once if it is None and reused: `zero_grad(set_to_none=True)`
    costs nothing). The step *sets* the gradient, it does not add to it:
    accumulating over micro-batches needs the sum done by the caller.
  - With a `torch.optim.AdamW` (or `torch.optim.Adam` without weight decay)
    the step also updates the parameters and the optimizer's `exp_avg`,
    `exp_avg_sq` and `step` in place, exactly as `optimizer.step()` would
    (decoupled weight decay per parameter group; one learning rate, read from
    the optimizer at every call, so LR schedulers work). Do not call
    `optimizer.step()` as well. `param.grad` is then not written: the
    gradients live only inside the step. The graph is exported with the
    parameters and moments donated, so each update is planned in the memory
    it replaces and bound to it (the runtime skips the copy); a result the
    plan could not put in place is written to a buffer and copied back.
The batch is copied into the step's own buffers (a few KB) and the loss
comes back as a fresh tensor: with stable pointers the runtime replays one
captured CUDA graph every step instead of capturing a new one. The first
call checks and binds every tensor; later calls reuse that binding while
the parameters keep their memory and the gradients and optimizer state
bound are still in place (anything moved or replaced is bound and checked
again), so a call costs the host a fraction of a millisecond.

Data parallel (process_group=pg, torch.distributed initialized, one GPU per
process): every rank starts from rank 0's parameters and buffers (broadcast,
as DDP does), and the ranks check before compiling that they compile the
same step (FuseError on every rank otherwise). The step writes the gradients
into flat buckets (`param.grad` are views of them; bucket_cap_mb, default
25) and all-reduces each bucket (the average over the group) as soon as the
step has written its last gradient, overlapping the rest of the backward
(overlap_grad_reduce=False waits for the whole step); then, with an
optimizer, calls `optimizer.step()` (any torch optimizer: the update runs
after the all-reduce, outside the graph). See fuse/distributed.py.

Randomness (dropout, attention dropout): the graph's random ops read a
Philox seed and counter offset as inputs (`rng.seed`, `rng.offset`), which
every call writes into the step's own buffers with fresh values from torch's
default generator of the device, advancing it past the counters the step
uses (see fuse/_step_rng.py): calls draw different bits, the step's bits
never overlap torch's, and `torch.manual_seed(s)` makes a run reproducible.
The bits are not torch's own (Fuse's Philox layout differs), only their
distribution is.

f16 mixed precision adds dynamic loss scaling inside the graph: the scale
and its growth tracker are carried from step to step here, and
`step.found_inf` says whether the last step overflowed (it then changed
nothing).
"""

import dataclasses
import time

import torch

from . import _capi, compiler, distributed
from ._step_rng import StepRandomness
from ._steps import Step
from ._tracing import AdamW
from .errors import FuseError
from .export import export_step

__all__ = ["compile_step", "TrainStep"]

# Initial values of state the pipeline adds to a step (LossScaling.cpp):
# torch.cuda.amp.GradScaler's defaults.
_CARRIED_STATE = {"loss_scale": 2.0 ** 16, "loss_scale.growth_tracker": 0.0}


@dataclasses.dataclass
class _TorchAdamW(AdamW):
    """torch.optim.AdamW's update with each parameter's weight decay as its
    optimizer group gives it (the exporter's AdamW decays matrices only)."""
    decays: tuple = ()

    def decay(self, index, param):
        return self.decays[index]


def _adamw_from(optimizer, params, names):
    """(update rule, learning rate) matching a torch optimizer's groups."""
    kind = type(optimizer).__name__
    if not isinstance(optimizer, (torch.optim.AdamW, torch.optim.Adam)):
        raise TypeError(f"compile_step compiles the AdamW update; {kind} is not supported "
                        "(pass optimizer=None to get gradients and step it yourself)")
    groups = {}
    for group in optimizer.param_groups:
        for p in group["params"]:
            groups[id(p)] = group
    missing = [n for n, p in zip(names, params) if id(p) not in groups]
    if missing:
        raise ValueError(f"the step updates every parameter, but {len(missing)} are not in the optimizer "
                         f"(first: {missing[0]})")
    first = optimizer.param_groups[0]
    for group in optimizer.param_groups:
        for key, default in (("amsgrad", False), ("maximize", False)):
            if group.get(key, default):
                raise ValueError(f"{kind}({key}=True) is not supported by compile_step")
        if tuple(group["betas"]) != tuple(first["betas"]) or group["eps"] != first["eps"]:
            raise ValueError("compile_step needs the same betas and eps in every parameter group")
        if float(group["lr"]) != float(first["lr"]):
            raise ValueError("compile_step takes one learning rate: the parameter groups differ "
                             f"({float(first['lr'])} and {float(group['lr'])})")
        if isinstance(optimizer, torch.optim.Adam) and not isinstance(optimizer, torch.optim.AdamW) \
                and group["weight_decay"]:
            raise ValueError("torch.optim.Adam's weight decay is L2 in the gradient, which compile_step "
                             "does not compile; use torch.optim.AdamW (decoupled weight decay)")
    decays = tuple(float(groups[id(p)]["weight_decay"]) if isinstance(optimizer, torch.optim.AdamW) else 0.0
                   for p in params)
    rule = _TorchAdamW(betas=tuple(float(b) for b in first["betas"]), eps=float(first["eps"]),
                       weight_decay=0.0, decays=decays)
    return rule, float(first["lr"])


def _to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: _to_cpu(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_to_cpu(v) for v in value)
    return value


def _cpu_module(module):
    """A copy of `module` on the CPU, made without a second copy on the GPU
    (its parameters and buffers are copied straight to the CPU)."""
    import copy
    memo = {}
    for p in module.parameters():
        memo[id(p)] = torch.nn.Parameter(p.detach().cpu(), requires_grad=p.requires_grad)
    for b in module.buffers():
        memo[id(b)] = b.detach().cpu()
    return copy.deepcopy(module, memo)


def _split_batch(args):
    """(inputs, targets) from step(batch) or step(inputs, targets)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)) and len(args[0]) == 2:
        return args[0][0], args[0][1]
    if len(args) == 2:
        return args[0], args[1]
    raise TypeError("call the step with (inputs, targets) or a batch tuple (inputs, targets)")


def _flatten(part, what):
    """The tensors of an inputs/targets part, in the order the step takes
    them."""
    if part is None:
        return []
    if isinstance(part, torch.Tensor):
        return [part]
    if isinstance(part, dict):
        return list(part.values())
    if isinstance(part, (tuple, list)):
        return list(part)
    raise TypeError(f"the batch's {what} must be a tensor, a tuple or a dict, not {type(part).__name__}")


class TrainStep:
    """A compiled training step bound to a model (and optimizer). Call it
    with a batch; it returns the loss (a fresh 0-d tensor on the device).

    Attributes: `compiled` (the CompiledGraph), `signature`, `plan`,
    `compile_seconds`, `timings`, `text` (the exported graph), `found_inf`
    (f16 loss scaling only).
    """

    def __init__(self, model, loss_fn, example_batch, optimizer=None, *, amp="bf16", memory_budget=None,
                 cuda_graphs=True, profile=False, cache_dir=None, arch=None, pipeline=None, index_bounds=None,
                 progress=True, max_arena_bytes=None, process_group=None,
                 bucket_cap_mb=distributed.DEFAULT_BUCKET_CAP_MB, overlap_grad_reduce=True,
                 sparse_embedding_grads=True):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"compile_step takes an nn.Module, not {type(model).__name__}")
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        # Data parallel: the optimizer steps after the all-reduce, outside
        # the graph; alone, an AdamW update is part of the graph.
        self._fused_optimizer = optimizer if process_group is None else None
        self.process_group, self._reducer, self._sparse_plan = process_group, None, []
        self._sparse_embeddings, self._sparse_inputs = {}, []
        if process_group is not None:
            distributed.prepare_model(model, process_group)
            if sparse_embedding_grads:
                self._sparse_embeddings = distributed.sparse_embedding_candidates(model, process_group)
        named = list(model.named_parameters())
        self.param_names = [n for n, _ in named]
        self.params = [p for _, p in named]
        if not isinstance(example_batch, (tuple, list)) or len(example_batch) != 2:
            raise TypeError("example_batch must be (inputs, targets): inputs for the model, targets for "
                            "loss_fn after the model's output (None if it takes none)")
        inputs, targets = example_batch
        if isinstance(targets, torch.Tensor):
            targets = (targets,)
        rule, lr = (None, None)
        state = None
        if self._fused_optimizer is not None:
            rule, lr = _adamw_from(optimizer, self.params, self.param_names)
            state = self._optimizer_state_example(lr)
        self._lr_value = lr

        started = time.perf_counter()
        try:
            self._export(inputs, targets, rule, state, index_bounds)
            failure = None
        except Exception as error:  # every rank must hear of it, not wait for this one
            if process_group is None:
                raise
            failure = error
        export_seconds = time.perf_counter() - started
        if process_group is not None:
            options = dict(amp=amp, memory_budget=memory_budget, pipeline=pipeline, arch=arch,
                           max_arena_bytes=max_arena_bytes, bucket_cap_mb=bucket_cap_mb,
                           overlap_grad_reduce=overlap_grad_reduce, sparse_embedding_grads=sparse_embedding_grads)
            batch = _flatten(inputs, "inputs") + _flatten(targets, "targets")
            summary = distributed.rank_summary(None if failure else self.text, options, self.param_names,
                                               batch, failure)
            try:
                distributed.check_ranks_agree(process_group, summary)
            except FuseError as error:
                raise error from failure
        self.compiled = compiler.compile(
            self.text, amp=amp, memory_budget=memory_budget, cuda_graphs=cuda_graphs, profile=False,
            cache_dir=cache_dir, arch=arch, pipeline=pipeline, name=f"{type(model).__name__} step",
            max_arena_bytes=max_arena_bytes, progress=progress)
        self.compiled.timings["export"] = export_seconds
        self.compiled.compile_seconds += export_seconds
        self.profile_first_call, self.last_profile = profile, None
        self._plan_bindings()
        if process_group is not None:
            gradients = [(spec.index, self.params[key]) for spec, (kind, key) in zip(self.compiled.outputs,
                                                                                  self._out_plan)
                         if kind == "grad" and self.params[key].requires_grad]
            self._reducer = distributed.GradientReducer(self.compiled, gradients, process_group, bucket_cap_mb,
                                                        overlap_grad_reduce)
            modules = dict(model.named_modules())
            self._sparse_plan = [(name, next(i for i, p in enumerate(self.params) if p is modules[name].weight),
                                  batch_index, modules[name].padding_idx)
                                 for name, batch_index in self._sparse_inputs]
        self._buffers = None
        self.found_inf = None

    def _export(self, inputs, targets, rule, state, index_bounds):
        """Sets batch_names, _n_inputs and text (the exported graph)."""
        # Exported from a CPU copy, as `python -m fuse.export` does: a Fuse
        # graph has no device, and models take device-specific paths on the
        # GPU (attention variants, masks built on the device) that the
        # exporter does not take whole.
        step = Step(_cpu_module(self.model), _to_cpu(inputs), "train", self.loss_fn, _to_cpu(targets), rule,
                    _to_cpu(state), sparse_embeddings=self._sparse_embeddings)
        self.batch_names = step.arg_names[len(self.params):len(self.params) + step._n_inputs + step._n_targets]
        self._n_inputs = step._n_inputs
        info = {}
        self.text = export_step(step, index_bounds=index_bounds, name=f"{type(self.model).__name__.lower()}_step",
                                donate_state=rule is not None, info=info)
        self._rng_counters = info["rng_counters"]
        # Embeddings whose gradient comes back as rows: (module name, batch
        # index of the ids).
        self._sparse_inputs = list(step.sparse_embedding_inputs)

    # -- what the step reads and writes ---------------------------------------------
    @property
    def signature(self):
        return self.compiled.signature

    @property
    def plan(self):
        return self.compiled.plan

    @property
    def compile_seconds(self):
        return self.compiled.compile_seconds

    @property
    def timings(self):
        return self.compiled.timings

    def _optimizer_state_example(self, lr):
        """Example optimizer state for tracing (CPU, like the export)."""
        return {"exp_avg": [torch.zeros(p.shape, dtype=p.dtype) for p in self.params],
                "exp_avg_sq": [torch.zeros(p.shape, dtype=p.dtype) for p in self.params],
                "lr": torch.tensor(float(lr)), "step": torch.tensor(0.0)}

    def _plan_bindings(self):
        """How each input and output of the signature is bound: a list of
        (kind, key) per side, checked against what this step knows."""
        index = {n: i for i, n in enumerate(self.param_names)}
        batch = {n: j for j, n in enumerate(self.batch_names)}
        self._in_plan, self._out_plan = [], []
        for spec in self.compiled.inputs:
            n = spec.name
            if n in index:
                self._in_plan.append(("param", index[n]))
            elif n in batch:
                self._in_plan.append(("batch", batch[n]))
            elif n.startswith("exp_avg.") and n[8:] in index and self._fused_optimizer is not None:
                self._in_plan.append(("exp_avg", index[n[8:]]))
            elif n.startswith("exp_avg_sq.") and n[11:] in index and self._fused_optimizer is not None:
                self._in_plan.append(("exp_avg_sq", index[n[11:]]))
            elif n in ("lr", "step") and self._fused_optimizer is not None:
                self._in_plan.append((n, None))
            elif n in _CARRIED_STATE:
                self._in_plan.append(("carried", n))
            elif n in ("rng.seed", "rng.offset"):
                self._in_plan.append((n, None))
            else:
                raise FuseError(f"the compiled step takes '{n}' (input #{spec.index}), which compile_step "
                                "cannot bind")
        donated = {o: i for o, i in self.compiled.signature.get("donated", [])}
        self._donated = donated
        for spec in self.compiled.outputs:
            n = spec.name
            if n == "loss":
                self._out_plan.append(("loss", None))
            elif n.startswith("grad.") and n[5:] in index and self._fused_optimizer is None:
                self._out_plan.append(("grad", index[n[5:]]))
            elif n == "found_inf":
                self._out_plan.append(("found_inf", None))
            elif n.startswith("embedding_grad.") and any(n[15:] == name for name, _ in self._sparse_inputs):
                self._out_plan.append(("embedding_grad", n[15:]))
            elif n == "step" and self._fused_optimizer is not None:
                self._out_plan.append(("step_out", None))
            else:
                # An updated argument (parameter, moment, carried state): the
                # output bound to its input's memory where the plan donates
                # it, else to a buffer copied back after the step.
                source = next((i for i, s in enumerate(self.compiled.inputs) if s.name == n), None)
                if source is None:
                    raise FuseError(f"the compiled step returns '{n}' (output #{spec.index}), which "
                                    "compile_step cannot bind")
                kind = "in_place" if donated.get(spec.index) == source else "copy_back"
                self._out_plan.append((kind, source))

    def _allocate(self, device):
        """The step's own buffers: batch staging, loss, scalars, carried
        state, copy-back buffers, gradients of frozen parameters."""
        buffers = {"batch": [], "carried": {}, "copy_back": {}, "frozen_grad": {}, "embedding_grad": {}}
        for spec, (kind, key) in zip(self.compiled.inputs, self._in_plan):
            if kind == "batch":
                buffers["batch"].append(torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device))
            elif kind == "carried":
                buffers["carried"][key] = torch.full(spec.shape, _CARRIED_STATE[key], dtype=spec.torch_dtype(),
                                                     device=device)
            elif kind == "lr":
                buffers["lr"] = torch.full(spec.shape, self._lr_value, dtype=spec.torch_dtype(), device=device)
            elif kind == "step":
                buffers["step"] = torch.zeros(spec.shape, dtype=spec.torch_dtype(), device=device)
            elif kind in ("rng.seed", "rng.offset"):
                buffers[kind] = torch.zeros(spec.shape, dtype=spec.torch_dtype(), device=device)
        for spec, (kind, key) in zip(self.compiled.outputs, self._out_plan):
            if kind in ("loss", "found_inf", "step_out"):
                buffers[kind] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
            elif kind == "copy_back":
                buffers["copy_back"][spec.index] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
            elif kind == "grad" and not self.params[key].requires_grad:
                buffers["frozen_grad"][key] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
            elif kind == "embedding_grad":
                buffers["embedding_grad"][key] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
        self._buffers = buffers
        self._randomness = None
        if "rng.seed" in buffers:
            self._randomness = StepRandomness(device, self._rng_counters, buffers["rng.seed"], buffers["rng.offset"])
        self._host_step = None
        self._bound_state = None
        self._binding = None

    # -- optimizer state --------------------------------------------------------------
    def _state_tensors(self):
        """exp_avg, exp_avg_sq and step tensors of every parameter, created as
        torch.optim does where the optimizer has not stepped yet."""
        avgs, sqs, steps = [], [], []
        for p in self.params:
            state = self._fused_optimizer.state[p]
            if "exp_avg" not in state:
                group = next(g for g in self._fused_optimizer.param_groups if any(q is p for q in g["params"]))
                on_device = group.get("fused") or group.get("capturable")
                state["step"] = torch.zeros((), dtype=torch.float32, device=p.device if on_device else "cpu")
                state["exp_avg"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state["exp_avg_sq"] = torch.zeros_like(p, memory_format=torch.preserve_format)
            avgs.append(state["exp_avg"])
            sqs.append(state["exp_avg_sq"])
            steps.append(state["step"])
        return avgs, sqs, steps

    def _sync_optimizer(self):
        """Binds the optimizer's state (again, if it was replaced, e.g. by
        load_state_dict) and carries its learning rate and step count into
        the step's scalars."""
        state = self._fused_optimizer.state
        bound = self._bound_state
        if bound is None or not self._state_still_bound(state):
            avgs, sqs, steps = self._state_tensors()
            values = {float(s) for s in steps}
            if len(values) > 1:
                raise ValueError(f"the optimizer's parameters are at different step counts ({sorted(values)}); "
                                 "the compiled step keeps one")
            for p, n, a, s in zip(self.params, self.param_names, avgs, sqs):
                for what, t in (("exp_avg", a), ("exp_avg_sq", s)):
                    if t.shape != p.shape or t.device != p.device or not t.is_contiguous():
                        raise ValueError(f"optimizer state {what} of '{n}' is {list(t.shape)} on {t.device}; "
                                         f"the step needs {list(p.shape)}, contiguous, on {p.device}")
            steps = self._share_step_counts(steps)
            self._bound_state = (avgs, sqs, steps)
            self._bound_state_dicts = (state, [state[p] for p in self.params])
            self._host_step = None
            self._binding = None
        steps = self._bound_state[2]
        if steps[0].device.type == "cpu":
            value = float(steps[0])
            if value != self._host_step:
                self._buffers["step"].fill_(value)
                self._host_step = value
        elif self._host_step is None:
            self._buffers["step"].copy_(steps[0])
            self._host_step = float(steps[0])
        lrs = {float(g["lr"]) for g in self._fused_optimizer.param_groups}
        if len(lrs) > 1:
            raise ValueError(f"compile_step takes one learning rate; the parameter groups have {sorted(lrs)}")
        lr = lrs.pop()
        if lr != self._lr_value:
            self._buffers["lr"].fill_(lr)
            self._lr_value = lr

    def _share_step_counts(self, steps):
        """The parameters' step counts, where they live on the host, as
        views of one tensor put back into the optimizer's state, so that a
        call advances them all with one add (a _foreach_add_ over GPT-2's
        148 host scalars took 0.75 ms a call). They are all equal here."""
        if steps[0].device.type != "cpu":
            self._step_counts = None
            return steps
        self._step_counts = torch.full((len(steps),), float(steps[0]), dtype=steps[0].dtype)
        views = list(self._step_counts.unbind(0))
        for p, view in zip(self.params, views):
            self._fused_optimizer.state[p]["step"] = view
        return views

    def _state_still_bound(self, state):
        """Whether the optimizer still holds the moments the step bound: a
        new state container (load_state_dict), a replaced per-parameter
        dict or a replaced tensor is caught."""
        container, dicts = self._bound_state_dicts
        if state is not container:
            return False
        avgs, sqs, _ = self._bound_state
        return all(state.get(p) is d and d.get("exp_avg") is a and d.get("exp_avg_sq") is s
                   for p, d, a, s in zip(self.params, dicts, avgs, sqs))

    # -- running ----------------------------------------------------------------------
    def _batch_tensors(self, args):
        inputs, targets = _split_batch(args)
        flat = _flatten(inputs, "inputs") + _flatten(targets, "targets")
        if len(flat) != len(self.batch_names):
            raise TypeError(f"the step takes {len(self.batch_names)} batch tensors ({', '.join(self.batch_names)}); "
                            f"{len(flat)} were given")
        return flat

    def _stage_batch(self, args):
        """Copies the batch into the step's own buffers (checked: dtypes,
        shapes, device)."""
        compiled = self.compiled
        batch = self._batch_tensors(args)
        batch_specs = [s for s, (k, _) in zip(compiled.inputs, self._in_plan) if k == "batch"]
        for spec, tensor, staged in zip(batch_specs, batch, self._buffers["batch"]):
            try:
                tensor = compiler.check_tensor(spec, tensor, compiled.device, contiguous_copy=True)
            except ValueError as error:
                if isinstance(tensor, torch.Tensor) and tuple(tensor.shape) != spec.shape:
                    raise ValueError(f"batch {error}; the step was compiled for the example batch's shapes: "
                                     "compile another step for another shape") from None
                raise
            staged.copy_(tensor, non_blocking=True)

    def _bind(self, args):
        """Stages the batch and returns the _Binding for this call: the last
        one while the model's memory has not moved, else a new one, checked."""
        self.compiled._require_session()
        if self._buffers is None:
            self._allocate(self.compiled.device)
        self._stage_batch(args)
        if self._randomness is not None:
            self._randomness.draw()  # fresh bits every call, from torch's generator
        if self._fused_optimizer is not None:
            self._sync_optimizer()  # drops the binding if the state was replaced
        binding = self._binding
        if binding is None or not binding.holds(self.params):
            binding = self._binding = self._new_binding()
        return binding

    def _new_binding(self):
        """Binds every input and output of the signature to its tensor,
        checking each one (the slow path: the first call, or after the
        parameters, gradients or optimizer state moved)."""
        compiled, buffers = self.compiled, self._buffers
        device = compiled.device
        for p, n in zip(self.params, self.param_names):
            if p.device != device or not p.is_contiguous():
                raise ValueError(f"parameter '{n}' is on {p.device}{'' if p.is_contiguous() else ', not contiguous'}; "
                                 f"the step runs on {device} and binds contiguous parameters")
        if self._fused_optimizer is not None:
            avgs, sqs, _ = self._bound_state
        inputs = []
        for spec, (kind, key) in zip(compiled.inputs, self._in_plan):
            if kind == "param":
                t = self.params[key].data
            elif kind == "batch":
                t = buffers["batch"][key]
            elif kind == "exp_avg":
                t = avgs[key]
            elif kind == "exp_avg_sq":
                t = sqs[key]
            elif kind == "carried":
                t = buffers["carried"][key]
            else:
                t = buffers[kind]
            if t.dtype != spec.torch_dtype() or tuple(t.shape) != spec.shape:
                raise ValueError(f"{spec.label()}: expected {spec.describe()}, got "
                                 f"{compiler.dtype_name(t.dtype)} {list(t.shape)}")
            inputs.append(t)
        outputs, copies, grads = [], [], []
        for spec, (kind, key) in zip(compiled.outputs, self._out_plan):
            if kind == "grad":
                p = self.params[key]
                if not p.requires_grad:
                    t = buffers["frozen_grad"][key]
                elif self._reducer is not None:
                    # Written into its bucket, where the all-reduce finds it.
                    t = self._reducer.views[spec.index]
                    p.grad = t
                    grads.append((p, t, True))
                else:
                    if p.grad is None:
                        p.grad = buffers.setdefault("grads", {}).get(key)
                        if p.grad is None:
                            p.grad = torch.empty_like(p, memory_format=torch.contiguous_format)
                            buffers["grads"][key] = p.grad
                    t = compiler.check_tensor(spec, p.grad, device)
                    grads.append((p, t, False))
            elif kind == "in_place":
                t = inputs[key]
            elif kind == "copy_back":
                t = buffers["copy_back"][spec.index]
                copies.append((inputs[key], t))
            elif kind == "embedding_grad":
                t = buffers["embedding_grad"][key]
            else:
                t = buffers[kind]
            outputs.append(t)
        return _Binding(self.params, inputs, outputs, copies, grads)

    def __call__(self, *batch):
        """Runs one step on `batch` ((inputs, targets), or the two as
        arguments); returns the loss."""
        binding = self._bind(batch)
        self._launch(binding)
        if self._reducer is not None:
            self._reducer.reduce()
            for name, param_index, batch_index, padding_idx in self._sparse_plan:
                self._reducer.add_rows(self.params[param_index].grad, self._buffers["batch"][batch_index],
                                       self._buffers["embedding_grad"][name], padding_idx)
        self._after_step(binding.copies)
        if self.process_group is not None and self.optimizer is not None:
            self.optimizer.step()
        if self.profile_first_call and self.last_profile is None:
            import sys
            self.last_profile = self.profile(*batch)
            print(str(self.last_profile), file=sys.stderr)
        return self._buffers["loss"].clone()

    def _launch(self, binding):
        """Enqueues the compiled step on the bound tensors (the tests swap
        in the CPU reference interpreter here)."""
        self.compiled.run_addresses(binding.addresses)

    def _after_step(self, copies):
        if copies:
            # One multi-tensor copy, not a launch per tensor (hundreds with
            # AdamW: the updates the plan could not place in their input).
            _copy_all(*copies)
        buffers = self._buffers
        if "step_out" in buffers:
            buffers["step"].copy_(buffers["step_out"])
            if self._step_counts is not None:
                self._step_counts.add_(1.0)  # every parameter's count: views of it
            else:
                torch._foreach_add_(self._bound_state[2], 1.0)
            self._host_step = (self._host_step or 0.0) + 1.0
        if "found_inf" in buffers:
            self.found_inf = buffers["found_inf"]

    def profile(self, *batch, warmup=3, iterations=20, counters=True, peak_tflops=None):
        """Profiles the step on `batch` (fuse.profile.Profile). The runs
        work on copies of the parameters and state: nothing of the model or
        optimizer changes."""
        from .profile import Profile
        inputs = [t.clone() for t in self._bind(batch).inputs]
        outputs = self.compiled.allocate_outputs(inputs)
        for spec, (kind, source) in zip(self.compiled.outputs, self._out_plan):
            if kind == "in_place":
                outputs[spec.index] = inputs[source]
        return Profile(*self.compiled.session.profile(
            [t.data_ptr() for t in inputs], [t.data_ptr() for t in outputs], self.compiled.stream(),
            warmup=warmup, iterations=iterations, counters=counters, peak_tflops=peak_tflops))

    def close(self):
        self.compiled.close()
        self._buffers = None

    def __repr__(self):
        return f"<fuse.TrainStep of {type(self.model).__name__}: {self.compiled!r}>"


class _Binding:
    """The tensors one call binds and their addresses, kept for the next
    calls: with the addresses unchanged the runtime replays its captured
    CUDA graph, and checking every tensor again would cost the host more
    than a small step takes on the GPU (about 1,000 tensors for BERT-large
    with AdamW). It holds while every parameter keeps its memory (address
    and strides) and every gradient bound as `param.grad` is still there
    (None is set back to it, as `zero_grad(set_to_none=True)` leaves it);
    a replaced optimizer state is caught by TrainStep._sync_optimizer."""

    def __init__(self, params, inputs, outputs, copies, grads):
        self.inputs, self.outputs = inputs, outputs
        # (destinations, sources) of the copies back after each call.
        self.copies = tuple(list(side) for side in zip(*copies)) if copies else None
        self.addresses = _capi.Addresses([t.data_ptr() for t in inputs], [t.data_ptr() for t in outputs])
        self._param_memory = _param_memory(params)
        self._grads = grads  # (param, tensor, rebind: the step owns param.grad)

    def holds(self, params):
        if _param_memory(params) != self._param_memory:
            return False
        for p, t, rebind in self._grads:
            if p.grad is not t:
                if p.grad is not None and not rebind:
                    return False  # the caller's own gradient tensor: check it
                p.grad = t
        return True


def _copy_all(destinations, sources):
    foreach_copy = getattr(torch, "_foreach_copy_", None)  # torch >= 2.2
    if foreach_copy is not None:
        foreach_copy(destinations, sources)
    else:
        for destination, source in zip(destinations, sources):
            destination.copy_(source)


def _param_memory(params):
    return [(p.data_ptr(), p.stride()) for p in params]


def compile_step(model, loss_fn, example_batch, optimizer=None, **options):
    """Compiles one training step of `model` as a single Fuse graph and
    returns a TrainStep (see this module's docstring for what it binds).

    example_batch  (inputs, targets): inputs for the model (tensor, tuple or
                   dict), targets for loss_fn after the output (tensor,
                   tuple, dict or None)
    optimizer      None (gradients into param.grad) or a torch.optim.AdamW
                   (with a process group: any torch optimizer, stepped
                   after the all-reduce)
    options        those of fuse.compile (amp, memory_budget, cuda_graphs,
                   profile, cache_dir, arch, pipeline, max_arena_bytes),
                   plus index_bounds={input name: N} for integer inputs,
                   and for data parallel training process_group (a
                   torch.distributed group), bucket_cap_mb (25) and
                   overlap_grad_reduce (True)
    """
    return TrainStep(model, loss_fn, example_batch, optimizer, **options)
