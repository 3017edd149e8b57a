"""Where an FX node came from: the model source line in its stack trace.

Locations name the model's own code, so frames inside torch and inside the
exporter's private modules are skipped; backward ops, which have no stack
trace of their own, take their forward op's.
"""

import os
import re

import torch

from ._compat import TORCH_2


def _stack_trace(node):
    trace = node.meta.get("stack_trace") or getattr(node, "stack_trace", None)
    if trace:
        return trace
    # A backward op: take the trace of the forward op with the same autograd
    # sequence number (recorded under torch.fx.traceback.preserve_node_meta).
    seq_nr = node.meta.get("seq_nr")
    if seq_nr is None:
        return None
    traces = getattr(node.graph, "_fuse_traces_by_seq_nr", None)
    if traces is None:
        traces = {}
        for other in node.graph.nodes:
            if other.meta.get("seq_nr") is not None and other.meta.get("stack_trace"):
                traces.setdefault(other.meta["seq_nr"], other.meta["stack_trace"])
        node.graph._fuse_traces_by_seq_nr = traces
    return traces.get(seq_nr)


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
    generated code (`<string>`), not the exporter's private modules."""
    path = os.path.abspath(path).replace("\\", "/")
    name = os.path.basename(path)
    if path.startswith(_TORCH_DIR) or name.startswith("<"):
        return False
    return not (path.startswith(_EXPORTER_DIR) and name.startswith("_"))


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
