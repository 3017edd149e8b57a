"""The function that is exported: a module's inference or training step as
one flat function of tensors, with the names of its arguments and results.

The same Step is traced for export and run eagerly for the PyTorch reference
(`fuse.reference`), so both agree on what each argument and result is.
"""

import inspect

import torch

from ._compat import functional_call
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
    `result_names` its results (known for inference after one call)."""

    def __init__(self, module, inputs, mode="infer", loss_fn=None, targets=None, optimizer=None,
                 optimizer_state=None, sparse_embeddings=None):
        if mode not in ("infer", "train"):
            raise ValueError(f"mode must be 'infer' or 'train', not {mode!r}")
        if mode == "infer" and (loss_fn is not None or optimizer is not None):
            raise ValueError("loss_fn and optimizer apply to mode='train' only")
        if mode == "train" and loss_fn is None:
            raise ValueError("mode='train' needs loss_fn(output, *targets) returning a scalar loss")
        self.module, self.mode, self.loss_fn, self.optimizer = module, mode, loss_fn, optimizer
        if sparse_embeddings and (mode != "train" or optimizer is not None):
            raise ValueError("sparse_embeddings apply to a training step without an optimizer")
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
        self.result_names = ["loss"] + [f"grad.{n}" for n in p]
        if optimizer is not None:
            state = optimizer_state or default_optimizer_state(params.values())
            self.example += list(state["exp_avg"]) + list(state["exp_avg_sq"]) + [state["lr"], state["step"]]
            self.arg_names += [f"exp_avg.{n}" for n in p] + [f"exp_avg_sq.{n}" for n in p] + ["lr", "step"]
            self.result_names = (["loss"] + p + [f"exp_avg.{n}" for n in p]
                                 + [f"exp_avg_sq.{n}" for n in p] + ["step"])

    def state_names(self):
        """The arguments an optimizer step updates (parameters and moments);
        none without an optimizer."""
        if self.optimizer is None:
            return []
        p = self.param_names
        return p + [f"exp_avg.{n}" for n in p] + [f"exp_avg_sq.{n}" for n in p]

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
        if self.optimizer is None:
            self.sparse_embedding_inputs = [(name, index) for name, index, _ in captured]
            self.result_names = (["loss"] + [f"grad.{n}" for n in self.param_names]
                                 + [f"embedding_grad.{name}" for name, _, _ in captured])
            return (loss, *grads)
        state = flat[n + self._n_inputs + self._n_targets:]
        exp_avgs, exp_avg_sqs, lr, step = state[:n], state[n:2 * n], state[2 * n], state[2 * n + 1]
        new_params, new_avgs, new_sqs, new_step = self.optimizer.update(
            [p.detach() for p in params], grads, exp_avgs, exp_avg_sqs, lr, step)
        return (loss, *new_params, *new_avgs, *new_sqs, new_step)

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
