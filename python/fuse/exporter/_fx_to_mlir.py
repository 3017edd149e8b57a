"""Converting a torch.fx graph of ATen ops into one `fuse` dialect function.

The converter walks the graph once, in order. Each node becomes
- a Value (an SSA value of the function) when it computes on graph inputs,
- a Const (a real torch tensor, or a lazy splat) when it depends on no input
  at all: such nodes (position ids, causal masks, rotary tables, buffers) are
  evaluated here with PyTorch and enter the graph as `fuse.constant`s, which
  is how data-independent code that the dialect has no op for still exports,
- a plain Python object (int, list, dtype, None) for non-tensor results.
ATen ops are mapped by the handlers in `_aten_ops`. A node whose op has no
handler does not stop the walk: every unmapped op is collected with its count
and the source line of its first use, and one ExportError lists them all.
`supported(node)` asks the same table without converting (the torch.compile
backend's per-op fallback, `_partition.py`, splits a graph with it).
"""

import collections
import hashlib
import operator
import re

import numpy as np
import torch

from . import _aten_ops
from ._aten_common import broadcast
from ._values import ELEMENT_TO_TORCH, POISON as _POISON, Const, ExportError, Poison, Unsupported, element_of
from ._source import describe_location, source_location
from ._mlir_text import FunctionBuilder, TensorType, Value, dense_attr, string_literal


_RANDOM_OPS = re.compile(r"aten\.(rand|randn|randint|bernoulli|native_dropout|normal|uniform|"
                         r"randperm|multinomial|dropout)")


def _flatten(obj):
    if isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _flatten(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _flatten(item)
    else:
        yield obj


def _map(obj, fn):
    if isinstance(obj, tuple):
        return tuple(_map(x, fn) for x in obj)
    if isinstance(obj, list):
        return [_map(x, fn) for x in obj]
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return fn(obj)


class ArgSpec:
    """How a graph input becomes a function argument."""

    def __init__(self, name, index_bound=None, donated=False, arena_offset=None):
        self.name = name
        self.index_bound = index_bound
        # The caller hands the argument's memory over: the memory plan may
        # write a result (an optimizer's update of this very tensor) in it.
        self.donated = donated
        # The caller leaves the value in the graph's arena at this byte
        # offset (a backward's saved value, where its forward left it).
        self.arena_offset = arena_offset


class Converter:
    def __init__(self, graph_module, func_name, arg_specs, result_names=None, results_in_arena=()):
        self.gm = graph_module
        self.fb = FunctionBuilder(func_name)
        self.arg_specs = list(arg_specs)
        self.result_names = result_names
        # Result indices (among the non-None outputs) the graph leaves in
        # its arena for a later graph (a forward's saved values).
        self.results_in_arena = frozenset(results_in_arena)
        self.env = {}
        self.node = None
        self.loc = None
        self.unmapped = collections.OrderedDict()  # target -> [count, first node]
        self.problems = []
        self._constants = {}  # (attribute text, type) -> Value
        self._constants_by_id = {}  # (id(Const), type) -> (Const, Value)
        self._attrs_by_content = {}  # (stored type, dtype, digest) -> dense attribute text
        self._rng = None
        self._rng_counter = 0
        self.producers = {}  # id(Value) -> (target string, fx node), for patterns
        # id(log-sum-exp Value) -> (seed, offset) of an attention forward's dropout,
        # which its backward draws its mask from again.
        self.attention_rng = {}
        # (id(Const), tq, tk) -> (Const, pattern) of constant attention masks
        # (_aten_nn._attention_mask), classified once for all layers.
        self.mask_patterns = {}

    # -- driving ----------------------------------------------------------
    def run(self):
        placeholders = [n for n in self.gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(self.arg_specs):
            raise ExportError(f"the graph has {len(placeholders)} inputs but {len(self.arg_specs)} "
                              "argument names were given")
        self._input_names = {node: spec.name for node, spec in zip(placeholders, self.arg_specs)}
        specs = iter(self.arg_specs)
        for node in self.gm.graph.nodes:
            self.node = node
            self.loc = self._location(node)
            if node.op == "placeholder":
                self.env[node] = self._placeholder(node, next(specs))
            elif node.op == "get_attr":
                self.env[node] = self._get_attr(node)
            elif node.op == "call_function":
                self.env[node] = self._call(node)
            elif node.op == "output":
                self._output(node)
            else:
                self._problem(f"FX node kind '{node.op}' ({node.target}) is not supported; "
                              "pass a graph of ATen ops (make_fx, AOTAutograd or torch.export)")
                self.env[node] = _POISON
        self._raise_if_failed()
        return self.fb

    def _raise_if_failed(self):
        lines = []
        if self.unmapped:
            total = sum(count for count, _ in self.unmapped.values())
            lines.append(f"the graph uses {len(self.unmapped)} ATen op(s) with no mapping to the "
                         f"fuse dialect ({total} node(s)):")
            for target, (count, node) in self.unmapped.items():
                lines.append(f"  {target}  x{count}  first at {describe_location(node)} "
                             f"(node {node.name})")
        if self.problems:
            if lines:
                lines.append("and:")
            lines.extend("  " + p for p in self.problems)
        if lines:
            raise ExportError("\n".join(lines))

    def _problem(self, message, node=None):
        node = node or self.node
        self.problems.append(f"{message} at {describe_location(node)} (node {node.name})")

    def _location(self, node):
        where = source_location(node)
        text = string_literal(node.name)
        if where:
            text += f"({string_literal(where[0])}:{where[1]}:0)"
        return self.fb.location(text)

    # -- node kinds -------------------------------------------------------
    def _placeholder(self, node, spec):
        meta = _meta_value(node)
        if not isinstance(meta, torch.Tensor) and meta is not None and not hasattr(meta, "shape"):
            self._problem(f"input '{spec.name}' is not a tensor ({type(meta).__name__}); "
                          "only tensor inputs are supported")
            return _POISON
        try:
            type_ = self.node_type(node)
        except Unsupported as error:
            self._problem(f"input '{spec.name}': {error}")
            return _POISON
        attributes = {"fuse.name": string_literal(spec.name)}
        if spec.index_bound is not None:
            attributes["fuse.index_bound"] = f"{int(spec.index_bound)} : i64"
        if spec.donated:
            attributes["fuse.donated"] = "unit"
        if spec.arena_offset is not None:
            attributes["fuse.arena_offset"] = f"{int(spec.arena_offset)} : i64"
        return self.fb.add_argument(spec.name, type_, attributes)

    def _get_attr(self, node):
        obj = self.gm
        for part in node.target.split("."):
            obj = getattr(obj, part)
        if isinstance(obj, torch.Tensor):
            return Const(obj.detach())
        return obj

    def _call(self, node):
        target = _target_name(node.target)
        args = _map(node.args, self._lookup)
        kwargs = _map(dict(node.kwargs), self._lookup)
        if _is_in_place(target):
            return self._in_place(node, target, args, kwargs)
        return self._convert(node, target, args, kwargs)

    def _convert(self, node, target, args, kwargs):
        flat = list(_flatten((args, kwargs)))
        if target not in _aten_ops.HANDLERS and target not in _aten_ops.REJECTED:
            if not any(isinstance(x, (Value, Poison)) for x in flat) and not _RANDOM_OPS.match(target):
                folded = self._fold(node, target, args, kwargs)
                if folded is not None:
                    return folded
            # Counted even when an input already failed: the report lists
            # every use of every unmapped op.
            entry = self.unmapped.setdefault(target, [0, node])
            entry[0] += 1
            return _POISON
        if any(isinstance(x, Poison) for x in flat):
            return _POISON
        if target in _aten_ops.REJECTED:
            self._problem(_aten_ops.REJECTED[target])
            return _POISON
        if not any(isinstance(x, Value) for x in flat) and not _RANDOM_OPS.match(target):
            folded = self._fold(node, target, args, kwargs)
            if folded is not None:
                return folded
        handler = _aten_ops.HANDLERS[target]
        try:
            result = handler(self, node, *args, **kwargs)
        except Unsupported as error:
            self._problem(f"{target}: {error}")
            return _POISON
        for value in _flatten(result):
            if isinstance(value, Value) and id(value) not in self.producers:
                self.producers[id(value)] = (target, node)
        return result

    def _in_place(self, node, target, args, kwargs):
        """An in-place op on an intermediate becomes its out-of-place form,
        and later users of the updated tensor see the new value. Updating a
        graph input, or a tensor that views share, cannot be expressed."""
        mutated = node.args[0] if node.args else None
        if isinstance(mutated, torch.fx.Node) and mutated.op == "placeholder":
            self._problem(f"{target} updates the input '{self._input_names[mutated]}' in place, which a fuse graph "
                          "cannot express; return the new value as an output instead")
            return _POISON
        if not isinstance(mutated, torch.fx.Node) or _is_view(mutated) or any(
                _is_view(user) for user in mutated.users):
            self._problem(f"{target} updates a tensor that views share; write it out of place")
            return _POISON
        functional = _out_of_place(target)
        if not any(isinstance(x, (Value, Poison)) for x in _flatten((args, kwargs))):
            # A constant updated in place: update a copy.
            args = _map(args, lambda x: Const(x.tensor.clone()) if isinstance(x, Const) else x)
        result = self._convert(node, functional, args, kwargs)
        self.env[mutated] = result
        return result

    def _fold(self, node, target, args, kwargs):
        """Evaluates a node that depends on no graph input; None if PyTorch
        cannot (then a handler converts it)."""
        try:
            creation = _aten_ops.splat_creation(self, node, target, args, kwargs)
        except Unsupported:  # a dtype fuse lacks (batch norm's uint8 reserve): a real tensor, below
            creation = None
        if creation is not None:
            return creation
        to_real = lambda x: x.tensor if isinstance(x, Const) else x
        try:
            with torch.no_grad():
                result = node.target(*_map(args, to_real), **_map(kwargs, to_real))
        except Exception:
            return None
        return _map(result, lambda x: Const(x) if isinstance(x, torch.Tensor) else x)

    def _output(self, node):
        outputs = list(_flatten(node.args[0]))
        names = self.result_names or [f"out{i}" for i in range(len(outputs))]
        # None outputs (AOTAutograd's gradients of inputs that need none) are
        # not results.
        if len(names) == len(outputs):
            names = [n for n, o in zip(names, outputs) if o is not None]
        outputs = [o for o in outputs if o is not None]
        if len(names) != len(outputs):
            raise ExportError(f"the graph has {len(outputs)} outputs but {len(names)} result names "
                              "were given")
        for index, (value, name) in enumerate(zip(outputs, names)):
            value = self._lookup(value)
            if isinstance(value, Poison):
                continue
            if isinstance(value, Const):
                value = self.constant(value, value.element if value.dtype != torch.float64 else "f32")
            if not isinstance(value, Value):
                self._problem(f"output '{name}' is not a tensor ({type(value).__name__})")
                continue
            attributes = {"fuse.name": string_literal(name)}
            # Only a value the graph computes can be left in its arena.
            computed = all(value is not v for v, _ in self.fb.arguments)
            if index in self.results_in_arena and computed:
                attributes["fuse.in_arena"] = "unit"
            self.fb.results.append((value, attributes))

    def _lookup(self, x):
        if isinstance(x, torch.fx.Node):
            return self.env[x]
        return x

    # -- helpers for handlers ---------------------------------------------
    def node_type(self, node=None, index=None):
        """The static tensor type PyTorch recorded for a node's result."""
        node = node or self.node
        meta = _meta_value(node)
        if index is not None:
            meta = meta[index] if meta is not None else None
        if meta is None:
            raise Unsupported(f"node {node.name} carries no shape/dtype metadata "
                              "(trace with make_fx, AOTAutograd or torch.export)")
        shape = []
        for d in meta.shape:
            if not isinstance(d, int):
                raise Unsupported(f"dynamic shape {tuple(meta.shape)}: fuse graphs have static "
                                  "shapes; export with concrete sizes")
            shape.append(d)
        element = element_of(meta.dtype, f" (node {node.name})")
        if element == "f64":
            raise Unsupported("float64 tensors are not supported; use float32")
        return TensorType(shape, element)

    def emit(self, text, operands, result_types, hint=None):
        results = self.fb.emit(text, operands, result_types, hint or self.node.name, self.loc)
        return results[0] if len(results) == 1 else results

    def constant(self, const, element, shape=None):
        """A `fuse.constant` holding `const` (a Const) as `element`."""
        shape = tuple(const.shape) if shape is None else tuple(shape)
        type_ = TensorType(shape, element)
        # A Const used many times is written out once (the Const is kept
        # alive in the key's entry, so its id stays its own).
        seen = self._constants_by_id.get((id(const), type_))
        if seen is not None:
            return seen[1]
        if const.splat is not None:
            value = self._dense(dense_attr(np.array([_python_scalar(const.splat, element)]), element), type_)
        else:
            # Written at the size of what it holds, then broadcast in the
            # graph: a causal mask repeated over the batch and heads costs
            # T x T elements of text, not B x H x T x T.
            tensor = _without_repeats(const.tensor)
            stored = TensorType(tuple(tensor.shape), element)
            array = _to_numpy(tensor, element)
            # Equal contents are written once: each layer's slice of one
            # mask buffer is a Const of its own.
            content = (stored, array.dtype.str, hashlib.blake2b(np.ascontiguousarray(array).view(np.uint8),
                                                                digest_size=16).digest())
            attr = self._attrs_by_content.get(content)
            if attr is None:
                attr = self._attrs_by_content[content] = dense_attr(array, element)
            value = broadcast(self, self._dense(attr, stored), shape)
        self._constants_by_id[(id(const), type_)] = (const, value)
        return value

    def _dense(self, attr, type_):
        # One op per distinct constant: the rotary tables that every layer
        # recomputes in PyTorch enter the graph once.
        key = (attr, type_)
        value = self._constants.get(key)
        if value is None:
            # Pieces, not one string: the attribute (hundreds of megabytes
            # for a weight baked in) is copied once, into the text.
            value = self._constants[key] = self.emit(("fuse.constant ", attr, f" : {type_}"), [], [type_],
                                                     hint="cst")
        return value

    def splat(self, scalar, type_):
        return self.constant(Const(splat=scalar, shape=type_.shape,
                                   dtype=ELEMENT_TO_TORCH[type_.element]), type_.element)

    def rng(self, counters):
        """(seed, offset) operands for a random op that uses `counters` Philox
        counters: every random op of the graph draws from its own range of
        the `rng.offset` argument's stream."""
        if self._rng is None:
            scalar = TensorType((), "i64")
            seed = self.fb.add_argument("rng_seed", scalar, {"fuse.name": '"rng.seed"'})
            offset = self.fb.add_argument("rng_offset", scalar, {"fuse.name": '"rng.offset"'})
            self._rng = (seed, offset)
        seed, offset = self._rng
        start = self._rng_counter
        self._rng_counter += int(counters)
        if start == 0:
            return seed, offset
        shift = self.splat(start, TensorType((), "i64"))
        return seed, self.emit("fuse.add {0}, {1} : tensor<i64>", [offset, shift],
                               [TensorType((), "i64")], hint="rng_offset")

    def producer(self, value):
        """(ATen target, fx node) that produced a Value, or (None, None)."""
        return self.producers.get(id(value), (None, None))


# Constants under this many elements are written as they are: checking them
# for repeats would cost more than it saves.
_REPEAT_CHECK_ELEMENTS = 4096


def _without_repeats(tensor):
    """`tensor` narrowed to size 1 along every dimension over which it only
    repeats itself (an expanded view, or a mask materialised per batch
    entry); broadcasting the result back gives `tensor`."""
    if tensor.numel() <= _REPEAT_CHECK_ELEMENTS:
        return tensor
    for dim, size in enumerate(tensor.shape):
        if size > 1 and (tensor.stride(dim) == 0 or _repeats_along(tensor, dim)):
            tensor = tensor.narrow(dim, 0, 1)
    return tensor


def _repeats_along(tensor, dim):
    """Whether every slice of `tensor` along `dim` equals the first; the
    second slice is compared first, so a tensor that does not repeat
    (a weight) is mostly told after two slices, not a pass over all."""
    first = tensor.narrow(dim, 0, 1)
    if not bool((tensor.narrow(dim, 1, 1) == first).all()):
        return False
    return bool((tensor == first).all())


def _python_scalar(value, element):
    if element == "i1":
        return bool(value)
    if element in ("i64", "i32"):
        return int(value)
    return float(value)


def _to_numpy(tensor, element):
    tensor = tensor.detach().cpu()
    if element in ("bf16", "f32", "f16"):
        array = tensor.to(torch.float32).numpy()
        return array.astype(np.float16) if element == "f16" else array
    numpy_type = {"i64": np.int64, "i32": np.int32, "i1": np.bool_}[element]
    return tensor.numpy().astype(numpy_type)


def _meta_value(node):
    if "val" in node.meta:
        return node.meta["val"]
    if "tensor_meta" in node.meta:
        return node.meta["tensor_meta"]
    # torch 1.13 records no metadata on multi-output nodes; their getitem
    # users have it.
    items = {}
    for user in node.users:
        if user.target is operator.getitem and isinstance(user.args[1], int):
            items[user.args[1]] = _meta_value(user)
    if not items:
        return None
    return [items.get(i) for i in range(max(items) + 1)]


def _target_name(target):
    if target is operator.getitem:
        return "getitem"
    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if isinstance(target, torch._ops.OpOverloadPacket):
        return str(target) + ".default"
    module = getattr(target, "__module__", "") or ""
    return f"{module}.{getattr(target, '__name__', repr(target))}".lstrip(".")


# In-place ops whose out-of-place form is not the same name without "_".
_OUT_OF_PLACE = {
    "aten.bernoulli_.float": "aten.bernoulli.p",
}

_VIEW_OPS = re.compile(r"aten\.(view|_unsafe_view|_reshape_alias|reshape|slice|select|transpose|t|"
                       r"permute|expand|alias|unsqueeze|squeeze|split|split_with_sizes|unbind|"
                       r"as_strided|diagonal|narrow|unfold|chunk|detach)\.")


def _is_view(node):
    return node.op == "call_function" and bool(_VIEW_OPS.match(_target_name(node.target)))


def mapped_target(node):
    """The handler-table name the converter looks `node` up by: its ATen
    overload, an in-place op as its out-of-place form."""
    target = _target_name(node.target)
    return _out_of_place(target) if _is_in_place(target) else target


def _out_of_place(target):
    name = target.split(".")[1]
    return _OUT_OF_PLACE.get(target, target.replace(f".{name}.", f".{name[:-1]}.", 1))


def supported(node):
    """Whether the converter can take this FX node: a cheap look-up in the
    same handler table, plus the checks that need no converting (element
    types Fuse has on what the node reads and makes; no in-place update of
    a graph input). Placeholders, constants and the output always. A mapped
    op can still be refused for one use (its handler raises Unsupported),
    which only converting says."""
    if node.op in ("placeholder", "get_attr", "output"):
        return True
    if node.op != "call_function":
        return False
    target = mapped_target(node)
    if target not in _aten_ops.HANDLERS or target in _aten_ops.REJECTED:
        return False
    if _is_in_place(_target_name(node.target)) and node.args and isinstance(node.args[0], torch.fx.Node) \
            and node.args[0].op == "placeholder":
        return False
    return all(_has_element_type(n) for n in [node] + list(node.all_input_nodes))


# Dtypes a mapped op may read or make without the converter seeing them: the
# CUDA attention ops' RNG state (seed and offset), which Fuse's attention
# neither reads nor returns.
_IGNORED_DTYPES = tuple(getattr(torch, name) for name in ("uint64",) if hasattr(torch, name))


def _has_element_type(node):
    """Whether every tensor a node makes (by its metadata) has a fuse element
    type: not complex, not float64 (but for constants, which the converter
    narrows) and not any other dtype Fuse lacks. No metadata: no objection."""
    values = _meta_value(node)
    # torch 1.13's TensorMetadata is a NamedTuple: a tuple with a dtype.
    for value in (values if isinstance(values, (list, tuple)) and not hasattr(values, "dtype") else [values]):
        dtype = getattr(value, "dtype", None)
        if dtype is None or dtype in _IGNORED_DTYPES:
            continue
        if dtype not in ELEMENT_TO_TORCH.values():
            return False
        if dtype == torch.float64 and node.op != "get_attr":
            return False
    return True


def _is_in_place(target):
    parts = target.split(".")
    return (len(parts) == 3 and parts[0] == "aten" and parts[1].endswith("_")
            and not parts[1].endswith("__"))
