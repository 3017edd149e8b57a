"""What a compiled training step reads and writes around its graph
(fuse.step): the batch (its structure, staging into the step's own
buffers) and the binding of every input and output to a tensor, kept from
call to call while the memory stays put."""

import operator

import torch

from ..runtime import _capi


def to_cpu(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu()
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_cpu(v) for v in value)
    return value


def cpu_module(module):
    """A copy of `module` on the CPU, made without a second copy on the GPU
    (its parameters and buffers are copied straight to the CPU)."""
    import copy
    memo = {}
    for p in module.parameters():
        memo[id(p)] = torch.nn.Parameter(p.detach().cpu(), requires_grad=p.requires_grad)
    for b in module.buffers():
        memo[id(b)] = b.detach().cpu()
    return copy.deepcopy(module, memo)


def split_batch(args):
    """(inputs, targets) from step(batch) or step(inputs, targets)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)) and len(args[0]) == 2:
        return args[0][0], args[0][1]
    if len(args) == 2:
        return args[0], args[1]
    raise TypeError("call the step with (inputs, targets) or a batch tuple (inputs, targets)")


def flatten(part, what):
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



class Binding:
    """The tensors one call binds and their addresses, kept for the next
    calls: with the addresses unchanged the runtime replays its captured
    CUDA graph, and checking every tensor again would cost the host more
    than a small step takes on the GPU (about 1,000 tensors for BERT-large
    with AdamW). It holds while every parameter keeps its memory (address
    and strides) and every gradient bound as `param.grad` is still there
    (None is set back to it, as `zero_grad(set_to_none=True)` leaves it);
    a replaced optimizer state is caught by _step_optimizer.OptimizerBinding."""

    def __init__(self, params, inputs, outputs, copies, grads):
        self.inputs, self.outputs = inputs, outputs
        # (destinations, sources) of the copies back after each call.
        self.copies = tuple(list(side) for side in zip(*copies)) if copies else None
        self.addresses = _capi.Addresses([t.data_ptr() for t in inputs], [t.data_ptr() for t in outputs])
        self._param_memory = _param_memory(params)
        self._grads = grads  # (param, tensor, rebind: the step owns param.grad)
        self._grad_params = [p for p, _, _ in grads]
        self._grad_tensors = [t for _, t, _ in grads]

    def holds(self, params):
        # Checked before every call's first kernel: C loops (map) over the
        # parameters while nothing moved, the usual case.
        if _param_memory(params) != self._param_memory:
            return False
        if all(map(operator.is_, map(_GRAD, self._grad_params), self._grad_tensors)):
            return True
        for p, t, rebind in self._grads:
            if p.grad is not t:
                if p.grad is not None and not rebind:
                    return False  # the caller's own gradient tensor: check it
                p.grad = t
        return True


def copy_all(destinations, sources):
    foreach_copy = getattr(torch, "_foreach_copy_", None)  # torch >= 2.2
    if foreach_copy is not None:
        foreach_copy(destinations, sources)
    else:
        for destination, source in zip(destinations, sources):
            destination.copy_(source)


_GRAD = operator.attrgetter("grad")


def _param_memory(params):
    """The parameters' addresses and strides."""
    return list(map(torch.Tensor.data_ptr, params)), list(map(torch.Tensor.stride, params))

