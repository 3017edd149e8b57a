"""The torch.compile backend "fuse".

    import fuse                                       # registers it (torch >= 2)
    model = torch.compile(model, backend="fuse")      # inference and training
    model = torch.compile(model, backend="fuse", options={"amp": None, "fallback": "error"})

Every graph dynamo captures goes through AOTAutograd (`aot_autograd`), with
Fuse's decompositions: it lifts parameters to inputs, functionalizes, and
splits a training graph into a forward and a backward graph of ATen ops,
by its minimum-cut partition (the forward saves what is dear to recompute;
cheap elementwise values are recomputed in the backward, where Fuse fuses
them into the kernels that read them). Fuse compiles each of those
(fuse.export -> fuse.compile) and runs it on the caller's tensors and
stream, keeping each graph's addresses the same from call to call
(`_stable_io.py`: small inputs that move are copied into buffers of the
graph's own, outputs reuse their memory once nothing holds it) so that the
runtime replays its CUDA graph instead of capturing it again. What a
forward saves for its backward and returns to no one else it writes into
one slab per call (`_saved_slabs.py`), handed to autograd as one tensor for
all of them, which the backward binds at offsets: no torch tensor per saved
value. A call first tries the specialization the last call ran (`fits`:
shapes, dtypes, values, baked buffers, slab layout) before building the
full key. While AOTAutograd traces, the cuDNN attention
backend is switched off so that attention reaches the graph as the flash or
memory-efficient op, which Fuse maps to its own attention; SDPA calls with
a mask computed from an input (an encoder's padding mask) call the
memory-efficient op directly (`_masked_attention.py`), which the dispatcher
would otherwise trace in SDPA's math form.

Before export each AOTAutograd graph is re-traced on the CPU with fake
tensors (a Fuse graph has no device), with the module buffers (dynamo's
`..._buffers_...` inputs) baked in as constants, as fuse.export does for a
module: what depends on them alone (rotary tables, position and token type
ids) folds away. A forward result that depends on no input (a causal mask
saved for the backward) is computed once, in torch rather than in the Fuse
graph, and handed out as the same tensor every call, so the backward graph
bakes it in too and its attention folds the mask into the `causal` flag. A result that is only a reshape of another
is returned as that other and viewed back in torch (free), and each value is
returned once. The guards: a baked buffer updated in place (its version
counter moves) means compiling again.

Options (torch.compile's `options=` dict): those of fuse.compile (amp,
default "bf16"; memory_budget; cuda_graphs; cache_dir; arch; pipeline) and
`fallback`: "eager" (default) or "error".

Per-op fallback: when fuse.export refuses a graph for ATen ops it cannot
map (ExportError), the graph is split at those ops (`_partition.py`): they
run in torch, as AOTAutograd traced them, and the rest in Fuse, each part
compiled as a whole graph is. A Fuse part of fewer than 3 ops that compute
(views, reshapes and folded constants do not count) is not worth a launch
and stays in torch too. One warning per graph names every op left in torch
and its source line; `stats["split"]` counts such graphs. A graph that fails
otherwise (compiling fails, a mapped op refused for one use, nothing left
worth Fuse, or AOTAutograd itself fails) runs eagerly whole (AOTAutograd's
ATen graph, or dynamo's graph), with one warning per captured graph that
says why. With fallback="error" nothing falls back: the error raises, and
an ExportError names every op Fuse cannot map, with its source line.

Dropout: AOTAutograd hands it over as `native_dropout` (the mask a result
of the forward, read by the backward's `native_dropout_backward`), which
becomes Fuse's Philox `fuse.random`. A graph that draws random numbers takes
`rng.seed` and `rng.offset`; every call writes fresh values into two
buffers of its own from torch's generator of the device, advancing it past
the counters the graph draws (`_graph_rng.py`, as compile_step does), so
calls drop different units and `torch.manual_seed` reproduces a run.
Attention dropout: the forward's attention returns the Philox seed and
offset it drew from as the op's RNG-state results, which AOTAutograd saves
for the backward, whose attention draws the same mask from them.

Shapes: each compiled graph is static. A graph is compiled on its first call
for the shapes it sees. When a model changes shape, dynamo recompiles (and,
after one change, marks the changing sizes dynamic); a graph with symbolic
sizes is then compiled once per concrete shape, with a warning noting each
recompilation, up to torch._dynamo.config's recompile (cache size) limit;
past it that graph runs eagerly, said once.

`stats` counts what happened (graphs seen, Fuse compilations, eager
fallbacks; `stats["joint"]`: what `_joint_rewrites` changed in the joint
graphs before their partition), for tests and curious users, and `stats["seconds"]` where
the compile time went: AOTAutograd's tracing and partition, re-tracing its
graphs, exporting them to the dialect, the pipeline and code generation (or
the cache load), and loading the kernels (NVRTC or the cubin cache); the
rest of a first call is dynamo's. `graph_captures()` counts the
CUDA graphs every compiled graph has captured: taken before and after a few
steady steps, anything but no change means calls whose pointers do not
repeat (host time spent capturing rather than replaying). `saved_bytes()`
is what one call of every forward keeps for its backward (its slab), and
`scratch_bytes()` the arena and workspaces that all the backend's graphs on
a device share (each graph needs them only while it runs).
"""

import itertools
import operator
import time
import warnings
import weakref

from .dynamo import _joint_rewrites, _masked_attention, _saved_slabs, _saved_views
from .runtime import _bound_call, _shared_scratch as _shared_scratch_memory, _stable_io
from ._compat import TORCH_2

__all__ = ["fuse_backend", "graph_captures", "register", "saved_bytes", "scratch_bytes", "stats"]

stats = {"graphs": 0, "compiled": 0, "fallbacks": 0, "recompiles": 0, "split": 0,
         "io": {"reused": 0, "allocated": 0, "staged": 0},
         "joint": {"shape_only_operands": 0, "log_softmax_from_saved_logsumexp": 0},
         "seconds": {"aotautograd": 0.0, "retrace": 0.0, "export": 0.0, "compile": 0.0, "load": 0.0}}


def _spent(phase, seconds):
    stats["seconds"][phase] += seconds


# Every graph the backend compiled and still holds.
_COMPILED = weakref.WeakSet()


def graph_captures():
    """CUDA graphs captured so far by every graph the backend compiled."""
    return sum(compiled.graph_captures for compiled in list(_COMPILED))


# Every graph shares its device's arena and workspaces (they run in turn).
_shared_scratch = _shared_scratch_memory.for_device


def scratch_bytes():
    """Device memory the arenas and workspaces that all the backend's graphs
    share hold now, over all devices."""
    return _shared_scratch_memory.device_bytes()


# The slab pools of every forward the backend holds.
_SLAB_POOLS = weakref.WeakSet()


def saved_bytes():
    """Bytes that one call of every forward the backend holds keeps for its
    backward: its slab, which holds the saved values and is the memory both
    graphs run in (the larger of their arenas)."""
    return sum(pool.layout.nbytes for pool in list(_SLAB_POOLS))

_OPTIONS = {"amp", "memory_budget", "cuda_graphs", "cache_dir", "arch", "pipeline", "fallback",
            "max_arena_bytes", "profile"}
_ATTENTION_OPS = ("_scaled_dot_product_efficient_attention", "_scaled_dot_product_flash_attention",
                  "_scaled_dot_product_cudnn_attention")
_names = itertools.count()
_CONSTANT_TENSORS = {}


class FuseRecompileWarning(UserWarning):
    """A graph was compiled again for new input shapes."""


def register():
    """Registers "fuse" with torch._dynamo (import fuse does it already)."""
    if not TORCH_2:
        raise RuntimeError("torch.compile needs torch >= 2")
    from torch._dynamo.backends import registry
    from . import _register
    _register(registry)


def _recompile_limit():
    import torch._dynamo.config as config
    for name in ("recompile_limit", "cache_size_limit"):
        value = getattr(config, name, None)
        if isinstance(value, int):
            return value
    return 8


class _DynamoGraph:
    """What the graphs AOTAutograd makes from one dynamo graph share: the
    options, and whether Fuse gave up on them (warned once)."""

    def __init__(self, options):
        self.options = options
        self.fallback = options.pop("fallback", "eager")
        if self.fallback not in ("eager", "error"):
            raise ValueError(f"fuse backend: fallback must be 'eager' or 'error', not {self.fallback!r}")
        self.gave_up = None
        self.aot_seconds = 0.0
        self.inputs, self.buffer_positions = 0, frozenset()
        # Tensors a forward graph returned that depend on no input (a causal
        # mask saved for the backward): id -> tensor, kept alive. One table
        # for every dynamo graph: under DistributedDataParallel dynamo splits
        # a model into pieces at the gradient buckets, and the mask one
        # piece makes is an input of the next, which must bake it in too (its
        # attention then folds the mask into the causal flag).
        self.constant_tensors = _CONSTANT_TENSORS
        # What the partition saves for the backward, and the forwards' slabs.
        self.saved = _saved_slabs.SavedValues()

    def take_aot_seconds(self):
        """AOTAutograd's time on this dynamo graph, reported once (with the
        first of its graphs that Fuse compiles)."""
        seconds, self.aot_seconds = self.aot_seconds, 0.0
        return seconds

    def note_inputs(self, gm):
        """Which of dynamo's graph inputs are module buffers: dynamo names
        them after their source (`L_self_modules_..._buffers_inv_freq_`)."""
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        self.inputs = len(placeholders)
        self.buffer_positions = frozenset(i for i, n in enumerate(placeholders)
                                          if "_buffers_" in str(n.target) or "_buffers_" in n.name)

    def give_up(self, error, what):
        stats["fallbacks"] += 1
        if self.gave_up is None:
            self.gave_up = error
            warnings.warn(f"fuse: running {what} eagerly: Fuse cannot compile it:\n{error}", stacklevel=2)


# Per CUDA attention op: (position of dropout_p among its arguments, the
# results that are its dropout's Philox seed and offset).
_ATTENTION_RNG = {"_scaled_dot_product_efficient_attention": (5, (2, 3)),
                  "_scaled_dot_product_flash_attention": (3, (6, 7))}


def _is_attention_extra(node):
    """Outputs 2.. of the CUDA attention ops (sequence lengths, debug masks,
    and the RNG state where nothing drops out): Fuse's attention has no such
    results. With dropout the seed and offset are real results: Fuse's
    attention returns the Philox state it drew from, which the backward
    graph takes to draw the same mask again."""
    import torch
    if not isinstance(node, torch.fx.Node) or node.target is not operator.getitem:
        return False
    source, index = node.args[0], node.args[1]
    # The forward ops by their exact name: result 2 of their backwards is a
    # real gradient (of the values).
    if not (isinstance(source, torch.fx.Node) and source.op == "call_function"):
        return False
    op = str(source.target).split(".")[1] if str(source.target).count(".") >= 2 else ""
    if not (op in _ATTENTION_OPS and index >= 2):
        return False
    for name, (dropout_position, rng_results) in _ATTENTION_RNG.items():
        if op == name and index in rng_results:
            dropout_p = source.args[dropout_position] if len(source.args) > dropout_position \
                else source.kwargs.get("dropout_p", 0.0)
            return not dropout_p
    return True


def _placeholder_stand_in(value):
    """A value to return for an attention extra: zeros of its metadata."""
    import torch
    if isinstance(value, torch.Tensor):
        return torch.zeros(tuple(int(d) for d in value.shape), dtype=value.dtype, device=value.device)
    return value


class _Specialized:
    """One AOTAutograd graph compiled by Fuse for one set of concrete input
    shapes. Non-tensor inputs (symbolic sizes) and the module buffers in
    `constants` are baked in as values: the exporter then folds what depends
    on them alone (rotary tables, position ids, token type ids), as
    fuse.export does for a module's buffers.

    The graph is re-traced on the CPU (fake tensors; device arguments and
    constants moved to the CPU): a Fuse graph has no device, and so the
    exporter's constant folding never mixes devices."""

    def __init__(self, gm, args, options, kind, constants=(), aot_seconds=0.0, saved=None):
        import torch
        from . import compiler
        from .exporter._tracing import trace
        from .dynamo import _graph_rng
        output = next(n for n in gm.graph.nodes if n.op == "output")
        returned = output.args[0]
        self.single = not isinstance(returned, (tuple, list))
        returned = [returned] if self.single else list(returned)
        self.tensor_positions = [i for i, a in enumerate(args)
                                 if isinstance(a, torch.Tensor) and i not in constants]
        baked = {i: (a.detach().cpu() if isinstance(a, torch.Tensor) else a)
                 for i, a in enumerate(args) if i not in self.tensor_positions}
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        plan = [None] * len(returned)
        for position, node in enumerate(returned):
            if node is None:
                plan[position] = ("value", None)
            elif not isinstance(node, torch.fx.Node):
                plan[position] = ("value", node)
            elif _is_attention_extra(node):
                plan[position] = ("value", _placeholder_stand_in(node.meta.get("val")))
        on_cpu = _on_cpu(gm)
        # A backward's saved values that arrive in a forward's slab: traced
        # with their own metadata, bound at the slab's address plus offset.
        # A saved value stored as its base arrives as that base, and the
        # view ops the forward left out are replayed on it (_saved_views.py).
        slab_layouts, replayed, given = {}, {}, {}
        if kind == "backward" and saved is not None:
            for k, i in enumerate(self.tensor_positions):
                layout = saved.layout_at(args[i])
                if layout is None or i >= len(placeholders) or placeholders[i].name not in layout.offsets:
                    continue
                slab_layouts[i] = layout
                name = placeholders[i].name
                shape, dtype = layout.bases[name]
                if name in layout.chains:
                    replayed[i] = layout.chains[name]
                # A base arrives dense; a value itself with the strides traced.
                given[k] = (shape, dtype, name not in layout.chains)

        def step(*tensors):
            full = [None] * len(args)
            for position, tensor in zip(self.tensor_positions, tensors):
                full[position] = _saved_views.replay(tensor, replayed[position]) if position in replayed else tensor
            for position, value in baked.items():
                full[position] = value
            result = on_cpu.run(*full)
            result = [result] if self.single else list(result)
            selected = []
            for position, value in enumerate(result):
                if plan[position] is not None:
                    continue
                if isinstance(value, torch.Tensor):
                    plan[position] = ("output", len(selected))
                    selected.append(value)
                else:  # a size (concrete for these shapes) or another constant
                    is_size = isinstance(value, int) or type(value).__name__ == "SymInt"
                    plan[position] = ("value", int(value) if is_size else value)
            return tuple(selected)

        examples = _fake_examples([args[i] for i in self.tensor_positions],
                                  [placeholders[i] if i < len(placeholders) else None for i in self.tensor_positions],
                                  given)
        started = time.perf_counter()
        # The nodes keep the source lines dynamo recorded (the Interpreter
        # makes each AOTAutograd node current, and make_fx copies its meta
        # into the nodes it records), so no Python stack is captured per
        # node, which made up much of the re-trace's seconds and named only
        # torch's own frames.
        from torch.fx import traceback as fx_traceback
        with _outside_tracing(), torch.no_grad(), fx_traceback.preserve_node_meta():
            traced = trace(step, examples, stack_traces=False)
        retrace_seconds = time.perf_counter() - started
        _spent("retrace", retrace_seconds)
        # A forward's saved values that are views of a computed value are
        # returned as that value (the backward replays the views).
        saved_chains = {}
        if kind == "forward" and saved is not None:
            position_of = {e[1]: p for p, e in enumerate(plan) if e is not None and e[0] == "output"}
            positions = saved.saved_positions(returned)
            free = _input_free_nodes(traced)
            saved_here = {j for j, p in position_of.items() if p in positions}
            # A cast of repeated key/value heads is saved as the cast heads,
            # repeated in the backward.
            _saved_views.hoist_casts(traced, saved_here, lambda node: node not in free)
            stripped = _saved_views.strip(traced, saved_here, lambda node: node not in free)
            # ... and a value the forward reads through views that move data
            # is stored as the view it computes anyway, viewed back first.
            viewed = _saved_views.store_as_viewed(traced, saved_here, lambda node: node not in free)
            for j, ops in viewed.items():
                stripped[j] = ops + stripped.get(j, [])
            saved_chains = {position_of[j]: ops for j, ops in stripped.items()}
        views, input_free = _return_roots(traced)
        # Results that are inputs as they came (the parameters a forward
        # saves for its backward) are handed back as those tensors: a copy
        # into an output, checked, pooled and bound on every call, would
        # cost a kernel and host time each, and would make the backward's
        # inputs new tensors every step.
        passed, unpassed = _split_returned_inputs(traced, exclude=set(given))
        # Results that depend on no input are computed here once, in torch,
        # and never enter the Fuse graph: a causal mask saved for the
        # backward would otherwise be written into the graph's text as a
        # B x H x T x T literal and computed by a kernel every step.
        self.host_constants, kept = _split_input_free(
            traced, [input_free[old] for old in sorted(unpassed, key=unpassed.get)])

        def planned(root, shape):
            if root in passed:
                return ("input", self.tensor_positions[passed[root]], shape)
            if input_free[root]:
                return ("constant", unpassed[root], shape)
            return ("output", kept[unpassed[root]], shape)
        self.plan = [planned(*views[e[1]]) if e[0] == "output" else e for e in plan]
        self.cached, self.shared_constants = {}, None
        self.compiled, self.rng, self.binding = None, None, None
        self.saved, self.slab_pool, self.slab_layout = saved, None, None
        self.slab_outputs, self.slab_inputs, self.slab_argument = {}, {}, None
        self.arena_results = {}  # a backward's results left in its arena: {output index: byte offset}
        self.arena_views = {}  # {result position: _saved_slabs.ArenaResult}, made on first use
        if kept:
            arg_names = [str(placeholders[i].target) if i < len(placeholders) else f"arg{i}"
                         for i in self.tensor_positions]
            name = f"{kind}_{next(_names)}"
            # A forward leaves what it saves in its arena, which is the
            # call's slab; its backward finds the values there and runs in
            # the same memory, reusing each value's bytes once it has read it.
            in_arena = ()
            if kind == "forward" and saved is not None:
                in_arena = self._saved_outputs(saved.saved_positions(returned))
            elif slab_layouts:
                # A backward that runs in its forward's slab leaves its
                # results (the gradients) there too, in the bytes of saved
                # values it has read for the last time, rather than in
                # memory of their own held next to the whole slab.
                in_arena = frozenset(self._output_users())
            arena_offsets = {arg_names[self.tensor_positions.index(i)]: layout.offsets[placeholders[i].name]
                             for i, layout in slab_layouts.items()}
            started = time.perf_counter()
            # The text, and the Philox counters its random ops (dropout) draw.
            text, counters = _graph_rng.export(traced, arg_names, name, arena_offsets=arena_offsets,
                                               results_in_arena=in_arena)
            export_seconds = time.perf_counter() - started
            _spent("export", export_seconds)
            self.compiled = compiler.compile(text, name=name, progress=False, report_phases=False,
                                             scratch=_shared_scratch, **options)
            _COMPILED.add(self.compiled)
            self.compiled.timings.update(retrace=retrace_seconds, export=export_seconds,
                                         aotautograd=aot_seconds)
            self.compiled.report_phases(f"{name} (a torch.compile {kind} graph)")
            _spent("compile", self.compiled.timings.get("compile", 0.0))
            # The backend's callers (AOTAutograd) do not choose strides.
            self.compiled.contiguous_copy = True
            self.io = _stable_io.StableIO(self.compiled, stats["io"])
            # Fresh rng.seed and rng.offset every call, from torch's generator.
            self.rng = _graph_rng.bind(self.compiled, counters)
            if kind == "forward" and saved is not None:
                self._plan_slab(saved.saved_positions(returned), returned, saved_chains)
            if slab_layouts:
                self._bind_slab(slab_layouts, placeholders, arg_names)
                self.arena_results = {spec.index: spec.arena_offset for spec in self.compiled.outputs
                                      if spec.arena_offset is not None}
                self.io.skip_outputs(self.arena_results)
            self.binding = _bound_call.BoundCall(self.compiled, self.io, skip=self.slab_inputs)
        self.load_counted = False
        self._note_arguments(args, constants, slab_layouts)

    def _note_arguments(self, args, constants, slabs):
        """What `fits` compares a later call's arguments with."""
        import torch
        self.arity = len(args)
        # The forward's parameters: a slab their gradients still hold (an
        # earlier micro-batch's) can be freed by moving those out.
        self.parameter_positions = [i for i in self.tensor_positions if isinstance(args[i], torch.nn.Parameter)]
        # (argument position, shape, dtype, the compiled input it binds, or
        # None), the input's index counting the RNG buffers put among them.
        rng = frozenset(self.rng.positions) if self.rng is not None else frozenset()
        inputs = [k for k in range(len(self.tensor_positions) + len(rng)) if k not in rng]
        self.expected = [(i, args[i].shape, args[i].dtype, inputs[j] if self.binding is not None else None)
                         for j, i in enumerate(self.tensor_positions) if i not in slabs]
        # The compiled inputs no expected argument binds as a kept
        # parameter (the RNG buffers, the saved values in a slab): bound
        # again on every call.
        covered = frozenset(bound for _, _, _, bound in self.expected if bound is not None)
        self.always_bound = ([k for k in range(len(self.binding.kept)) if k not in covered]
                             if self.binding is not None else [])
        # The parameters among them, checked in one pass of C loops while
        # every one is the tensor the last call bound (a step's usual case:
        # hundreds of parameters, where a Python loop cost about a
        # microsecond each before the first kernel); the other expected
        # arguments (the batch, tangents) checked one by one.
        parameters = [(i, bound) for i, _, _, bound in self.expected
                      if bound is not None and isinstance(args[i], torch.nn.Parameter)]
        self.parameter_args = _getter([i for i, _ in parameters])
        self.parameter_inputs = _getter([bound for _, bound in parameters])
        parameter_set = frozenset(i for i, _ in parameters)
        self.other_expected = [e for e in self.expected if e[0] not in parameter_set]
        self.device_position = self.expected[0][0] if self.expected else None
        self.expected_device = args[self.device_position].device if self.expected else None
        self.expected_constants = [(i, args[i].data_ptr(), args[i]._version) for i in constants
                                   if isinstance(args[i], torch.Tensor)]
        self.expected_values = [(i, repr(a)) for i, a in enumerate(args) if not isinstance(a, torch.Tensor)]

    def fits(self, args):
        """Whether this specialization takes `args` (the same shapes, dtypes,
        device, values, baked buffers unchanged, slabs of its layout): the
        cheap test a call makes before looking for another. None where it
        does not; else the compiled inputs the call binds again (those that
        are not the parameter the last call bound there, at the same
        address: what BoundCall.changed finds, found in the same pass)."""
        if len(args) != self.arity:
            return None
        changed = list(self.always_bound)
        binding = self.binding
        expected = self.expected
        if binding is not None and binding.keeps_all(self.parameter_inputs, self.parameter_args(args)):
            expected = self.other_expected  # every parameter the one bound last call
        try:
            for i, shape, dtype, bound in expected:
                tensor = args[i]
                if bound is not None:
                    if binding.is_kept(bound, tensor):
                        continue  # the parameter the last call bound, unchanged
                    changed.append(bound)
                if tensor.shape != shape or tensor.dtype != dtype:
                    return None
            if self.device_position is not None and args[self.device_position].device != self.expected_device:
                return None
            for i, address, version in self.expected_constants:
                if args[i].data_ptr() != address or args[i]._version != version:
                    return None
        except AttributeError:  # a tensor where a value was, or the other way round
            return None
        if all(repr(args[i]) == value for i, value in self.expected_values) and self.accepts(args):
            changed.sort()  # in input order, as BoundCall.changed gives them
            return changed
        return None

    def _output_users(self):
        """{Fuse output index: [result positions that return it]}."""
        users = {}
        for position, entry in enumerate(self.plan):
            if entry[0] == "output":
                users.setdefault(entry[1], []).append(position)
        return users

    def _saved_outputs(self, positions):
        """The Fuse outputs that are only ever saved for the backward (not
        the user's): those the forward leaves in its arena."""
        return frozenset(output for output, refs in self._output_users().items()
                         if all(p in positions for p in refs))

    def _plan_slab(self, positions, returned, chains):
        """The slab of the Fuse outputs that are only ever saved for the
        backward: the forward's arena, where it left them (at the offsets
        its memory plan chose); `chains` {position: view ops} for the saved
        values stored as their base."""
        import torch
        users = self._output_users()
        values = []
        for output, refs in sorted(users.items()):
            offset = self.compiled.outputs[output].arena_offset
            if offset is None or not all(p in positions for p in refs):
                continue
            values.append((output, offset, [returned[p].name for p in refs]))
        chained = set(chains)
        if values:
            layout = _saved_slabs.Layout(values, self.compiled.arena_bytes)
            for output, _, names in values:
                spec = self.compiled.outputs[output]
                for position in users[output]:
                    name, shape = returned[position].name, self.plan[position][2]
                    if position in chains:
                        # Stored as the Fuse output (which a reshape of the
                        # base may have replaced): reshaped back first.
                        reshape = ([(torch.ops.aten.reshape.default, (list(shape),), {}, None)]
                                   if shape is not None else [])
                        layout.chains[name] = reshape + chains[position]
                        layout.bases[name] = (tuple(spec.shape), spec.torch_dtype())
                        chained.discard(position)
                    else:  # what the torch tensor would have been: the output, reshaped
                        layout.bases[name] = (tuple(shape if shape is not None else spec.shape),
                                              spec.torch_dtype())
            self.slab_outputs = layout.output_offsets
            self.slab_pool = _saved_slabs.SlabPool(layout, self.compiled.device, self.saved)
            _SLAB_POOLS.add(self.slab_pool)
            self.io.skip_outputs(self.slab_outputs)
        if chained:  # a base handed to torch would reach the backward unviewed
            raise RuntimeError(f"internal: saved views at results {sorted(chained)} were stored as their base "
                               "outside a slab: " + self._why_outside_slab(sorted(chained), positions, returned))

    def _why_outside_slab(self, chained, positions, returned):
        """Why each of the `chained` result positions' values is not in the
        slab, for the internal error above: what the plan made of it, and
        whether its output is also the user's or has no arena offset."""
        users = self._output_users()
        reasons = []
        for position in chained:
            entry = self.plan[position]
            why = f"{returned[position].name} (result {position}) is {entry[0]}"
            if entry[0] == "output":
                output = entry[1]
                why += f" {output}, arena offset {self.compiled.outputs[output].arena_offset}"
                shared = [p for p in users.get(output, []) if p not in positions]
                if shared:
                    why += ", also returned to the user at " + ", ".join(
                        f"{returned[p].name} (result {p})" for p in shared)
            reasons.append(why)
        return "; ".join(reasons)

    def _bind_slab(self, layouts, placeholders, arg_names):
        """A backward's inputs that are saved values in a forward's slab:
        {compiled input index: byte offset}."""
        layout = next(iter(layouts.values()))
        if any(other is not layout for other in layouts.values()):  # one forward call saved them all
            raise RuntimeError("internal: a backward call given the slabs of two forward calls")
        for i in layouts:
            self.slab_inputs[self.compiled.input_names.index(arg_names[self.tensor_positions.index(i)])] = \
                layout.offsets[placeholders[i].name]
        self.slab_layout, self.slab_argument = layout, next(iter(layouts))
        self.io.skip_inputs(self.slab_inputs)
        # The backward runs in the slab: later slabs are made large enough.
        layout.nbytes = max(layout.nbytes, self.compiled.arena_bytes)

    def _backward_arena(self, slab):
        """Where the backward runs: in the slab its forward left the saved
        values in, which it overwrites as it goes, when autograd will not
        run this graph again; else (retain_graph=True) in a copy of it, as
        it does when the slab is smaller than the backward's arena (the
        first call, before the slabs grew)."""
        import torch
        keep_graph = getattr(torch._C._autograd, "_get_current_graph_task_keep_graph", lambda: True)()
        need = self.compiled.arena_bytes
        if not keep_graph and slab.numel() >= need:
            return slab
        copy = torch.empty(max(need, slab.numel()), dtype=torch.uint8, device=slab.device)
        copy[:slab.numel()].copy_(slab)
        return copy

    def accepts(self, args):
        """Whether this specialization takes these arguments: a backward
        bound to a slab layout takes only slabs of that layout."""
        return self.slab_argument is None or self.saved.layout_at(args[self.slab_argument]) is self.slab_layout

    def __call__(self, args, changed=None):
        """Runs on `args`; `changed`: what fits() returned for them, if it
        was asked."""
        compiled = self.compiled
        tensors = [args[i] for i in self.tensor_positions]
        if compiled is not None:
            device = compiled.device
            if self.rng is not None:
                tensors = self.rng.inputs(tensors, device)
            # Only what changed since the last call is checked and bound
            # again (_bound_call.py), at fixed addresses from call to call so
            # the runtime replays its CUDA graph (_stable_io.py).
            if changed is None:
                changed = self.binding.changed(tensors)
            for k in changed:
                tensor = tensors[k]
                # A scalar kept on the CPU (a Python number dynamo made a
                # tensor) goes to the device; anything larger there is the
                # caller's error.
                if tensor.device.type == "cpu" and tensor.numel() <= 1:
                    tensors[k] = tensor.to(device)
            inputs = self.binding.bind_inputs(tensors, changed)
            arena = None
            if self.slab_inputs:  # found in the arena, not at these addresses
                arena = self._backward_arena(args[self.slab_argument])
            outputs = self.io.outputs(inputs)
            if self.slab_pool is not None:
                # Gradients an earlier backward left in a pooled slab (a
                # micro-batch's, kept in param.grad) may be moved out of it.
                arena = slab = self.slab_pool.take([args[i] for i in self.parameter_positions])
                # One alias for every saved value: autograd keeps it with the
                # graph, and the pool sees it held until then.
                handed_slab = slab.detach()
            self.binding.run(outputs, arena=arena)
            # A backward's results are handed out where it left them in its
            # arena (below); where it ran in a copy (retain_graph=True, or
            # the first call), as results of their own, so that a gradient
            # torch keeps never holds a copy that no pool takes back.
            in_copy = self.arena_results and arena is not args[self.slab_argument]
            if not self.load_counted:  # the session (kernels) loads on the first run
                self.load_counted = True
                _spent("load", compiled.timings.get("load", 0.0))
        else:
            device = _device_of(tensors)
        result = []
        storage = None  # the arena's, fetched once for every result left in it
        for position, entry in enumerate(self.plan):
            if entry[0] == "value":
                result.append(entry[1])
                continue
            if entry[0] == "output" and entry[1] in self.arena_results:
                where = self.arena_views.get(position)
                if where is None:
                    spec = compiled.outputs[entry[1]]
                    where = self.arena_views[position] = _saved_slabs.ArenaResult(
                        self.arena_results[entry[1]], spec.torch_dtype(),
                        spec.shape if entry[2] is None else entry[2])
                if storage is None:
                    storage, arena_device = arena.untyped_storage(), arena.device
                tensor = where.view(storage, arena_device)
                result.append(tensor.clone() if in_copy else tensor)
                continue
            if entry[0] == "input":
                tensor = args[entry[1]]
                result.append(tensor if entry[2] is None else tensor.view(entry[2]))
                continue
            if entry[0] == "constant" and position in self.cached:
                result.append(self.cached[position])
                continue
            if entry[0] == "output":
                if entry[1] in self.slab_outputs:
                    result.append(handed_slab)
                else:
                    result.append(_stable_io.hand_out(outputs[entry[1]], entry[2]))
                continue
            source = self.host_constants[entry[1]].to(device)
            tensor = source if entry[2] is None else source.view(entry[2])
            if entry[0] == "constant":
                # The same tensor every call: a backward graph that takes it
                # can bake it in (and fold, e.g., a causal mask).
                self.cached[position] = tensor
                if self.shared_constants is not None:
                    self.shared_constants[id(tensor)] = tensor
            result.append(tensor)
        return result[0] if self.single else result


def _getter(indices):
    """A function from a sequence to the tuple of its items at `indices`
    (operator.itemgetter, which returns a bare item for one index)."""
    if len(indices) == 1:
        index = indices[0]
        return lambda sequence: (sequence[index],)
    return operator.itemgetter(*indices) if indices else (lambda sequence: ())


_RESHAPES = {"aten.view.default", "aten._unsafe_view.default", "aten.reshape.default", "aten.unsqueeze.default",
             "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default", "aten.alias.default"}


def _return_roots(traced):
    """Rewrites the traced graph to return each distinct value once, and a
    value whose result is only a reshape of another as that other value;
    returns, per original result, (index among the new results, shape to
    view it as, or None). The caller views the tensor back, for free: a
    reshape of a contiguous result is a view in torch, and Fuse need not
    return the same memory twice or materialise a reshape (the CUDA code
    generator also refuses to return both a GEMM result's reshape and a
    value computed from it, "result placed in caller memory (external) but
    not returned")."""
    import torch
    from .exporter._fx_to_mlir import _meta_value
    shape_of = lambda n: tuple(int(d) for d in _meta_value(n).shape)
    output = next(n for n in traced.graph.nodes if n.op == "output")
    returned = list(output.args[0])
    roots, mapping = [], []
    for node in returned:
        root, shape = node, None
        while (isinstance(root, torch.fx.Node) and root.op == "call_function"
               and str(root.target) in _RESHAPES):
            root = root.args[0]
        if root is not node:
            shape = shape_of(node)
            if shape_of(root) == shape:
                shape = None
        if root not in roots:
            roots.append(root)
        mapping.append((roots.index(root), shape))
    output.args = (tuple(roots),)
    # The re-traced graph is only walked from here on (the exporter, an
    # Interpreter), never called: its Python code is not regenerated, which
    # took a few tenths of a second per edit on a large graph.
    traced.graph.eliminate_dead_code()
    free = _input_free_nodes(traced)
    return mapping, [root in free or not isinstance(root, torch.fx.Node) for root in roots]


def _drop_results(traced, drop):
    """Removes the results at indices `drop` from `traced`'s output;
    returns {old index: new index} of the results kept."""
    output = next(n for n in traced.graph.nodes if n.op == "output")
    roots = list(output.args[0])
    kept = [i for i in range(len(roots)) if i not in drop]
    if len(kept) != len(roots):
        output.args = (tuple(roots[i] for i in kept),)
        traced.graph.eliminate_dead_code()  # walked, never called: no recompile
    return {old: new for new, old in enumerate(kept)}


def _split_returned_inputs(traced, exclude=()):
    """The results of `traced` that are one of its inputs unchanged,
    removed from its results. Returns ({result index: input index}, {result
    index: index among the results left}), in the indices before the split.
    Inputs at `exclude` (bound by address in a slab, not the tensor the
    caller passes) stay results."""
    placeholders = [n for n in traced.graph.nodes if n.op == "placeholder"]
    output = next(n for n in traced.graph.nodes if n.op == "output")
    passed = {}
    for i, root in enumerate(output.args[0]):
        if getattr(root, "op", None) == "placeholder":
            index = placeholders.index(root)
            if index not in exclude:
                passed[i] = index
    return passed, _drop_results(traced, passed)


def _split_input_free(traced, input_free):
    """Evaluates the results of `traced` that `input_free` marks (they depend
    on no input and draw no random numbers) on the CPU with real tensors,
    and removes them from the graph's results. Returns ({result index:
    tensor}, {result index: index among the results left}) in the indices
    of the results before the split."""
    import torch
    output = next(n for n in traced.graph.nodes if n.op == "output")
    roots = list(output.args[0])
    free = [i for i, is_free in enumerate(input_free) if is_free]
    if not free:
        return {}, {i: i for i in range(len(roots))}
    needed, stack = set(), [roots[i] for i in free]
    while stack:
        node = stack.pop()
        if isinstance(node, torch.fx.Node) and node not in needed:
            needed.add(node)
            stack.extend(node.all_input_nodes)
    interpreter = torch.fx.Interpreter(traced)
    with torch.no_grad():
        for node in traced.graph.nodes:
            if node in needed:
                interpreter.env[node] = interpreter.run_node(node)
    values = {i: interpreter.env[roots[i]] for i in free}
    return values, _drop_results(traced, values)


def _device_of(tensors):
    import torch
    return next((t.device for t in tensors if t.device.type != "cpu"), torch.device("cuda"))


def _input_free_nodes(traced):
    """The nodes of `traced` that depend on no graph input and draw no
    random numbers (their value is the same every call), in one pass over
    the graph in its topological order."""
    free = set()
    for n in traced.graph.nodes:
        random = n.op == "call_function" and any(
            word in str(n.target) for word in ("rand", "bernoulli", "dropout", "philox", "seed"))
        if n.op in ("get_attr", "call_function") and not random and all(
                i in free for i in n.all_input_nodes):
            free.add(n)
    return free


def _on_cpu(gm):
    """An fx.Interpreter of `gm` that runs it with device arguments and
    tensor constants on the CPU (what runs on the GPU is Fuse's, not this
    graph). It maps them as it goes, rather than copying the module: a
    deep copy of a graph of thousands of nodes, and the Python code it
    regenerates, cost a second of a large model's compile."""
    import torch
    from torch.fx.node import map_aggregate
    cpu = torch.device("cpu")

    def to_cpu(value):
        if isinstance(value, torch.device) and value.type != "cpu":
            return cpu
        return value

    class CpuInterpreter(torch.fx.Interpreter):
        def __init__(self, module):
            super().__init__(module)
            self.constants = {}  # attribute path -> its CPU copy, made once

        def fetch_attr(self, target):
            value = super().fetch_attr(target)
            if not isinstance(value, torch.Tensor) or value.device.type == "cpu":
                return value
            if target not in self.constants:
                self.constants[target] = value.detach().cpu().requires_grad_(value.requires_grad)
            return self.constants[target]

        def call_function(self, target, args, kwargs):
            return super().call_function(target, map_aggregate(args, to_cpu), map_aggregate(kwargs, to_cpu))

    return CpuInterpreter(gm)


def _with_reshapes(gm):
    """A copy of `gm` whose views are reshapes, to run a graph eagerly after
    Fuse: a graph that Fuse could not take may receive what a Fuse graph
    returned (contiguous) where AOTAutograd traced another layout, and a
    view of it would fail where a reshape copies."""
    import torch
    views = {torch.ops.aten.view.default, torch.ops.aten._unsafe_view.default}
    graph = torch.fx.Graph()
    graph.output(graph.graph_copy(gm.graph, {}))
    for node in graph.nodes:
        if node.op == "call_function" and node.target in views:
            node.target = torch.ops.aten.reshape.default
    return torch.fx.GraphModule(gm, graph)


def _traced_strides(placeholder, shape, default):
    """The strides AOTAutograd traced a value of `shape` with, where it
    traced that shape (the graph may view it in a way only those strides
    allow); else `default` (symbolic sizes; the memory-efficient attention's
    log-sum-exp, which it pads to 32 queries and Fuse does not)."""
    import torch
    traced = placeholder.meta.get("val") if placeholder is not None else None
    try:
        if isinstance(traced, torch.Tensor) and tuple(int(d) for d in traced.shape) == tuple(shape):
            return tuple(int(x) for x in traced.stride())
    except (TypeError, ValueError, RuntimeError):
        pass
    return default


def _fake_examples(tensors, placeholders, given=None):
    """Fake CPU tensors of the inputs' shapes and dtypes, with the strides
    AOTAutograd traced the graph with (its placeholders' metadata; else the
    tensor's own): tracing allocates nothing and computes nothing. The graph
    may rely on those strides: a saved attention output laid out [B, T, H, D]
    under its [B, H, T, D] shape is permuted and then *viewed* as
    [B, T, H * D], which a contiguous stand-in cannot be, and the tensor
    that arrives may be laid out otherwise (a Fuse forward returns it
    contiguous). Fuse's values are logical, so the exporter takes the view
    as a reshape, and the runtime copies a strided input to the layout its
    graph reads. `given` {position: (shape, dtype, with the traced
    strides)} stands in for saved values that arrive in a slab, which holds
    no tensor of theirs (dense where not traced)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    layouts = []
    for position, (tensor, placeholder) in enumerate(zip(tensors, placeholders)):
        if given and position in given:
            shape, dtype, traced = given[position]
            layouts.append((shape, _traced_strides(placeholder, shape, None) if traced else None, dtype))
            continue
        shape = tuple(int(d) for d in tensor.shape)
        layouts.append((shape, _traced_strides(placeholder, shape, tuple(int(x) for x in tensor.stride())),
                        tensor.dtype))
    with mode:
        return [torch.empty(shape, dtype=dtype, device="cpu") if stride is None
                else torch.empty_strided(shape, stride, dtype=dtype, device="cpu")
                for shape, stride, dtype in layouts]


class _outside_tracing:
    """No dynamo tracing context and no autocast while Fuse re-traces an
    AOTAutograd graph (its casts are explicit already)."""

    def __enter__(self):
        import torch
        self._stack = []
        guards = getattr(torch, "_guards", None)
        if guards is not None and hasattr(guards, "tracing"):
            self._stack.append(guards.tracing(None))
        self._stack.append(torch.autocast("cuda", enabled=False))
        self._stack.append(torch.autocast("cpu", enabled=False))
        for context in self._stack:
            context.__enter__()
        return self

    def __exit__(self, *exc):
        for context in reversed(self._stack):
            context.__exit__(*exc)


def _failing_node(gm, error):
    """The name of the call in `gm` whose re-trace raised `error` (a
    TracingError: torch.fx's Interpreter names the node it was executing),
    or None."""
    import re
    original = getattr(error, "original", None)
    for name in re.findall(r"While executing %([\w.]+)", str(original) if original is not None else ""):
        node = next((n for n in gm.graph.nodes if n.name == name), None)
        if node is not None and node.op == "call_function":
            return name
    return None


class _TorchArguments:
    """A split graph (dynamo/_partition.py) called with its arguments as
    torch ops take them (a backward's saved values out of their slabs)."""

    def __init__(self, split, in_torch):
        self.split, self.in_torch = split, in_torch

    def __call__(self, args):
        return self.split(self.in_torch(args))


class _FuseGraph:
    """An AOTAutograd graph (forward, backward or inference) as AOTAutograd
    calls it, compiled per input shapes."""
    def __init__(self, gm, kind, shared):
        # AOTAutograd calls a function with this flag with its arguments as
        # one list. On the instance, not the class: dynamo wraps a backward
        # in torch._dynamo.disable, whose functools.wraps copies the
        # instance's attributes only, and AOTAutograd warned that the
        # backward did not take boxed arguments.
        self._boxed_call = True
        self.gm, self.kind, self.shared = gm, kind, shared
        self.specialized = {}
        self.last = None  # the specialization the last call ran, tried first
        self.eager_noted = False
        self.eager_gm = None
        self.placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        # The forward (or inference) graph takes dynamo's inputs in order;
        # module buffers among them are baked in as constants.
        self.buffers = (shared.buffer_positions if kind != "backward" and len(self.placeholders) == shared.inputs
                        else frozenset())

    def _constants(self, args):
        """Positions baked in: module buffers, tensors a forward graph
        returned as constants, and the attention ops' RNG state (the uint64
        seed and offset a backward graph takes from its forward: the forward
        handed out stand-ins for them, and Fuse's attention does not read
        them)."""
        import torch
        handed_out = self.shared.constant_tensors
        rng_state = getattr(torch, "uint64", None)
        return self.buffers | frozenset(i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and (
            id(a) in handed_out or a.dtype == rng_state))

    def _key(self, args):
        """What a compiled specialization depends on: the shapes, dtypes and
        devices of the tensors, the values of everything else, and the
        identity and version of each baked buffer (an in-place update of a
        buffer means compiling again)."""
        import torch
        key = []
        constants = self._constants(args)
        for i, a in enumerate(args):
            if not isinstance(a, torch.Tensor):
                key.append(("value", repr(a)))
            elif (layout := self.shared.saved.layout_at(a)) is not None:
                key.append(("slab", id(layout)))
            elif i in constants:
                key.append(("constant", tuple(a.shape), a.dtype, a.data_ptr(), a._version))
            else:
                key.append((tuple(a.shape), a.dtype, a.device))
        return tuple(key)

    def _in_torch(self, args):
        """`args` as torch ops take them: a backward's saved values out of
        their slabs."""
        if self.kind != "backward":
            return args
        return _saved_slabs.unpack(self.shared.saved, self.placeholders, args)

    def _eager(self, args):
        if self.eager_gm is None:
            self.eager_gm = _with_reshapes(self.gm)
        return self.eager_gm(*self._in_torch(args))

    def __call__(self, *args):
        # Boxed (one list), as AOTAutograd calls both graphs; unboxed where a
        # wrapper dropped the flag. Graph inputs are never lists.
        if len(args) == 1 and isinstance(args[0], list):
            args = args[0]
        entry = self.last
        if entry is not None:
            changed = entry.fits(args)
            if changed is not None:
                return entry(args, changed)
        key = self._key(args)
        entry = self.specialized.get(key)
        if entry is None:
            entry = self._specialize(args, key)
        if entry == "eager":
            return self._eager(args)
        if isinstance(entry, _Specialized):
            self.last = entry
        return entry(args)

    def _specialize(self, args, key):
        if self.shared.gave_up is not None:
            self.specialized[key] = "eager"
            return "eager"
        limit = _recompile_limit()
        if len(self.specialized) >= limit:
            if not self.eager_noted:
                self.eager_noted = True
                warnings.warn(f"fuse: the {self.kind} graph was compiled for {limit} input shapes "
                              "(torch._dynamo.config's recompile limit); other shapes run eagerly",
                              FuseRecompileWarning, stacklevel=3)
            return "eager"
        if self.specialized:
            stats["recompiles"] += 1
            shapes = [list(k[0]) for k in key if k[0] not in ("value", "constant")][:4]
            warnings.warn(f"fuse: compiling the {self.kind} graph again for new input shapes "
                          f"({len(self.specialized) + 1} of at most {limit}; first inputs {shapes})",
                          FuseRecompileWarning, stacklevel=3)
        try:
            entry = _Specialized(self.gm, args, self.shared.options, self.kind, self._constants(args),
                                 aot_seconds=self.shared.take_aot_seconds(), saved=self.shared.saved)
            entry.shared_constants = self.shared.constant_tensors
            stats["compiled"] += 1
        except Exception as error:  # ExportError, TracingError, FuseError, or a bug: never the user's run
            if self.shared.fallback == "error":
                raise
            entry = None
            # Ops Fuse cannot map (ExportError), or the one whose re-trace
            # failed (TracingError): those in torch, the rest in Fuse.
            refused = _failing_node(self.gm, error) if type(error).__name__ == "TracingError" else None
            if type(error).__name__ == "ExportError" or refused:
                from .dynamo._partition import split_entry
                split = split_entry(self.gm, self._in_torch(args), self.kind, self._constants(args),
                                    self.shared.options, self.shared.constant_tensors,
                                    refused=frozenset([refused] if refused else ()))
                entry = None if split is None else _TorchArguments(split, self._in_torch)
            if entry is None:
                if type(error).__name__ not in ("ExportError", "TracingError", "FuseError"):
                    error = RuntimeError(f"{type(error).__name__}: {error}")
                self.shared.give_up(error, f"the {self.kind} graph")
                entry = "eager"
        self.specialized[key] = entry
        return entry


def _attention_without_cudnn():
    """While AOTAutograd traces: attention as flash, memory-efficient or
    math, the forms fuse.export maps (not cuDNN's op)."""
    import contextlib
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return contextlib.nullcontext()
    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def fuse_backend(gm, example_inputs, *, options=None, mode=None):
    """The compiler function torch.compile(backend="fuse") calls with each
    graph dynamo captures."""
    if not TORCH_2:
        raise RuntimeError("the fuse torch.compile backend needs torch >= 2")
    from torch._dynamo.backends.common import aot_autograd
    from .exporter._tracing import decomposition_table
    options = dict(options or {})
    unknown = set(options) - _OPTIONS
    if unknown:
        raise ValueError(f"fuse backend: unknown option(s) {sorted(unknown)}; known: {sorted(_OPTIONS)}")
    if mode == "reduce-overhead":
        options.setdefault("cuda_graphs", True)
    shared = _DynamoGraph(options)
    shared.note_inputs(gm)
    stats["graphs"] += 1
    # Attention with an input's mask as one op (not SDPA's math form).
    _masked_attention.route(gm)

    def compiler_for(kind):
        return lambda graph, inputs: _FuseGraph(graph, kind, shared)

    # What the forward saves for the backward: AOTAutograd's minimum-cut
    # partition (Inductor's), which recomputes cheap elementwise values in
    # the backward, where Fuse fuses them into the kernels that read them,
    # rather than saving them. Measured on an H200 (bench/NOTES.md): Llama's
    # training step 13.0 -> 8.0 GiB, BERT-large B4 8.6 -> 6.9 GiB, and less
    # device time for both.
    from torch._functorch.partitioners import min_cut_rematerialization_partition

    def partition(joint, joint_inputs, **kwargs):
        # Values the partition would save for nothing or in f32 (_joint_rewrites).
        for key, count in _joint_rewrites.prepare_joint(joint).items():
            stats["joint"][key] += count
        forward, backward = min_cut_rematerialization_partition(joint, joint_inputs, **kwargs)
        if kwargs.get("num_fwd_outputs") is not None:  # else nothing is put in slabs
            shared.saved.note_partition(backward, kwargs["num_fwd_outputs"])
        return forward, backward

    backend = aot_autograd(fw_compiler=compiler_for("forward"), bw_compiler=compiler_for("backward"),
                           inference_compiler=compiler_for("inference"),
                           partition_fn=partition,
                           decompositions=decomposition_table())
    try:
        started = time.perf_counter()
        with _attention_without_cudnn():
            compiled = backend(gm, example_inputs)
        # The forward and backward compilers above only wrap the graphs:
        # this is AOTAutograd's tracing and partitioning.
        shared.aot_seconds = time.perf_counter() - started
        _spent("aotautograd", shared.aot_seconds)
        return compiled
    except Exception as error:
        if type(error).__module__.startswith("torch._dynamo") or shared.fallback == "error":
            raise
        shared.give_up(error, "a graph AOTAutograd could not prepare")
        return gm.forward
