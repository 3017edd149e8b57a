"""What differs between torch 1.13 (Debian, CI) and torch 2.x (the GPU machine)."""

import torch

TORCH_2 = int(torch.__version__.split(".")[0]) >= 2


def functional_call(module, params, args, kwargs=None):
    """`module(*args, **kwargs)` with `params` in place of its parameters."""
    if hasattr(torch, "func") and hasattr(torch.func, "functional_call"):
        return torch.func.functional_call(module, params, tuple(args), kwargs or {})
    from torch.nn.utils import stateless
    return stateless.functional_call(module, _tied(module, params), tuple(args), kwargs or {})


def _tied(module, params):
    """`params` with every other name of a tensor it replaces (weights tied
    by assignment, as a language model's head and token embedding are)
    given the same replacement, as torch.func.functional_call's
    tie_weights does on torch 2. Torch 1.13's functional_call replaces only
    the names given, so the head would read the module's own weight: a
    constant in the traced graph, and no gradient through it."""
    names = []  # (full name, tensor) of every parameter and buffer, tied ones under each name
    for prefix, child in module.named_modules(remove_duplicate=False):
        for table in (child._parameters, child._buffers):
            for name, tensor in table.items():
                if tensor is not None:
                    names.append((f"{prefix}.{name}" if prefix else name, tensor))
    given = {id(tensor): full for full, tensor in names if full in params}
    tied = {full: params[given[id(tensor)]] for full, tensor in names
            if full not in params and id(tensor) in given}
    return {**params, **tied} if tied else params
