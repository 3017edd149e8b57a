"""A torch optimizer's own state bound to a compiled step that runs its
update in the graph (fuse.step): the per-parameter state tensors (created
as torch.optim creates them where the optimizer has not stepped yet), the
step count, and each group's learning rate, written into the step's input
at every call so LR schedulers work. The other hyperparameters are
constants of the graph: a change to one is an error that says to compile
again.
"""

import torch

from ..exporter import _optimizers

# Optimizers that keep a per-parameter `step` tensor in their state.
_TORCH_STEP = ("AdamW", "Adam", "Adafactor")


class OptimizerBinding:
    def __init__(self, optimizer, rule, params, names):
        self.optimizer, self.rule, self.params, self.names = optimizer, rule, params, names
        self.kind = rule.name
        self.updated = [i for i in range(len(params)) if rule.optimized(i)]
        self._position = {i: n for n, i in enumerate(self.updated)}
        self._options = _optimizers.group_options(optimizer)
        self._bound = None  # (state container, per-parameter dicts, {(key, i): tensor}, step tensors)
        self._host_step = None  # the step count the step's `step` input holds
        self._own_step = 0  # SGD with dampening counts its own steps (torch's SGD keeps none)
        self._step_counts = None
        self._lrs = None

    def example_state(self):
        """State for tracing (CPU, like the export)."""
        cpu = [torch.empty(p.shape, dtype=p.dtype) for p in self.params]
        return self.rule.example_state(cpu, _optimizers.learning_rates(self.optimizer))

    # -- binding ---------------------------------------------------------------------------
    def tensor(self, key, index):
        return self._bound[2][(key, index)]

    def sync(self, buffers):
        """Binds the state (again, if it was replaced, e.g. by
        load_state_dict) and writes the step count and learning rates into
        `buffers`. Returns True when the state was bound anew (the caller
        binds the step's inputs again)."""
        self._check_options()
        rebound = self._bound is None or not self._still_bound()
        if rebound:
            self._bind()
            self._host_step = None
        if self.rule.uses_step:
            self._write_step(buffers["step"])
        lrs = _optimizers.learning_rates(self.optimizer)
        if lrs != self._lrs:
            for name, lr in zip(self.rule.lr_names(), lrs):
                if name in buffers:  # a group whose learning rate the graph never reads has no input
                    buffers[name].fill_(lr)
            self._lrs = lrs
        return rebound

    def _bind(self):
        state = self.optimizer.state
        tensors, steps, created = {}, [], False
        for i in self.updated:
            p, mine = self.params[i], state[self.params[i]]
            shapes = self.rule.state_shapes(i, p)
            group = self.optimizer.param_groups[self.rule.group(i)]
            on_device = group.get("fused") or group.get("capturable")
            if self.kind in _TORCH_STEP and "step" not in mine:
                mine["step"] = torch.zeros((), dtype=torch.float32, device=p.device if on_device else "cpu")
            for key, shape in shapes.items():
                if mine.get(key) is None:
                    created = True
                    mine[key] = torch.zeros(shape, dtype=p.dtype, device=p.device)
                t = mine[key]
                if tuple(t.shape) != shape or t.device != p.device or t.dtype != p.dtype or not t.is_contiguous():
                    raise ValueError(f"optimizer state {key} of '{self.names[i]}' is {t.dtype} {list(t.shape)} on "
                                     f"{t.device}; the step needs {p.dtype} {list(shape)}, contiguous, on {p.device}")
                tensors[(key, i)] = t
            if self.kind in _TORCH_STEP:
                steps.append(mine["step"])
        if steps:
            values = {float(s) for s in steps}
            if len(values) > 1:
                raise ValueError(f"the optimizer's parameters are at different step counts ({sorted(values)}); "
                                 "the compiled step keeps one")
            steps = self._share_step_counts(steps)
        elif self.rule.uses_step:
            self._own_step = 0 if created else max(self._own_step, 1)
        self._bound = (state, [state[self.params[i]] for i in self.updated], tensors, steps)

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
        for i, view in zip(self.updated, views):
            self.optimizer.state[self.params[i]]["step"] = view
        return views

    def _still_bound(self):
        """Whether the optimizer still holds the tensors the step bound: a
        new state container (load_state_dict), a replaced per-parameter
        dict or a replaced tensor is caught."""
        container, dicts, tensors, _ = self._bound
        state = self.optimizer.state
        if state is not container:
            return False
        if any(state.get(self.params[i]) is not d for i, d in zip(self.updated, dicts)):
            return False
        position = self._position
        return all(dicts[position[i]].get(key) is t for (key, i), t in tensors.items())

    def _check_options(self):
        options = _optimizers.group_options(self.optimizer)
        if options != self._options:
            for g, (old, new) in enumerate(zip(self._options, options)):
                for key in old:
                    if old[key] != new.get(key):
                        raise ValueError(f"{self.kind}'s {key} in parameter group {g} changed from {old[key]} to "
                                         f"{new.get(key)}: it is a constant of the compiled step (only lr is read "
                                         "at every call); compile the step again")
            raise ValueError(f"{self.kind}'s parameter groups changed; compile the step again")

    # -- the step count --------------------------------------------------------------------
    def _write_step(self, buffer):
        steps = self._bound[3]
        if not steps:
            value = float(self._own_step)
            if value != self._host_step:
                buffer.fill_(value)
                self._host_step = value
        elif steps[0].device.type == "cpu":
            value = float(steps[0])
            if value != self._host_step:
                buffer.fill_(value)
                self._host_step = value
        elif self._host_step is None:
            buffer.copy_(steps[0])
            self._host_step = float(steps[0])

    def after_update(self, buffers):
        """After a call that updated: the optimizer marked as stepped (what
        the wrapper an LR scheduler puts around `optimizer.step` records; it
        warns otherwise), the step's own copy of the step count from its
        result and the optimizer's state counts advanced by one."""
        optimizer = self.optimizer
        optimizer._opt_called = True  # torch >= 2: LRScheduler's check
        optimizer._step_count = getattr(optimizer, "_step_count", 0) + 1  # torch 1.x's
        if not self.rule.uses_step:
            return
        buffers["step"].copy_(buffers["step_out"])
        steps = self._bound[3]
        if not steps:
            self._own_step += 1
        elif self._step_counts is not None:
            self._step_counts.add_(1.0)  # every parameter's count: views of it
        else:
            torch._foreach_add_(steps, 1.0)
        self._host_step = (self._host_step or 0.0) + 1.0
