"""Where an FX node came from: the model source line in its stack trace.

Locations name the model's own code, so frames inside torch and inside the
exporter's machinery are skipped.
"""

import os
import re

import torch

from ._compat import TORCH_2


def _stack_trace(node):
    # Backward ops traced through torch.autograd.grad carry no stack trace
    # (make_fx gives them all one autograd sequence number, so it cannot tie
    # them to their forward op either): they are located by node name alone.
    return node.meta.get("stack_trace") or getattr(node, "stack_trace", None)


def source_location(node):
    """(file, line) of the innermost frame of the node's stack trace that is
    not inside torch itself (the model's code), or None."""
    trace = _stack_trace(node)
    if not trace:
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    # torch 2 writes the innermost frame last (as tracebacks do); torch 1.13's
    # tracer wrote it first.
    for path, line in (reversed(frames) if TORCH_2 else frames):
        if not is_user_frame(path):
            continue
        return _short_path(path.replace("\\", "/")), int(line)
    return None


_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)).replace("\\", "/") + "/"
_EXPORTER_DIR = os.path.dirname(os.path.abspath(__file__)).replace("\\", "/") + "/"


def is_user_frame(path):
    """Whether a stack frame is the model's code: not torch's own, not
    generated code (`<string>`), not the exporter's machinery. The built-in
    models' file (their loss functions) is model code."""
    path = os.path.abspath(path).replace("\\", "/")
    name = os.path.basename(path)
    if path.startswith(_TORCH_DIR) or name.startswith("<"):
        return False
    return not path.startswith(_EXPORTER_DIR) or name == "models.py"


def _short_path(path):
    marker = "/site-packages/"
    if marker in path:
        return path.split(marker, 1)[1]
    marker = "/dist-packages/"
    if marker in path:
        return path.split(marker, 1)[1]
    try:
        relative = os.path.relpath(path)
        if not relative.startswith(".."):
            return relative
    except ValueError:
        pass
    return path


def describe_location(node):
    where = source_location(node)
    return f"{where[0]}:{where[1]}" if where else "(no source location)"
