"""What differs between torch 1.13 (Debian, CI) and torch 2.x (the GPU machine)."""

import torch

TORCH_2 = int(torch.__version__.split(".")[0]) >= 2


def functional_call(module, params, args, kwargs=None):
    """`module(*args, **kwargs)` with `params` in place of its parameters."""
    if hasattr(torch, "func") and hasattr(torch.func, "functional_call"):
        return torch.func.functional_call(module, params, tuple(args), kwargs or {})
    from torch.nn.utils import stateless
    return stateless.functional_call(module, params, tuple(args), kwargs or {})
