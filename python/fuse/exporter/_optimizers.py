"""Optimizer updates written out in torch ops, so that they trace into a
training step's graph (fuse.exporter._steps.Step) and run inside it.

A rule updates a list of parameters from their gradients. What it reads
and writes besides them is named so the compiled step can bind the torch
optimizer's own tensors:

  state_keys    per-parameter state, named as torch.optim names it
                (`exp_avg`, `momentum_buffer`, `row_var`...); the graph's
                arguments and results are `<key>.<parameter>`
  lr_names()    one learning rate per parameter group, graph inputs (`lr`
                for one group, `lr.0`, `lr.1`... for several) read at every
                call, so LR schedulers work
  uses_step     a step count `step` (input and result), as torch keeps one

Every other hyperparameter (betas, eps, weight decay, momentum...) is a
constant of the graph, taken per parameter group. `from_torch` builds the
rule for a torch optimizer: AdamW, Adam, SGD, Adafactor (torch >= 2.5) and
fuse.optim.Lion.
"""

import dataclasses

import torch


@dataclasses.dataclass
class UpdateRule:
    """Base of the rules. `groups[i]` is parameter i's group index (None:
    not in the optimizer, left alone) and `options[g]` group g's
    hyperparameters; empty `groups` means one group holding every
    parameter, with the rule's own defaults."""
    groups: tuple = ()
    options: tuple = ()

    state_keys = ()
    uses_step = False
    name = "optimizer"

    # -- layout ------------------------------------------------------------------------
    @property
    def n_groups(self):
        return max([g for g in self.groups if g is not None], default=0) + 1 if self.groups else 1

    def group(self, index):
        return self.groups[index] if self.groups else 0

    def optimized(self, index):
        return self.group(index) is not None

    def lr_names(self):
        return ["lr"] if self.n_groups == 1 else [f"lr.{g}" for g in range(self.n_groups)]

    def scalar_names(self):
        return self.lr_names() + (["step"] if self.uses_step else [])

    def state_shapes(self, index, param):
        """{key: shape} of parameter `index`'s state (no state if it is not
        optimized)."""
        if not self.optimized(index):
            return {}
        return {key: tuple(param.shape) for key in self.state_keys}

    def option(self, index, param, key):
        return self.options[self.group(index)][key]

    def example_state(self, params, lrs=None, step=0.0):
        """Zero state for tracing: {key: [tensor or None per parameter],
        lr name: 0-d tensor, "step": 0-d tensor}."""
        params = list(params)
        state = {key: [None] * len(params) for key in self.state_keys}
        for i, p in enumerate(params):
            for key, shape in self.state_shapes(i, p).items():
                state[key][i] = torch.zeros(shape, dtype=p.dtype)
        for g, name in enumerate(self.lr_names()):
            state[name] = torch.tensor(float(lrs[g]) if lrs else 1e-3)
        if self.uses_step:
            state["step"] = torch.tensor(float(step))
        return state

    # -- the update --------------------------------------------------------------------
    def update(self, params, grads, state, scalars):
        """(new parameters (None where not optimized), {key: [new state]},
        {"step": new step} or {})."""
        lrs = [scalars[n] for n in self.lr_names()]
        step = scalars["step"] + 1 if self.uses_step else None
        new_params, new_state = [], {key: [None] * len(params) for key in self.state_keys}
        for i, (p, g) in enumerate(zip(params, grads)):
            if not self.optimized(i):
                new_params.append(None)
                continue
            mine = {key: state[key][i] for key in self.state_keys if state[key][i] is not None}
            p, mine = self.update_one(i, p, g, mine, lrs[self.group(i)], step)
            new_params.append(p)
            for key, value in mine.items():
                new_state[key][i] = value
        return new_params, new_state, ({"step": step} if self.uses_step else {})

    def update_one(self, index, param, grad, state, lr, step):
        raise NotImplementedError


@dataclasses.dataclass
class AdamW(UpdateRule):
    """torch.optim.AdamW's update (and Adam's, with `l2` weight decay added
    to the gradient). Built by hand (the exporter's `--with-optimizer`),
    weight decay applies to parameters of two or more dimensions (matrices
    and embeddings), not to biases and norm gains, as GPT-2/nanoGPT training
    does; from a torch optimizer, each group's own options apply."""
    betas: tuple = (0.9, 0.95)
    eps: float = 1e-8
    weight_decay: float = 0.1

    state_keys = ("exp_avg", "exp_avg_sq")
    uses_step = True
    name = "AdamW"

    def option(self, index, param, key):
        if self.options:
            return self.options[self.group(index)].get(key, {"l2": False, "maximize": False}.get(key))
        defaults = {"betas": self.betas, "eps": self.eps, "l2": False, "maximize": False,
                    "weight_decay": self.weight_decay if param.dim() >= 2 else 0.0}
        return defaults[key]

    def update_one(self, index, p, g, state, lr, step):
        option = lambda key: self.option(index, p, key)  # noqa: E731
        beta1, beta2 = option("betas")
        if option("maximize"):
            g = -g
        decay = option("weight_decay")
        if decay and option("l2"):
            g = g + p * decay
        elif decay:
            p = p * (1 - lr * decay)
        m = state["exp_avg"] * beta1 + g * (1 - beta1)
        v = state["exp_avg_sq"] * beta2 + g * g * (1 - beta2)
        bias_correction1 = 1 - torch.pow(beta1, step)
        bias_correction2 = 1 - torch.pow(beta2, step)
        denominator = torch.sqrt(v) / torch.sqrt(bias_correction2) + option("eps")
        p = p - (lr / bias_correction1) * m / denominator
        return p, {"exp_avg": m, "exp_avg_sq": v}


@dataclasses.dataclass
class SGD(UpdateRule):
    """torch.optim.SGD: weight decay added to the gradient, momentum with
    dampening, Nesterov. Its first step copies the gradient into the
    momentum buffer, which matters only with dampening: then the rule
    counts steps (`step`), else a zero buffer gives the same result."""
    state_keys = ("momentum_buffer",)
    name = "SGD"

    @property
    def uses_step(self):
        return any(o["momentum"] and o["dampening"] for o in self.options)

    def state_shapes(self, index, param):
        if not self.optimized(index) or not self.option(index, param, "momentum"):
            return {}
        return {"momentum_buffer": tuple(param.shape)}

    def update_one(self, index, p, g, state, lr, step):
        option = lambda key: self.option(index, p, key)  # noqa: E731
        if option("maximize"):
            g = -g
        if option("weight_decay"):
            g = g + p * option("weight_decay")
        momentum = option("momentum")
        new_state = {}
        if momentum:
            buffer = state["momentum_buffer"] * momentum + g * (1 - option("dampening"))
            if option("dampening"):
                buffer = torch.where(step == 1, g, buffer)  # torch's first step: the gradient itself
            new_state["momentum_buffer"] = buffer
            g = g + buffer * momentum if option("nesterov") else buffer
        return p - lr * g, new_state


@dataclasses.dataclass
class Lion(UpdateRule):
    """fuse.optim.Lion's update (Chen et al. 2023): the sign of an
    interpolation of momentum and gradient, decoupled weight decay."""
    state_keys = ("exp_avg",)
    name = "Lion"

    def update_one(self, index, p, g, state, lr, step):
        option = lambda key: self.option(index, p, key)  # noqa: E731
        beta1, beta2 = option("betas")
        if option("maximize"):
            g = -g
        m = state["exp_avg"]
        direction = m * beta1 + g * (1 - beta1)
        sign = (direction > 0).to(p.dtype) - (direction < 0).to(p.dtype)
        if option("weight_decay"):
            p = p * (1 - lr * option("weight_decay"))
        p = p - lr * sign
        return p, {"exp_avg": m * beta2 + g * (1 - beta2)}


@dataclasses.dataclass
class Adafactor(UpdateRule):
    """torch.optim.Adafactor (torch >= 2.5): second moments factored into
    row and column means for parameters of two or more dimensions (over
    the last two), a full `variance` for vectors; relative step size
    min(lr, 1/sqrt(t)) scaled by the parameter's RMS, update clipping at d,
    decoupled weight decay."""
    state_keys = ("row_var", "col_var", "variance")
    uses_step = True
    name = "Adafactor"

    def state_shapes(self, index, param):
        if not self.optimized(index):
            return {}
        shape = tuple(param.shape)
        if param.dim() > 1:
            return {"row_var": shape[:-1] + (1,), "col_var": shape[:-2] + (1,) + shape[-1:]}
        return {"variance": shape}

    def update_one(self, index, p, g, state, lr, step):
        option = lambda key: self.option(index, p, key)  # noqa: E731
        if option("maximize"):
            g = -g
        eps1 = option("eps1")
        if eps1 is None:
            eps1 = torch.finfo(p.dtype).eps
        weight = torch.pow(step, option("beta2_decay"))  # 1 - beta2_t
        rho = torch.minimum(lr, torch.rsqrt(step))
        rms = torch.sqrt((p * p).sum()) / (p.numel() ** 0.5)
        alpha = torch.clamp_min(rms, option("eps2")) * rho
        if option("weight_decay"):
            p = p * (1 - lr * option("weight_decay"))
        square = g * g
        new_state = {}
        if p.dim() > 1:
            row = state["row_var"]
            row = row + (square.mean(dim=-1, keepdim=True) - row) * weight
            col = state["col_var"]
            col = col + (square.mean(dim=-2, keepdim=True) - col) * weight
            estimate = row * col / torch.clamp_min(row.mean(dim=-2, keepdim=True), eps1)
            new_state = {"row_var": row, "col_var": col}
        else:
            variance = state["variance"]
            estimate = variance = variance + (square - variance) * weight
            new_state = {"variance": variance}
        update = torch.rsqrt(torch.clamp_min(estimate, eps1 * eps1)) * g
        update_rms = torch.sqrt((update * update).sum()) / ((update.numel() ** 0.5) * option("d"))
        p = p - update * (alpha / torch.clamp_min(update_rms, 1.0))
        return p, new_state


# -- from a torch optimizer ---------------------------------------------------------------

# The hyperparameters each rule reads from a group (with torch's defaults
# for keys older torch versions lack), and options it cannot run.
_READS = {
    "AdamW": {"betas": None, "eps": None, "weight_decay": None, "maximize": False},
    "Adam": {"betas": None, "eps": None, "weight_decay": None, "maximize": False,
             "decoupled_weight_decay": False},
    "SGD": {"momentum": 0.0, "dampening": 0.0, "nesterov": False, "weight_decay": 0.0, "maximize": False},
    "Adafactor": {"beta2_decay": None, "eps": None, "d": None, "weight_decay": None, "maximize": False},
    "Lion": {"betas": None, "weight_decay": None, "maximize": False},
}
_REFUSED = {"amsgrad": "amsgrad=True", "differentiable": "differentiable=True"}


def _kind(optimizer):
    from .. import optim
    adafactor = getattr(torch.optim, "Adafactor", None)
    for cls, kind in ((torch.optim.AdamW, "AdamW"), (torch.optim.Adam, "Adam"), (torch.optim.SGD, "SGD"),
                      (adafactor, "Adafactor"), (optim.Lion, "Lion")):
        if cls is not None and type(optimizer) is cls:
            return kind
    return None


SUPPORTED = "torch.optim.AdamW, Adam, SGD, Adafactor (torch >= 2.5) and fuse.optim.Lion"


def supports(optimizer):
    """Whether `optimizer` can run inside a compiled step."""
    return _kind(optimizer) is not None


def group_options(optimizer):
    """The hyperparameters the rule reads, per group (to see later whether
    they changed)."""
    kind = _kind(optimizer)
    return [{key: _plain(group.get(key, default)) for key, default in _READS[kind].items()}
            for group in optimizer.param_groups]


def _plain(value):
    if isinstance(value, torch.Tensor):
        return float(value) if value.numel() == 1 else tuple(float(v) for v in value.flatten())
    if isinstance(value, (tuple, list)):
        return tuple(_plain(v) for v in value)
    return value


def from_torch(optimizer, params, names):
    """The rule for torch optimizer `optimizer` over `params` (a parameter
    not in it is not updated), or TypeError/ValueError saying why not."""
    kind = _kind(optimizer)
    if kind is None:
        raise TypeError(f"compile_step runs {SUPPORTED} inside the graph; {type(optimizer).__name__} is not "
                        "one of them (pass optimizer=None to get the gradients in param.grad and step it "
                        "yourself)")
    where = {}
    for g, group in enumerate(optimizer.param_groups):
        for p in group["params"]:
            where[id(p)] = g
        for key, text in _REFUSED.items():
            if group.get(key, False):
                raise ValueError(f"{type(optimizer).__name__}({text}) is not supported by compile_step")
        lr = group["lr"]
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise ValueError(f"{type(optimizer).__name__}: a learning rate must be one number")
    if not any(id(p) in where for p in params):
        raise ValueError(f"the optimizer holds none of the model's parameters (first: {names[0]})")
    options = []
    for group, read in zip(optimizer.param_groups, group_options(optimizer)):
        options.append(_rule_options(kind, read))
    groups = tuple(where.get(id(p)) for p in params)
    rule = {"AdamW": AdamW, "Adam": AdamW, "SGD": SGD, "Adafactor": Adafactor, "Lion": Lion}[kind](
        groups=groups, options=tuple(options))
    rule.name = kind
    return rule


def _rule_options(kind, read):
    if kind in ("AdamW", "Adam"):
        return {"betas": read["betas"], "eps": read["eps"], "weight_decay": read["weight_decay"],
                "maximize": read["maximize"],
                "l2": kind == "Adam" and not read.get("decoupled_weight_decay", False)}
    if kind == "Adafactor":
        eps1, eps2 = read["eps"]
        return {"beta2_decay": read["beta2_decay"], "eps1": eps1, "eps2": eps2, "d": read["d"],
                "weight_decay": read["weight_decay"], "maximize": read["maximize"]}
    if kind == "SGD" and read["nesterov"] and (read["momentum"] <= 0 or read["dampening"] != 0):
        raise ValueError("SGD(nesterov=True) needs momentum > 0 and zero dampening")
    return dict(read)


def learning_rates(optimizer):
    """Each group's learning rate, as floats."""
    return [float(group["lr"]) for group in optimizer.param_groups]
