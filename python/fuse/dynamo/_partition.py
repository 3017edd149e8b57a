"""Per-op fallback: a graph Fuse cannot take whole runs the ops it cannot
map in torch and the rest in Fuse.

    plan = split(gm, constants)            # which nodes go where, and why
    run = SplitGraph(gm, plan, compile_part, "forward")
    outputs = run(args)                    # Fuse parts compiled on the first call

`split` labels each node of an FX graph of ATen ops (an AOTAutograd forward,
backward or inference graph) Fuse or torch: torch for what the exporter's
handler table cannot take (`_fx_to_mlir.supported`: no handler, a dtype
Fuse lacks, an in-place update of a graph input), Fuse for the rest. A
node that depends on no graph input (or only on inputs baked in as
constants) is Fuse's whatever its op: the exporter evaluates it with torch
and folds it into a constant. A `getitem` goes with the node whose result it
takes apart, so no tuple crosses a boundary.

Nodes are then grouped into parts by alternation depth: a Fuse node's level
is the highest level among its Fuse inputs and one more than the highest
among its torch inputs; a torch node's level is the highest among all its
inputs. The parts run in the order Fuse 0, torch 0, Fuse 1, torch 1, ...:
each part reads only graph inputs and earlier parts, so there is no cycle,
and the number of Fuse graphs is the least any split has (one more than the
number of times a path through the graph goes from torch back to Fuse).

Small islands stay in torch. A Fuse part is compiled only if it has at least
`MIN_FUSE_OPS` (3) ops that compute: nodes other than views, reshapes,
`getitem` and constants it folds. Below that, Fuse would save no launch
(a lone GEMM is one cuBLASLt call either way; two elementwise ops are one
kernel against two) and would add a call boundary, its checks and a
contiguous copy of what it reads. Such a part joins torch, and the parts
are formed again until every Fuse part is large enough.

Why not `torch.fx.passes.split_module` or `CapabilityBasedPartitioner`:
both exist on torch 1.13 and 2.x, but differ between them (symbolic sizes,
get_attr constants, global-state nodes; `fuse_by_partitions` took lists,
now dicts), and the split needs the node-to-value map at run time anyway.
The parts here are built by `Graph.node_copy`, which keeps every node's
name and metadata (shapes, `stack_trace`) on both.
"""

import collections

import torch

from ..exporter._fx_to_mlir import _is_view, _RANDOM_OPS, _target_name, mapped_target, supported
from ..exporter._source import describe_location

__all__ = ["MIN_FUSE_OPS", "Part", "Plan", "SplitGraph", "split", "describe_nodes"]

MIN_FUSE_OPS = 3
_MAX_LISTED = 24


class Part:
    """A run of nodes that goes to one side. `module` is a GraphModule that
    takes `inputs` (nodes of the original graph, in order) and returns the
    tuple of `outputs` (nodes that later parts or the graph's output read)."""

    def __init__(self, side, level, nodes):
        self.side, self.level, self.nodes = side, level, nodes
        self.module, self.inputs, self.outputs = None, [], []

    def names(self):
        return [n.name for n in self.nodes]

    def __repr__(self):
        return f"<{self.side} part {self.level}: {', '.join(self.names())}>"


class Plan:
    """What `split` decided: the parts in the order they run, the nodes Fuse
    cannot take (`unsupported`) and those kept in torch only because their
    part was too small (`small`)."""

    def __init__(self, parts, unsupported, small):
        self.parts, self.unsupported, self.small = parts, unsupported, small

    @property
    def fuse_parts(self):
        return [p for p in self.parts if p.side == "fuse"]

    @property
    def torch_parts(self):
        return [p for p in self.parts if p.side == "torch"]


def _is_random(node):
    return node.op == "call_function" and bool(_RANDOM_OPS.match(_target_name(node.target)))


def _input_free_nodes(gm, constants, refused=frozenset()):
    """The nodes whose value depends on no graph input other than those at
    the positions in `constants` (baked in), on no random op and on no
    node named in `refused` (one whose re-trace failed: folding it into a
    Fuse part would re-trace it again)."""
    free = set()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for position, node in enumerate(placeholders):
        if position in constants:
            free.add(node)
    for node in gm.graph.nodes:
        if node.op == "get_attr" or (node.op == "call_function" and not _is_random(node)
                                     and node.name not in refused
                                     and all(i in free for i in node.all_input_nodes)):
            free.add(node)
    return free


def _computes(node, free):
    """A node that costs a kernel or a GEMM: not a view, a reshape, a
    getitem or a constant the exporter folds."""
    return (node.op == "call_function" and node not in free and not _is_view(node)
            and mapped_target(node) not in ("getitem", "aten.alias.default", "aten.clone.default",
                                            "aten.contiguous.default", "aten.detach.default"))


def _levels(gm, on_fuse):
    """(side, level) of every computing node, as the module docstring says."""
    placed = {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "get_attr", "output"):
            continue
        inputs = [placed[i] for i in node.all_input_nodes if i in placed]
        if node.target is _GETITEM and node.args and node.args[0] in placed:
            placed[node] = placed[node.args[0]]
        elif node in on_fuse:
            placed[node] = ("fuse", max([level if side == "fuse" else level + 1 for side, level in inputs],
                                        default=0))
        else:
            placed[node] = ("torch", max([level for _, level in inputs], default=0))
    return placed


def _group(gm, placed):
    by_key = collections.OrderedDict()
    for node in gm.graph.nodes:
        if node in placed:
            by_key.setdefault(placed[node], []).append(node)
    keys = sorted(by_key, key=lambda key: (key[1], 0 if key[0] == "fuse" else 1))
    return [Part(side, level, by_key[(side, level)]) for side, level in keys]


def split(gm, constants=(), can_take=supported, min_ops=MIN_FUSE_OPS, refused=frozenset()):
    """The Plan for `gm`: parts in run order with their modules built.
    `constants` are the positions of graph inputs baked in as constants;
    `can_take(node)` says whether Fuse can take a node (default: the
    exporter's `supported`); nodes named in `refused` go to torch even
    where they depend on no input."""
    free = _input_free_nodes(gm, frozenset(constants), frozenset(refused))
    calls = [n for n in gm.graph.nodes if n.op not in ("placeholder", "get_attr", "output")]
    unsupported = [n for n in calls if n not in free and n.target is not _GETITEM and not can_take(n)]
    on_fuse = set(calls) - set(unsupported)
    small = []
    while True:
        parts = _group(gm, _levels(gm, on_fuse))
        demoted = [p for p in parts if p.side == "fuse" and sum(_computes(n, free) for n in p.nodes) < min_ops]
        if not demoted:
            break
        for part in demoted:
            on_fuse.difference_update(part.nodes)
            small.extend(n for n in part.nodes if _computes(n, free))
    side_of = {node: part.side for part in parts for node in part.nodes}
    for part in parts:
        _build(gm, part, free, side_of)
    parts = [p for p in parts if p.outputs]
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    small.sort(key=order.get)
    return Plan(parts, unsupported, small)


_GETITEM = __import__("operator").getitem


def _build(gm, part, free, side_of):
    """Part.module, .inputs and .outputs from the part's nodes. A Fuse part
    computes the constants it reads itself (copies of the nodes that depend
    on no input), so that the exporter folds them, as in a whole graph."""
    graph = torch.fx.Graph()
    env, inside = {}, set(part.nodes)

    def value_of(node):
        if node not in env:
            if node.op == "get_attr":
                env[node] = graph.node_copy(node)
            elif part.side == "fuse" and node.op == "call_function" and node in free:
                for source in node.all_input_nodes:
                    value_of(source)
                env[node] = graph.node_copy(node, lambda n: env[n])
            else:
                placeholder = graph.placeholder(node.name)
                placeholder.meta = dict(node.meta)
                env[node] = placeholder
                part.inputs.append(node)
        return env[node]

    for node in part.nodes:
        for source in node.all_input_nodes:
            if source not in inside:
                value_of(source)
        env[node] = graph.node_copy(node, lambda n: env[n])
    part.outputs = [n for n in part.nodes if any(
        user not in inside and not (n in free and side_of.get(user) == "fuse") for user in n.users)]
    graph.output(tuple(env[n] for n in part.outputs))
    graph.lint()
    part.module = torch.fx.GraphModule(gm, graph)


def describe_nodes(nodes, limit=_MAX_LISTED):
    """One line per op and source line: `aten.sort.default at model.py:12
    (node sort)`, with a count where several nodes share both."""
    groups = collections.OrderedDict()
    for node in nodes:
        groups.setdefault((_target_name(node.target), describe_location(node)), []).append(node)
    lines = []
    for (target, where), members in groups.items():
        count = f" x{len(members)}" if len(members) > 1 else ""
        names = ", ".join(n.name for n in members[:3]) + (", ..." if len(members) > 3 else "")
        lines.append(f"  {target}{count} at {where} (node {names})")
    if len(lines) > limit:
        lines = lines[:limit] + [f"  ... and {len(lines) - limit} more"]
    return lines


class SplitGraph:
    """Runs a Plan: torch parts as FX graphs (views taken as reshapes, since
    a Fuse part returns contiguous tensors where the graph was traced with
    other layouts), Fuse parts through `compile_part(module, args, constants,
    name)`, a callable taking and returning lists, made on the first call
    when the part's inputs are known. A part that Fuse then fails to
    compile runs in torch too. After the first call, one warning names
    what runs in torch (`warn(message)`, if given)."""

    def __init__(self, gm, plan, compile_part, kind, constants=(), warn=None, on_compiled=None):
        self.gm, self.plan, self.kind = gm, plan, kind
        self.compile_part, self.warn, self.on_compiled = compile_part, warn, on_compiled
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        self.placeholders = placeholders
        self.constants = {node: position for position, node in enumerate(placeholders) if position in constants}
        output = next(n for n in gm.graph.nodes if n.op == "output")
        self.returned = output.args[0]
        self.single = not isinstance(self.returned, (tuple, list))
        self.runners = [None] * len(plan.parts)
        self.failures = []  # (part, error)
        self.first_call = True

    def _get_attr(self, node):
        value = self.gm
        for name in node.target.split("."):
            value = getattr(value, name)
        return value

    def _runner(self, index, part, values):
        if part.side == "torch":
            from ..backend import _with_reshapes
            module = _with_reshapes(part.module)
            return lambda args: list(module(*args))
        constants = frozenset(i for i, node in enumerate(part.inputs) if node in self.constants)
        name = f"{self.kind}_part{index}"
        try:
            compiled = self.compile_part(part.module, values, constants, name)
        except Exception as error:  # ExportError, TracingError, FuseError, or a bug: never the user's run
            self.failures.append((part, error))
            from ..backend import _with_reshapes
            module = _with_reshapes(part.module)
            return lambda args: list(module(*args))
        if self.on_compiled is not None:
            self.on_compiled(part)
        return lambda args: list(compiled(list(args)))

    def __call__(self, args):
        env = dict(zip(self.placeholders, args))
        for index, part in enumerate(self.plan.parts):
            values = [env[n] for n in part.inputs]
            runner = self.runners[index]
            if runner is None:
                runner = self.runners[index] = self._runner(index, part, values)
            results = runner(values)
            env.update(zip(part.outputs, results))
        if self.first_call:
            self.first_call = False
            if self.warn is not None:
                self.warn(self.message())

        def lookup(node):
            if node.op == "get_attr":
                return self._get_attr(node)
            return env[node]

        result = torch.fx.node.map_arg(self.returned, lookup)
        return result if self.single else list(result)

    def message(self):
        """What runs where, for the one warning."""
        plan = self.plan
        compiled = sum(1 for p, r in zip(plan.parts, self.runners) if p.side == "fuse") - len(self.failures)
        lines = [f"fuse: the {self.kind} graph runs {len(plan.unsupported)} op(s) that Fuse cannot take in "
                 f"torch, and the rest in {compiled} Fuse graph(s):"]
        lines += describe_nodes(plan.unsupported)
        if plan.small:
            lines.append(f"  and {len(plan.small)} op(s) around them in torch too, in islands of fewer than "
                         f"{MIN_FUSE_OPS} ops (not worth a Fuse graph)")
        for part, error in self.failures:
            text = str(error).strip().splitlines()
            lines.append(f"  and a part of {len(part.nodes)} node(s) that Fuse could not compile, in torch: "
                         f"{type(error).__name__}: {text[0] if text else ''}")
            lines += ["    " + line for line in text[1:8]]
        return "\n".join(lines)


def split_entry(gm, args, kind, constants, options, shared_constants=None, refused=frozenset()):
    """For the torch.compile backend, after fuse.export refused `gm` whole
    (ExportError): a SplitGraph that compiles its Fuse parts as the backend
    compiles a whole graph (`backend._Specialized`, on the part's inputs of
    the first call), or None where splitting cannot help (no op is
    unsupported by the table, so the refusal was about one use of a mapped
    op; or no part is left for Fuse). `constants` are the positions of the
    inputs the backend bakes in; `refused` names nodes to leave to torch
    although the table maps them (one whose re-trace failed)."""
    import warnings
    from .. import backend
    try:
        plan = split(gm, constants, can_take=lambda node: node.name not in refused and supported(node),
                     refused=refused)
    except Exception:  # a graph this module does not understand: the whole graph eagerly, as before
        return None
    if not plan.unsupported or not plan.fuse_parts:
        return None

    def compile_part(module, values, part_constants, name):
        entry = backend._Specialized(module, values, options, name, part_constants)
        entry.shared_constants = shared_constants
        return entry

    def compiled(part):
        backend.stats["compiled"] += 1

    def warn(message):
        if not getattr(gm, "_fuse_split_warned", False):
            gm._fuse_split_warned = True
            warnings.warn(message, FuseSplitWarning, stacklevel=4)

    backend.stats["split"] = backend.stats.get("split", 0) + 1
    return SplitGraph(gm, plan, compile_part, kind, constants, warn=warn, on_compiled=compiled)


class FuseSplitWarning(UserWarning):
    """A graph runs partly in torch: the ops Fuse cannot take, and small
    islands around them."""
