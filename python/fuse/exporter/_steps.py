"""The function that is exported: a module's inference or training step as
one flat function of tensors, with the names of its arguments and results.

The same Step is traced for export and run eagerly for the PyTorch reference
(`fuse.reference`), so both agree on what each argument and result is.
"""

import inspect

import torch

from .._compat import functional_call
from ._optimizers import AdamW
from ._values import ExportError


def _flatten_inputs(inputs, module):
    """(names, tensors, call) for a module's inputs given as a dict (keyword
    arguments) or a tuple (positional, named after forward's parameters)."""
    if isinstance(inputs, dict):
        names = list(inputs)
        return names, list(inputs.values()), lambda tensors: ((), dict(zip(names, tensors)))
    if isinstance(inputs, torch.Tensor):
        inputs = (inputs,)
    try:
        parameters = list(inspect.signature(module.forward).parameters)
    except (TypeError, ValueError):
        parameters = []
    names = [parameters[i] if i < len(parameters) else f"input{i}" for i in range(len(inputs))]
    return names, list(inputs), lambda tensors: (tuple(tensors), {})


def _output_tensors(output):
    """(names, tensors) of a module's output: a tensor, a tuple/list, or a
    dict-like (HuggingFace ModelOutput) whose keys name the results."""
    if isinstance(output, torch.Tensor):
        return ["output"], [output]
    if isinstance(output, dict) or hasattr(output, "keys"):
        names = [k for k in output.keys() if isinstance(output[k], torch.Tensor)]
        return names, [output[k] for k in names]
    if isinstance(output, (list, tuple)):
        tensors = [t for t in output if isinstance(t, torch.Tensor)]
        return [f"output{i}" for i in range(len(tensors))], tensors
    raise ExportError(f"the module returned {type(output).__name__}; expected tensors")


class Step:
    """`fn(*example)` computes the step; `arg_names` name its arguments and
    `result_names` its results (known for inference after one call).

    A training step can also clip the gradients by their global norm
    (`max_grad_norm`: result `grad_norm`, the norm before clipping, as
    torch.nn.utils.clip_grad_norm_ returns it), accumulate them over
    `accumulation_steps` micro-batches (arguments and results
    `grad_acc.<p>`: the f32 sums so far of gradient / steps, and argument
    `accumulate.apply`: 1 on the call that updates, else 0) and update the
    parameters with an optimizer rule (fuse.exporter._optimizers: arguments and
    results `<state key>.<p>`, arguments `lr`/`lr.<group>` and `step`)."""

    def __init__(self, module, inputs, mode="infer", loss_fn=None, targets=None, optimizer=None,
                 optimizer_state=None, sparse_embeddings=None, *, max_grad_norm=None, accumulation_steps=1):
        if mode not in ("infer", "train"):
            raise ValueError(f"mode must be 'infer' or 'train', not {mode!r}")
        extras = optimizer is not None or max_grad_norm is not None or accumulation_steps != 1
        if mode == "infer" and (loss_fn is not None or extras):
            raise ValueError("loss_fn, optimizer, max_grad_norm and accumulation_steps apply to mode='train' only")
        if mode == "train" and loss_fn is None:
            raise ValueError("mode='train' needs loss_fn(output, *targets) returning a scalar loss")
        self.module, self.mode, self.loss_fn, self.optimizer = module, mode, loss_fn, optimizer
        self.max_grad_norm = None if max_grad_norm is None else float(max_grad_norm)
        self.accumulation_steps = int(accumulation_steps)
        if self.accumulation_steps < 1:
            raise ValueError(f"accumulation_steps must be at least 1, not {accumulation_steps}")
        if sparse_embeddings and (mode != "train" or extras):
            raise ValueError("sparse_embeddings apply to a training step without an optimizer, clipping or "
                             "accumulation")
        self.sparse_embeddings = dict(sparse_embeddings or {})
        # (module name, batch input index) of each embedding whose output
        # gradient the step returns (known after a call of fn).
        self.sparse_embedding_inputs = []
        params = dict(module.named_parameters())
        self.param_names = list(params)
        input_names, input_tensors, self._call_args = _flatten_inputs(inputs, module)
        targets = targets or {}
        if isinstance(targets, dict):
            target_names, target_tensors = list(targets), list(targets.values())
        else:
            target_names = [f"target{i}" for i in range(len(targets))]
            target_tensors = list(targets)
        self._n_inputs, self._n_targets = len(input_tensors), len(target_tensors)
        p = self.param_names
        if mode == "infer":
            self.example = [t.detach().clone() for t in params.values()] + input_tensors
            self.arg_names = p + input_names
            self.result_names = None
            return
        # Copies: the step must not see later in-place updates of the module.
        self.example = [t.detach().clone() for t in params.values()] + input_tensors + target_tensors
        self.arg_names = p + input_names + target_names
        # The arguments after the batch: (name, role, key).
        self.extra_args = []
        # Parameters whose gradient is used: every one without an optimizer.
        self.updated = [i for i in range(len(p)) if optimizer is None or optimizer.optimized(i)]
        if self.accumulation_steps > 1:
            for i in self.updated:
                self.extra_args.append((f"grad_acc.{p[i]}", "grad_acc", i))
                self.example.append(torch.zeros(params[p[i]].shape, dtype=torch.float32))
        if optimizer is not None:
            values = list(params.values())
            state = optimizer_state
            if state is None:  # the exporter's AdamW starts part-way through training, to test more
                state = default_optimizer_state(values) if isinstance(optimizer, AdamW) \
                    else optimizer.example_state(values)
            for key in optimizer.state_keys:
                for i, param in enumerate(values):
                    if key in optimizer.state_shapes(i, param):
                        self.extra_args.append((f"{key}.{p[i]}", "state", (key, i)))
                        self.example.append(state[key][i])
            for name in optimizer.scalar_names():
                self.extra_args.append((name, "scalar", name))
                self.example.append(state[name])
        if self.accumulation_steps > 1:
            self.extra_args.append(("accumulate.apply", "apply", None))
            self.example.append(torch.tensor(1.0))
        self.arg_names += [name for name, _, _ in self.extra_args]
        self.result_names = ["loss"] + self._update_names()

    def _update_names(self):
        """The results after the loss, for a step without sparse embeddings."""
        p = self.param_names
        if self.optimizer is None:
            names = [f"grad.{n}" for n in p]
        else:
            names = [p[i] for i in self.updated]
            names += [name for name, role, _ in self.extra_args if role == "state"]
            names += ["step"] if self.optimizer.uses_step else []
        names += [name for name, role, _ in self.extra_args if role == "grad_acc"]
        return names + (["grad_norm"] if self.max_grad_norm is not None else [])

    def state_names(self):
        """The arguments the step updates (the optimizer's parameters and
        state, the gradient accumulators): none for a plain step."""
        names = [name for name, role, _ in self.extra_args if role in ("grad_acc", "state")]
        if self.optimizer is not None:
            names = [self.param_names[i] for i in self.updated] + names
        return names

    def _forward(self, param_tensors, batch):
        args, kwargs = self._call_args(batch)
        return functional_call(self.module, dict(zip(self.param_names, param_tensors)), args, kwargs)

    def fn(self, *flat):
        n = len(self.param_names)
        params = flat[:n]
        batch = flat[n:n + self._n_inputs]
        if self.mode == "infer":
            names, tensors = _output_tensors(self._forward(params, batch))
            self.result_names = names
            return tuple(tensors)
        targets = flat[n + self._n_inputs:n + self._n_inputs + self._n_targets]
        params = [p if p.requires_grad else p.detach().requires_grad_(True) for p in params]
        captured = []
        with _embedding_outputs_as_leaves(self.module, self.sparse_embeddings, batch, captured):
            loss = self.loss_fn(self._forward(params, batch), *targets)
        if not isinstance(loss, torch.Tensor) or loss.dim() != 0:
            raise ExportError("loss_fn must return a scalar tensor")
        leaves = [leaf for _, _, leaf in captured]
        grads = torch.autograd.grad(loss, params + leaves, allow_unused=True)
        grads = [g if g is not None else torch.zeros_like(p) for g, p in zip(grads, params + leaves)]
        if self.sparse_embeddings:
            self.sparse_embedding_inputs = [(name, index) for name, index, _ in captured]
            self.result_names = (["loss"] + [f"grad.{n}" for n in self.param_names]
                                 + [f"embedding_grad.{name}" for name, _, _ in captured])
            return (loss, *grads)
        extra = {}
        for (name, role, key), value in zip(self.extra_args, flat[n + self._n_inputs + self._n_targets:]):
            extra.setdefault(role, {})[key] = value
        grads, accumulated, norm = self._combine(list(grads), extra.get("grad_acc", {}))
        results = [loss]
        if self.optimizer is None:
            results += [g.to(p.dtype) for g, p in zip(grads, params)]
        else:
            results += self._update([p.detach() for p in params], grads, extra)
        results += accumulated
        return tuple(results + ([norm] if norm is not None else []))

    def _combine(self, grads, accumulators):
        """(gradients to use, new accumulators, norm before clipping or None):
        this micro-batch's gradients added to the accumulators (in f32,
        divided by the number of micro-batches), then clipped by their global
        norm as torch.nn.utils.clip_grad_norm_ does."""
        accumulated = []
        if self.accumulation_steps > 1:
            for i in self.updated:
                grads[i] = accumulators[i] + grads[i].to(torch.float32) / self.accumulation_steps
                accumulated.append(grads[i])
        norm = None
        if self.max_grad_norm is not None:
            squares = [(grads[i].to(torch.float32) * grads[i].to(torch.float32)).sum() for i in self.updated]
            total = squares[0]
            for square in squares[1:]:
                total = total + square
            norm = torch.sqrt(total)
            coefficient = torch.clamp_max(self.max_grad_norm / (norm + 1e-6), 1.0)
            for i in self.updated:
                grads[i] = grads[i] * coefficient.to(grads[i].dtype)
        return grads, accumulated, norm

    def _update(self, params, grads, extra):
        """The optimizer's results: updated parameters, state and step count
        (with accumulation, the old ones unless `accumulate.apply`)."""
        rule, updated = self.optimizer, self.updated
        state = {key: [None] * len(params) for key in rule.state_keys}
        for (key, i), value in extra.get("state", {}).items():
            state[key][i] = value
        scalars = extra["scalar"]
        new_params, new_state, new_scalars = rule.update(
            params, [g.to(p.dtype) for g, p in zip(grads, params)], state, scalars)
        results = [(new_params[i], params[i]) for i in updated]
        for _, role, key in self.extra_args:
            if role == "state":
                results.append((new_state[key[0]][key[1]], state[key[0]][key[1]]))
        if rule.uses_step:
            results.append((new_scalars["step"], scalars["step"]))
        if self.accumulation_steps == 1:
            return [new for new, _ in results]
        apply = extra["apply"][None] > 0.5
        return [torch.where(apply, new, old) for new, old in results]

    def run_eager(self):
        """The step's results in PyTorch, by name."""
        was_training = self.module.training
        self.module.train(self.mode == "train")
        try:
            if self.mode == "infer":
                with torch.no_grad():
                    outputs = self.fn(*self.example)
            else:
                outputs = self.fn(*self.example)
        finally:
            self.module.train(was_training)
        return dict(zip(self.result_names, [o.detach() for o in outputs]))

    def inputs_by_name(self):
        return dict(zip(self.arg_names, [t.detach() for t in self.example]))


class _embedding_outputs_as_leaves:
    """Data-parallel steps exchange a large embedding table's gradient as
    rows (fuse/distributed.py): while the forward runs, the output of each
    embedding named in `sparse` ({module name: world size}) that looks up a
    batch input (or a view of one) becomes a leaf of its own, so the step's
    gradient of the table leaves out the lookup and the leaf's gradient
    (one row per looked-up id) is returned beside it. Only where the table
    has at least twice as many rows as the ranks look up together: else the
    dense all-reduce moves fewer bytes. Appends (name, batch index, leaf) to
    `captured`."""

    def __init__(self, module, sparse, batch, captured):
        self.module, self.sparse, self.batch, self.captured = module, sparse, batch, captured
        self.handles = []

    def _batch_index(self, ids):
        for index, tensor in enumerate(self.batch):
            if ids is tensor or (getattr(ids, "_base", None) is tensor and ids.numel() == tensor.numel()):
                return index
        return None

    def __enter__(self):
        if not self.sparse:
            return self
        modules = dict(self.module.named_modules())
        for name, world in self.sparse.items():
            def hook(embedding, args, output, name=name, world=world):
                index = self._batch_index(args[0])
                if index is None or embedding.num_embeddings < 2 * args[0].numel() * world:
                    return None
                leaf = output.detach().requires_grad_(True)
                self.captured.append((name, index, leaf))
                return leaf
            self.handles.append(modules[name].register_forward_hook(hook))
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()


def default_optimizer_state(params, seed=0):
    """An optimizer state part-way through training (moments from a few
    earlier steps, step count 3), so that a test of one update exercises the
    moment and bias-correction arithmetic rather than zeros."""
    generator = torch.Generator().manual_seed(seed)
    params = list(params)
    return {
        "exp_avg": [torch.randn(p.shape, generator=generator) * 1e-3 for p in params],
        "exp_avg_sq": [torch.rand(p.shape, generator=generator) * 1e-6 for p in params],
        "lr": torch.tensor(6e-4),
        "step": torch.tensor(3.0),
    }
