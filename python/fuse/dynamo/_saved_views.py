"""Saved values that are views: stored as their base, viewed in the backward.

AOTAutograd's partition treats views as free, so a forward often saves
`permute(x)`, `t(w)` or `view(slice(qkv))` for its backward (GPT-2's
forward saves 131 such values: activations transposed for the weight
gradients' GEMMs, the query, key and value split from one projection). For
Fuse a result is dense memory in its own shape, so each of those was a copy
written by the forward (a transpose or a split, ~1.7 GB a GPT-2 step) next
to its base, which is often saved as well.

A saved value that lives in a slab (`_saved_slabs.py`) never exists as a
torch tensor, so it need not be materialised in its view's shape: the
forward stores the base (`strip`), and the backward applies the same view
ops to the base it binds (`replay`), where Fuse folds them into the ops
that read them (a transposed GEMM operand, attention's strided views) or,
at worst, copies there instead.
"""

import operator

__all__ = ["hoist_casts", "strip", "store_as_viewed", "replay"]

# Single-input ATen ops that only view their input (the rest of their
# arguments constants): a chain of them from a value is replayed on it.
# A clone is the same values (torch writes a reshape of an expanded tensor,
# repeat_kv's, as a clone and a view).
_VIEWS = {"aten.permute.default", "aten.transpose.int", "aten.t.default", "aten.view.default",
          "aten._unsafe_view.default", "aten.reshape.default", "aten.unsqueeze.default", "aten.squeeze.dim",
          "aten.squeeze.dims", "aten.squeeze.default", "aten.alias.default", "aten.expand.default",
          "aten.slice.Tensor", "aten.select.int", "aten.clone.default", "aten._reshape_alias.default"}
# Views whose validity depends on the input's strides: replayed as reshapes
# (of their first argument, the shape).
_SHAPE_VIEWS = {"aten.view.default", "aten._unsafe_view.default", "aten._reshape_alias.default"}
# Multi-result views, taken apart by getitem.
_SPLITS = {"aten.split.Tensor", "aten.split_with_sizes.default", "aten.unbind.int"}


def _is_node(value):
    return hasattr(value, "op") and hasattr(value, "target")


def _constant(values):
    """Whether an op's arguments besides its input hold no graph value."""
    stack = list(values)
    while stack:
        value = stack.pop()
        if _is_node(value):
            return False
        if isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return True


def _shape(node):
    """The shape the trace recorded for a node's value, or None."""
    meta = node.meta.get("val", node.meta.get("tensor_meta")) if _is_node(node) else None
    shape = getattr(meta, "shape", None)
    return tuple(shape) if shape is not None else None


def _value_of(node):
    """A tensor standing for a node's value, to run ops on for the metadata
    of new nodes: the trace's fake tensor, or (torch 1.13, which records
    only shapes) an empty tensor on the meta device; None if neither."""
    if "val" in node.meta:
        return node.meta["val"]
    meta = node.meta.get("tensor_meta")
    if meta is None or not hasattr(meta, "stride"):
        return None
    import torch
    return torch.empty_strided(tuple(meta.shape), tuple(meta.stride), dtype=meta.dtype, device="meta")


def _dtype(node):
    value = _value_of(node)
    return None if value is None else value.dtype


def _is_empty(node):
    shape = _shape(node)
    return shape is not None and any(d == 0 for d in shape)


def _step_back(node):
    """(the node a view reads, the op that makes the view from it), or None
    if `node` is no view of another value."""
    if node.op != "call_function":
        return None
    name = str(node.target)
    if name in _VIEWS and node.args and _is_node(node.args[0]) and _constant((node.args[1:], node.kwargs)):
        return node.args[0], (node.target, tuple(node.args[1:]), dict(node.kwargs), None)
    if name == "aten.cat.default" and node.args and isinstance(node.args[0], (list, tuple)):
        # A concatenation with empty tensors (a key/value cache that starts
        # empty: transformers' DynamicCache cats each layer's keys and values
        # onto it, in training too) is its one non-empty operand.
        # A cache of a wider dtype (f32, for bf16 keys under autocast)
        # promotes the operand: exactly, so it is the operand cast back.
        kept = [t for t in node.args[0] if not _is_empty(t)]
        if (len(kept) == 1 and _is_node(kept[0]) and all(_is_node(t) for t in node.args[0])
                and _shape(kept[0]) == _shape(node)):
            import torch
            source, target = _dtype(kept[0]), _dtype(node)
            if source == target:
                return kept[0], (torch.ops.aten.alias.default, (), {}, None)
            if (source is not None and target is not None and source.is_floating_point
                    and target.is_floating_point and torch.finfo(target).bits > torch.finfo(source).bits):
                return kept[0], (torch.ops.aten._to_copy.default, (), {"dtype": target}, None)
    if node.target is operator.getitem and _is_node(node.args[0]) and isinstance(node.args[1], int):
        split = node.args[0]
        if (split.op == "call_function" and str(split.target) in _SPLITS and _is_node(split.args[0])
                and _constant((split.args[1:], split.kwargs))):
            return split.args[0], (split.target, tuple(split.args[1:]), dict(split.kwargs), node.args[1])
    return None


def _walk_back(node):
    """(the value read, the op) of each view on the way from `node` back to
    the value it is a chain of views of, the last view first."""
    while _is_node(node):
        step = _step_back(node)
        if step is None:
            return
        yield step
        node = step[0]


def _view_chain(node):
    """The value `node` is a chain of views of, and the chain's ops from
    `node` back to it (the last op first); `node` and no ops where it is no
    view."""
    ops = []
    for node, op in _walk_back(node):
        ops.append(op)
    return node, ops


def _users_values(results, positions):
    """The values the results outside `positions` (the user's) are, and
    every value those read through views. The backend returns a view as the
    value it views (a reshape for free, _return_roots), so a saved view
    stored as such a value would make the user's result and the saved one
    a single output, which cannot stay in the forward's slab. The same node
    can be both (an encoder's output that the user gets and a cross
    attention's backward reads as a view)."""
    values = set()
    for i, node in enumerate(results):
        if i not in positions:
            values.add(node)
            values.update(read for read, _ in _walk_back(node))
    return values


def hoist_casts(traced, positions, computed):
    """Rewrites `traced` so that a saved value that is a dtype cast of an
    expanding chain of views of a computed value (autocast's cast of keys
    and values that repeat_kv repeated per query head, saved for attention's
    backward) is returned as the same views of the cast value instead, which
    strip() then stores as the cast value alone: G times fewer bytes, and the
    attention kernels read the repeated heads from it (the dialect takes
    repeat_kv's views away). Returns how many positions changed."""
    output = next(n for n in traced.graph.nodes if n.op == "output")
    results = list(output.args[0])
    changed = 0
    for position in sorted(positions):
        node = results[position]
        if (not _is_node(node) or node.op != "call_function" or str(node.target) != "aten._to_copy.default"
                or len(node.args) != 1 or set(node.kwargs) != {"dtype"} or not _is_node(node.args[0])):
            continue
        base, ops = _view_chain(node.args[0])
        if (not any(str(op[0]) == "aten.expand.default" for op in ops) or base.op == "placeholder"
                or not computed(base) or _value_of(base) is None):
            continue
        with traced.graph.inserting_before(output):
            current = traced.graph.call_function(node.target, (base,), dict(node.kwargs))
            current.meta["val"] = node.target(_value_of(base), **node.kwargs)
            for target, args, kwargs, index in reversed(ops):
                if str(target) == "aten._to_copy.default":
                    continue  # a widening cast (a promoting cat): exact, and the cast above narrows again
                value = target(current.meta["val"], *args, **kwargs)
                current = traced.graph.call_function(target, (current,) + tuple(args), dict(kwargs))
                current.meta["val"] = value
                if index is not None:
                    current = traced.graph.call_function(operator.getitem, (current, index))
                    current.meta["val"] = value[index]
        if tuple(current.meta["val"].shape) != _shape(node) or current.meta["val"].dtype != _value_of(node).dtype:
            raise RuntimeError(f"internal: hoisting the cast of saved value {node.name} changed its type")
        results[position] = current
        changed += 1
    if changed:
        output.args = (tuple(results),)
        traced.graph.eliminate_dead_code()  # walked, never called: no recompile
    return changed


def strip(traced, positions, computed):
    """Rewrites `traced` (an FX graph module) to return, at each of the
    result `positions` that is a chain of views of a computed value, that
    value itself. Returns {position: the view ops, in the order they apply}.
    A chain is kept when its base is a graph input (its memory is the
    caller's already), is returned at a position not in `positions` or is
    what such a result views (_users_values), or is not `computed(base)`
    (a value that depends on no input, which the backend hands out as a
    constant)."""
    output = next(n for n in traced.graph.nodes if n.op == "output")
    results = list(output.args[0])
    others = _users_values(results, positions)
    chains = {}
    for position in sorted(positions):
        node, ops = _view_chain(results[position])
        if ops and _is_node(node) and node.op != "placeholder" and node not in others and computed(node):
            results[position] = node
            chains[position] = list(reversed(ops))
    if chains:
        output.args = (tuple(results),)
        # The backend only walks the re-traced graph (exporter), never calls
        # it: its Python code is not regenerated.
        traced.graph.eliminate_dead_code()
    return chains


# Ops a saved value's reader may apply on the way to the value the forward
# computes from it, each undone by `_inverse`.
_INVERTIBLE = {"aten.permute.default", "aten.transpose.int", "aten.t.default", "aten.view.default",
               "aten._unsafe_view.default", "aten.reshape.default", "aten.clone.default", "aten.alias.default"}
_MOVES_DATA = {"aten.permute.default", "aten.transpose.int", "aten.t.default"}


def _inverse(node):
    """The op that turns `node`'s value back into its input's, as replay()
    takes ops; None for an op that leaves the value as it is (clone)."""
    import torch
    aten = torch.ops.aten
    name = str(node.target)
    if name in ("aten.clone.default", "aten.alias.default"):
        return None
    if name in ("aten.view.default", "aten._unsafe_view.default", "aten.reshape.default"):
        return (aten.reshape.default, (list(_shape(node.args[0])),), {}, None)
    if name == "aten.permute.default":
        dims = [d % len(node.args[1]) for d in node.args[1]]
        return (aten.permute.default, ([dims.index(i) for i in range(len(dims))],), {}, None)
    if name == "aten.transpose.int":
        return (aten.transpose.int, tuple(node.args[1:3]), {}, None)
    return (aten.t.default, (), {}, None)


def store_as_viewed(traced, positions, computed):
    """Rewrites `traced` to return, at each of the result `positions` whose
    value the forward reads through a chain of views and copies that moves
    data and ends in a reshape (an attention output transposed to
    [B, T, H, D] and flattened for the output projection), the chain's end
    instead. Returns {position: the ops that turn that end back into the
    value}, to apply before any ops strip() recorded for the position. The
    forward computes the chain's end anyway, so storing it costs nothing,
    where storing the value itself cost a copy kernel between the two
    layouts; Fuse writes the value through the views (the flash kernels
    address their result by strides) and the backward reads it back through
    the inverse views, which fold into their readers (a transpose of a
    transpose is none). A value may be stored at several positions (views
    of it that strip() stored as it), and the chain's end may be saved too:
    all are then one stored value. A value that is an input, is returned to
    others or is not `computed`, or whose chain's end is returned to others,
    is left as it is."""
    output = next(n for n in traced.graph.nodes if n.op == "output")
    results = list(output.args[0])
    others = {results[i] for i in range(len(results)) if i not in positions}
    chains = {}
    for node in dict.fromkeys(results[p] for p in sorted(positions)):
        if not _is_node(node) or node.op == "placeholder" or node in others or not computed(node):
            continue
        chain, current = [], node
        while _shape(current) is not None:
            views = [u for u in current.users if u.op == "call_function" and str(u.target) in _INVERTIBLE
                     and u.args[0] is current and _constant((u.args[1:], u.kwargs))]
            if len(views) != 1:
                break
            chain.append(views[0])
            current = views[0]
        # Only a chain that moves data and hands its reader a reshape: a
        # transpose read by a GEMM is free as the GEMM's operand layout, and
        # storing it transposed would add the copy this avoids.
        while chain and str(chain[-1].target) not in ("aten.view.default", "aten._unsafe_view.default",
                                                       "aten.reshape.default"):
            chain.pop()
        if not any(str(op.target) in _MOVES_DATA for op in chain) or chain[-1] in others:
            continue
        inverse = [op for op in (_inverse(n) for n in reversed(chain)) if op is not None]
        for position in positions:
            if results[position] is node:
                results[position] = chain[-1]
                chains[position] = list(inverse)
    if chains:
        output.args = (tuple(results),)
        traced.graph.eliminate_dead_code()  # walked, never called: no recompile
    return chains


def replay(tensor, ops):
    """`tensor` viewed by `ops` (what `strip` returned for one position).
    Views of a shape run as reshapes: the base arrives dense, where the
    forward's may have had strides that allowed a view (Fuse's values are
    logical, so a reshape costs nothing more)."""
    import torch
    for target, args, kwargs, index in ops:
        if str(target) in _SHAPE_VIEWS:
            target, args = torch.ops.aten.reshape.default, args[:1]
        tensor = target(tensor, *args, **kwargs)
        if index is not None:
            tensor = tensor[index]
    return tensor
