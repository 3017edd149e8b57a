"""Where an FX node came from: the model source line in its stack trace.

Locations name the model's own code, so frames inside torch and inside the
exporter's machinery are skipped.
"""

import os
import re

import torch

from .._compat import TORCH_2


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
    frames = _FRAME.findall(trace)
    # Paths are judged once per working directory (a relative path, and the
    # short form of any, depend on it), not once per frame of every node.
    known = _USER_PATHS.setdefault(os.getcwd(), {})
    # torch 2 writes the innermost frame last (as tracebacks do); torch 1.13's
    # tracer wrote it first.
    for path, line in (reversed(frames) if TORCH_2 else frames):
        short = known.get(path, False)
        if short is False:
            short = known[path] = _short_path(path.replace("\\", "/")) if is_user_frame(path) else None
        if short is not None:
            return short, int(line)
    return None


_FRAME = re.compile(r'File "([^"]+)", line (\d+)')
# working directory -> {frame path: its short form if it is the model's code, else None}
_USER_PATHS = {}


_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)).replace("\\", "/") + "/"
# The whole fuse package (this file is in its exporter/ subpackage).
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))).replace("\\", "/") + "/"


def is_user_frame(path):
    """Whether a stack frame is the model's code: not torch's own, not
    generated code (`<string>`), not the exporter's machinery. The built-in
    models' file (their loss functions) and the harness's own models
    (nanoGPT) are model code."""
    path = os.path.abspath(path).replace("\\", "/")
    name = os.path.basename(path)
    if path.startswith(_TORCH_DIR) or name.startswith("<"):
        return False
    return not path.startswith(_PACKAGE_DIR) or name == "models.py" or path == _HARNESS_NANOGPT


_HARNESS_NANOGPT = _PACKAGE_DIR + "harness/nanogpt.py"


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
