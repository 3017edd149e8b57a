"""`fuse.compile_step`: a whole training step (forward, loss, backward and,
optionally, gradient clipping, gradient accumulation and the optimizer's
update) compiled as one Fuse graph and run on the model's own tensors.

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
    costs nothing). The step *sets* the gradient, it does not add to it
    (accumulation_steps below sums micro-batches inside the step).
  - With torch.optim.AdamW, Adam, SGD (momentum, dampening, Nesterov,
    weight decay), Adafactor (torch >= 2.5) or fuse.optim.Lion, the update
    runs inside the graph (fuse/exporter/_optimizers.py) on the optimizer's own state
    tensors (`exp_avg`, `momentum_buffer`, `row_var`...; created as torch
    creates them where the optimizer has not stepped yet) and its `step`
    counts, exactly as `optimizer.step()` would. Each parameter group has
    its own hyperparameters; the learning rates are read from the optimizer
    at every call (LR schedulers work), the other hyperparameters are
    constants of the graph (changing one is an error: compile again).
    Parameters the optimizer does not hold are left alone. Do not call
    `optimizer.step()` as well; `param.grad` is not written. Parameters and
    state are donated, so each update is planned in the memory it replaces.
  - Any other torch optimizer is stepped after the graph (`optimizer.step()`
    on the gradients it wrote into `param.grad`), which rules out the
    options that need the update inside the graph (max_grad_norm,
    accumulation_steps, amp="f16"): asking for one is an error naming both.

Gradient clipping (max_grad_norm=x): inside the graph, before the update,
the gradients are scaled by min(1, x / (norm + 1e-6)), norm being the
global 2-norm over every gradient the step uses, as
torch.nn.utils.clip_grad_norm_ does. The norm before clipping is
`step.last_grad_norm` (a 0-d tensor on the device, read only when asked
for: no synchronization); the call still returns the loss. Without an
optimizer the clipped gradients are what `param.grad` receives.

Gradient accumulation (accumulation_steps=N): each call takes one
micro-batch of the example's shapes (another shape is refused) and returns
its loss; the gradients of the micro-batches are summed in f32 inside the
step (divided by N, as a loop that calls `(loss / N).backward()` sums
them), and every Nth call clips them, updates the parameters once and
starts a new sum (`step.updated` says whether the last call did;
`step.micro_step` counts the micro-batches of the current sum). One graph
serves every call: an input says whether this call updates, so the CUDA
graph captured once is replayed on every call. Without an optimizer,
`param.grad` holds the mean gradient after every Nth call.

The batch is copied into the step's own buffers (a few KB) and the loss
comes back as a fresh tensor: with stable pointers the runtime replays one
captured CUDA graph every step instead of capturing a new one. The first
call checks and binds every tensor; later calls reuse that binding while
the parameters keep their memory and the gradients and optimizer state
bound are still in place (anything moved or replaced is bound and checked
again), so a call costs the host a fraction of a millisecond.

With an in-graph optimizer the step keeps a bf16 copy of each weight a
matmul reads (`amp_weight.<name>`, the pipeline's weight-copies), written by
the update, so no call casts the weights; the copies are filled on the first
call and again when torch changes a parameter (in place, load_state_dict:
its `_version` moves). A change made through `.data` is invisible to torch:
call `step.reload_weights()` after one.

Randomness (dropout, attention dropout): the graph's random ops read a
Philox seed and counter offset as inputs (`rng.seed`, `rng.offset`), which
every call writes into the step's own buffers with fresh values from torch's
default generator of the device, advancing it past the counters the step
uses (see fuse/training/_step_rng.py): calls draw different bits, the step's bits
never overlap torch's, and `torch.manual_seed(s)` makes a run reproducible.
The bits are not torch's own (Fuse's Philox layout differs), only their
distribution is.

Data parallel (process_group=pg, torch.distributed initialized, one GPU per
process): every rank starts from rank 0's parameters and buffers (broadcast,
as DDP does), and the ranks check before compiling that they compile the
same step (FuseError on every rank otherwise). The step writes the gradients
into flat buckets (`param.grad` are views of them; bucket_cap_mb, default
25) and all-reduces each bucket (the average over the group) as soon as the
step has written its last gradient, overlapping the rest of the backward
(overlap_grad_reduce=False waits for the whole step); then clips them
(max_grad_norm, torch.nn.utils.clip_grad_norm_ after the all-reduce) and,
with an optimizer, calls `optimizer.step()` (any torch optimizer: the update
runs after the all-reduce, outside the graph). See fuse/distributed.py.
Accumulation is not supported with a process group yet.

f16 mixed precision adds dynamic loss scaling inside the graph: the scale
and its growth tracker are carried from step to step here, and
`step.found_inf` says whether the last step overflowed (it then changed
nothing). The gradients are unscaled before they are clipped, so the norm
is the true one. With accumulation, a micro-batch that overflows is left
out of the sum and the update at the end of that sum is skipped, as
GradScaler skips an optimizer step; the scale backs off at once.
"""

import time

import torch

from .exporter import _optimizers
from . import compiler, distributed
from .training._step_io import Binding, copy_all, cpu_module, flatten, split_batch, to_cpu
from .training._step_optimizer import OptimizerBinding
from .training._step_rng import StepRandomness
from .exporter._steps import Step
from .errors import FuseError
from .export import export_step

__all__ = ["compile_step", "TrainStep"]

# Initial values of state the pipeline adds to a step (LossScaling.cpp):
# torch.cuda.amp.GradScaler's defaults.
_CARRIED_STATE = {"loss_scale": 2.0 ** 16, "loss_scale.growth_tracker": 0.0}
# The prefix of the 16-bit weight copies the pipeline's weight-copies adds
# (WeightCopies.cpp): `amp_weight.<parameter name>`.
_WEIGHT_COPY = "amp_weight."


def _is_f16(amp):
    key = amp.lower() if isinstance(amp, str) else amp
    return compiler._AMP.get(key) == "f16"


class TrainStep:
    """A compiled training step bound to a model (and optimizer). Call it
    with a batch; it returns the loss (a fresh 0-d tensor on the device).

    Attributes: `compiled` (the CompiledGraph), `signature`, `plan`,
    `compile_seconds`, `timings`, `text` (the exported graph), `found_inf`
    (f16 loss scaling only), `last_grad_norm` (max_grad_norm only),
    `updated` and `micro_step` (whether the last call updated; micro-batches
    in the current accumulation).
    """

    def __init__(self, model, loss_fn, example_batch, optimizer=None, *, amp="bf16", memory_budget=None,
                 cuda_graphs=True, profile=False, cache_dir=None, arch=None, pipeline=None, index_bounds=None,
                 progress=True, max_arena_bytes=None, process_group=None,
                 bucket_cap_mb=distributed.DEFAULT_BUCKET_CAP_MB, overlap_grad_reduce=True,
                 sparse_embedding_grads=True, max_grad_norm=None, accumulation_steps=1):
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"compile_step takes an nn.Module, not {type(model).__name__}")
        self.model, self.loss_fn, self.optimizer = model, loss_fn, optimizer
        self.max_grad_norm, self.accumulation_steps = _check_extras(max_grad_norm, accumulation_steps)
        in_graph = optimizer is not None and process_group is None and _optimizers.supports(optimizer)
        _check_combination(optimizer, in_graph, process_group, amp, self.max_grad_norm, self.accumulation_steps)
        # Stepped after the graph: data parallel (after the all-reduce), or
        # an optimizer the graph cannot run.
        self._eager_optimizer = optimizer if optimizer is not None and not in_graph else None
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
        rule, state, self._opt = None, None, None
        if in_graph:
            rule = _optimizers.from_torch(optimizer, self.params, self.param_names)
            self._opt = OptimizerBinding(optimizer, rule, self.params, self.param_names)
            state = self._opt.example_state()

        started = time.perf_counter()
        try:
            self._export(inputs, targets, rule, state, index_bounds,
                         self.max_grad_norm if process_group is None else None)
            failure = None
        except Exception as error:  # every rank must hear of it, not wait for this one
            if process_group is None:
                raise
            failure = error
        export_seconds = time.perf_counter() - started
        if process_group is not None:
            options = dict(amp=amp, memory_budget=memory_budget, pipeline=pipeline, arch=arch,
                           max_arena_bytes=max_arena_bytes, bucket_cap_mb=bucket_cap_mb,
                           overlap_grad_reduce=overlap_grad_reduce, sparse_embedding_grads=sparse_embedding_grads,
                           max_grad_norm=self.max_grad_norm)
            batch = flatten(inputs, "inputs") + flatten(targets, "targets")
            summary = distributed.rank_summary(None if failure else self.text, options, self.param_names,
                                               batch, failure)
            try:
                distributed.check_ranks_agree(process_group, summary)
            except FuseError as error:
                raise error from failure
        if pipeline is None and rule is not None:
            # The update writes the 16-bit copy of each weight the GEMMs read
            # (bound below as `weight_copy`), so no call casts the weights.
            pipeline = compiler.pipeline_string(amp, memory_budget, max_arena_bytes, weight_copies=True)
        self.compiled = compiler.compile(
            self.text, amp=amp, memory_budget=memory_budget, cuda_graphs=cuda_graphs, profile=False,
            cache_dir=cache_dir, arch=arch, pipeline=pipeline, name=f"{type(model).__name__} step",
            max_arena_bytes=max_arena_bytes, progress=progress, report_phases=False)
        self.compiled.timings["export"] = export_seconds
        self.compiled.compile_seconds += export_seconds
        self.compiled.report_phases(f"{type(model).__name__} step")
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
        self.updated, self.micro_step = False, 0
        self._eager_grad_norm = None

    def _export(self, inputs, targets, rule, state, index_bounds, max_grad_norm):
        """Sets batch_names, _n_inputs, _roles and text (the exported graph)."""
        # Exported from a CPU copy, as `python -m fuse.export` does: a Fuse
        # graph has no device, and models take device-specific paths on the
        # GPU (attention variants, masks built on the device) that the
        # exporter does not take whole.
        step = Step(cpu_module(self.model), to_cpu(inputs), "train", self.loss_fn, to_cpu(targets), rule,
                    to_cpu(state), sparse_embeddings=self._sparse_embeddings, max_grad_norm=max_grad_norm,
                    accumulation_steps=self.accumulation_steps)
        n = len(self.params)
        self.batch_names = step.arg_names[n:n + step._n_inputs + step._n_targets]
        self._n_inputs = step._n_inputs
        # What each argument of the graph is: (kind, key).
        self._roles = {name: ("param", i) for i, name in enumerate(self.param_names)}
        self._roles.update({name: ("batch", j) for j, name in enumerate(self.batch_names)})
        self._roles.update({name: (role, key) for name, role, key in step.extra_args})
        info = {}
        self.text = export_step(step, index_bounds=index_bounds, name=f"{type(self.model).__name__.lower()}_step",
                                donate_state=bool(step.state_names()), info=info)
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

    @property
    def phases(self):
        """{phase: seconds} of the compile (fuse.runtime._phases; FUSE_LOG=compile prints it)."""
        return self.compiled.phases

    @property
    def last_grad_norm(self):
        """The global gradient norm before clipping of the last call (with
        accumulation: of the sum so far; the one that counts is the Nth
        call's), a fresh 0-d f32 tensor on the device; None before the first
        call or without max_grad_norm."""
        if self._eager_grad_norm is not None:
            return self._eager_grad_norm
        if self._buffers is None or "grad_norm" not in self._buffers or not self._calls:
            return None
        return self._buffers["grad_norm"].clone()

    def _plan_bindings(self):
        """How each input and output of the signature is bound: a list of
        (kind, key) per side, checked against what this step knows."""
        index = {n: i for i, n in enumerate(self.param_names)}
        self._in_plan, self._out_plan = [], []
        for spec in self.compiled.inputs:
            n = spec.name
            if n in self._roles:
                self._in_plan.append(self._roles[n])
            elif n in _CARRIED_STATE:
                self._in_plan.append(("carried", n))
            elif n in ("rng.seed", "rng.offset"):
                self._in_plan.append((n, None))
            elif n.startswith(_WEIGHT_COPY) and n[len(_WEIGHT_COPY):] in index:
                self._in_plan.append(("weight_copy", index[n[len(_WEIGHT_COPY):]]))
            else:
                raise FuseError(f"the compiled step takes '{n}' (input #{spec.index}), which compile_step "
                                "cannot bind")
        donated = {o: i for o, i in self.compiled.signature.get("donated", [])}
        for spec in self.compiled.outputs:
            n = spec.name
            if n == "loss":
                self._out_plan.append(("loss", None))
            elif n.startswith("grad.") and n[5:] in index and self._opt is None:
                self._out_plan.append(("grad", index[n[5:]]))
            elif n in ("found_inf", "grad_norm"):
                self._out_plan.append((n, None))
            elif n.startswith("embedding_grad.") and any(n[15:] == name for name, _ in self._sparse_inputs):
                self._out_plan.append(("embedding_grad", n[15:]))
            elif n == "step" and self._opt is not None:
                self._out_plan.append(("step_out", None))
            else:
                # An updated argument (parameter, optimizer state, gradient
                # accumulator, carried state): the output bound to its
                # input's memory where the plan donates it, else to a buffer
                # copied back after the step.
                source = next((i for i, s in enumerate(self.compiled.inputs) if s.name == n), None)
                if source is None:
                    raise FuseError(f"the compiled step returns '{n}' (output #{spec.index}), which "
                                    "compile_step cannot bind")
                kind = "in_place" if donated.get(spec.index) == source else "copy_back"
                self._out_plan.append((kind, source))

    def _allocate(self, device):
        """The step's own buffers: batch staging, loss, scalars, carried
        state, random seed, gradient accumulators, copy-back buffers,
        gradients of frozen parameters."""
        buffers = {"batch": [], "carried": {}, "copy_back": {}, "frozen_grad": {}, "embedding_grad": {},
                   "grad_acc": {}, "weight_copy": {}}
        for spec, (kind, key) in zip(self.compiled.inputs, self._in_plan):
            empty = torch.zeros(spec.shape, dtype=spec.torch_dtype(), device=device)
            if kind == "batch":
                buffers["batch"].append(empty)
            elif kind == "carried":
                buffers["carried"][key] = empty.fill_(_CARRIED_STATE[key])
            elif kind in ("grad_acc", "weight_copy"):
                buffers[kind][key] = empty
            elif kind == "scalar":
                buffers[key] = empty  # lr, lr.<group>, step: written by OptimizerBinding.sync
            elif kind in ("rng.seed", "rng.offset", "apply"):
                buffers[kind] = empty
        for spec, (kind, key) in zip(self.compiled.outputs, self._out_plan):
            if kind in ("loss", "found_inf", "step_out", "grad_norm"):
                buffers[kind] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
            elif kind == "copy_back":
                buffers["copy_back"][spec.index] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
            elif kind == "grad" and not self.params[key].requires_grad:
                buffers["frozen_grad"][key] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
            elif kind == "embedding_grad":
                buffers["embedding_grad"][key] = torch.empty(spec.shape, dtype=spec.torch_dtype(), device=device)
        if "found_inf" in buffers and "apply" in buffers:
            # Whether a micro-batch of the current sum overflowed (f16).
            buffers["overflowed"] = torch.zeros((), dtype=torch.bool, device=device)
        self._buffers = buffers
        self._randomness = None
        if "rng.seed" in buffers:
            self._randomness = StepRandomness(device, self._rng_counters, buffers["rng.seed"], buffers["rng.offset"])
        self._apply_value = None
        self._calls = 0
        self._binding = None
        self._copied_versions = None  # the weights' _version when their copies were last filled

    # -- running ----------------------------------------------------------------------
    def _batch_tensors(self, args):
        inputs, targets = split_batch(args)
        flat = flatten(inputs, "inputs") + flatten(targets, "targets")
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
                    what = "micro-batch" if self.accumulation_steps > 1 else "batch"
                    raise ValueError(f"{what} {error}; the step was compiled for the example batch's shapes "
                                     f"(every {what} must have them): compile another step for another "
                                     "shape") from None
                raise
            staged.copy_(tensor, non_blocking=True)

    def _bind(self, args):
        """Stages the batch and returns the Binding for this call: the last
        one while the model's memory has not moved, else a new one, checked."""
        self.compiled._require_session()
        if self._buffers is None:
            self._allocate(self.compiled.device)
        self._stage_batch(args)
        if self._randomness is not None:
            self._randomness.draw()  # fresh bits every call, from torch's generator
        if self._opt is not None and self._opt.sync(self._buffers):
            self._binding = None  # the optimizer's state was replaced
        if "apply" in self._buffers:
            self._set_apply(self.micro_step + 1 == self.accumulation_steps)
        binding = self._binding
        if binding is None or not binding.holds(self.params):
            binding = self._binding = self._new_binding()
            self._copied_versions = None
        self._refresh_weight_copies()
        return binding

    def _refresh_weight_copies(self):
        """Fills the 16-bit copies of the weights the step keeps (the
        pipeline's weight-copies) from the weights: all on a new binding,
        else those whose weight torch changed since (its `_version` moved:
        an in-place change, load_state_dict). The step's own updates do not
        move it, and write the copies themselves."""
        copies = self._buffers["weight_copy"]
        if not copies:
            return
        versions = [self.params[i]._version for i in copies]
        if versions == self._copied_versions:
            return
        with torch.no_grad():
            for k, (i, copy) in enumerate(copies.items()):
                if self._copied_versions is None or versions[k] != self._copied_versions[k]:
                    copy.copy_(self.params[i])
        self._copied_versions = versions

    def reload_weights(self):
        """Makes the next call read the parameters afresh. Needed only after
        changing them through `.data` (which torch does not count as a change
        of the parameter): the step keeps a 16-bit copy of each weight a
        matmul reads, refreshed by itself when it updates the weights and
        when a parameter changes in place or moves."""
        self._copied_versions = None

    def _set_apply(self, last):
        """The `accumulate.apply` input: 1 on the call that ends a sum
        (unless a micro-batch of it overflowed), else 0."""
        buffers = self._buffers
        if last and "overflowed" in buffers:
            torch.logical_not(buffers["overflowed"], out=buffers["apply"])
            self._apply_value = None
        elif float(last) != self._apply_value:
            buffers["apply"].fill_(float(last))
            self._apply_value = float(last)

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
        inputs = []
        for spec, (kind, key) in zip(compiled.inputs, self._in_plan):
            if kind == "param":
                t = self.params[key].data
            elif kind == "batch":
                t = buffers["batch"][key]
            elif kind == "state":
                t = self._opt.tensor(*key)
            elif kind in ("carried", "grad_acc", "weight_copy"):
                t = buffers[kind][key]
            elif kind == "scalar":
                t = buffers[key]
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
        return Binding(self.params, inputs, outputs, copies, grads)

    def __call__(self, *batch):
        """Runs one step on `batch` ((inputs, targets), or the two as
        arguments); returns the loss."""
        binding = self._bind(batch)
        self._launch(binding)
        self._calls += 1
        if self._reducer is not None:
            self._reducer.reduce()
            for name, param_index, batch_index, padding_idx in self._sparse_plan:
                self._reducer.add_rows(self.params[param_index].grad, self._buffers["batch"][batch_index],
                                       self._buffers["embedding_grad"][name], padding_idx)
        self._after_step(binding.copies)
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
            copy_all(*copies)
        buffers = self._buffers
        if "found_inf" in buffers:
            self.found_inf = buffers["found_inf"]
        self.micro_step += 1
        self.updated = self.micro_step == self.accumulation_steps
        if not self.updated:
            if "overflowed" in buffers:
                buffers["overflowed"].logical_or_(buffers["found_inf"])
            return
        self.micro_step = 0
        if "overflowed" in buffers:
            buffers["overflowed"].zero_()
        if buffers["grad_acc"]:
            _zero_all(list(buffers["grad_acc"].values()))  # the next call starts a new sum
        if self._opt is not None:
            self._opt.after_update(buffers)
        if self.process_group is not None and self.max_grad_norm is not None:  # after the all-reduce
            self._eager_grad_norm = torch.nn.utils.clip_grad_norm_(
                [p for p in self.params if p.grad is not None], self.max_grad_norm)
        if self._eager_optimizer is not None:
            self._eager_optimizer.step()

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


def _check_extras(max_grad_norm, accumulation_steps):
    if max_grad_norm is not None:
        if isinstance(max_grad_norm, bool) or not isinstance(max_grad_norm, (int, float)) or max_grad_norm <= 0:
            raise ValueError(f"max_grad_norm must be a positive number, not {max_grad_norm!r}")
        max_grad_norm = float(max_grad_norm)
    if isinstance(accumulation_steps, bool) or not isinstance(accumulation_steps, int) or accumulation_steps < 1:
        raise ValueError(f"accumulation_steps must be a positive integer, not {accumulation_steps!r}")
    return max_grad_norm, accumulation_steps


def _check_combination(optimizer, in_graph, process_group, amp, max_grad_norm, accumulation_steps):
    """Refuses options that need what this step cannot do, naming both."""
    if process_group is not None:
        if accumulation_steps > 1:
            raise ValueError("accumulation_steps with process_group is not supported yet (the all-reduce "
                             "would run on every micro-batch); use accumulation_steps=1 with a larger batch "
                             "per rank")
        return
    if optimizer is None or in_graph:
        return
    needs = [name for name, on in (("max_grad_norm", max_grad_norm is not None),
                                   ("accumulation_steps", accumulation_steps > 1),
                                   ("amp='f16'", _is_f16(amp))) if on]
    if needs:
        raise ValueError(f"{needs[0]} needs the optimizer's update inside the compiled step, and compile_step "
                         f"cannot run {type(optimizer).__name__} there (it runs {_optimizers.SUPPORTED}); "
                         f"pass optimizer=None and step {type(optimizer).__name__} yourself on param.grad")


def _zero_all(tensors):
    zero = getattr(torch, "_foreach_zero_", None)
    if zero is not None:
        zero(tensors)
    else:
        for t in tensors:
            t.zero_()


def compile_step(model, loss_fn, example_batch, optimizer=None, **options):
    """Compiles one training step of `model` as a single Fuse graph and
    returns a TrainStep (see this module's docstring for what it binds).

    example_batch      (inputs, targets): inputs for the model (tensor, tuple
                       or dict), targets for loss_fn after the output
                       (tensor, tuple, dict or None); with accumulation, one
                       micro-batch
    optimizer          None (gradients into param.grad); torch.optim.AdamW,
                       Adam, SGD, Adafactor or fuse.optim.Lion (updated
                       inside the graph); any other torch optimizer (stepped
                       after the graph, as with a process group)
    max_grad_norm      clip the gradients to this global 2-norm before the
                       update (step.last_grad_norm: the norm before)
    accumulation_steps N: each call takes one micro-batch; every Nth call
                       updates with the mean of the N micro-batches' gradients
    options            those of fuse.compile (amp, memory_budget,
                       cuda_graphs, profile, cache_dir, arch, pipeline,
                       max_arena_bytes), plus index_bounds={input name: N}
                       for integer inputs, and for data parallel training
                       process_group (a torch.distributed group),
                       bucket_cap_mb (25) and overlap_grad_reduce (True)
    """
    return TrainStep(model, loss_fn, example_batch, optimizer, **options)
