"""`fuse.compile`: a graph (fuse dialect text, or a torch.fx GraphModule of
ATen ops) -> a callable that runs it on the GPU with torch tensors.

    compiled = fuse.compile(text_or_graph_module, example_inputs,
                            amp="bf16", memory_budget=None, cuda_graphs=True,
                            profile=False, cache_dir=None, arch=None, pipeline=None)
    outputs = compiled(*tensors)          # CUDA tensors of the current device

Zero copy: the tensors' own device memory is bound (data_ptr) and the step is
enqueued on torch's current stream, so it orders with the caller's work as
any torch kernel would; outputs are allocated with torch.empty on that
device. Every argument is checked against the signature before anything
reaches the library (device, dtype, shape, contiguity) and a mismatch is a
TypeError/ValueError naming the argument; failures inside Fuse are FuseError
with the C API's message.

The executable is cached on disk (cache_dir, else $FUSE_CACHE_DIR, else
~/.cache/fuse, under executables/): the key is a SHA-256 of the graph text,
the pipeline, the entry, the target architecture, the C API version and the
library build (its size and modification time), so that a second run of a
script loads the executable instead of running the pipeline, and the
session's cubin cache skips NVRTC. Entries are written to a temporary file
and renamed, so an interrupted compile never leaves half an entry; an entry
that cannot be read is compiled again and replaced.
"""

import hashlib
import os
import pathlib
import sys
import tempfile
import time
import warnings

from .runtime import _capi, _phases
from .errors import FuseError

__all__ = ["compile", "CompiledGraph", "pipeline_string"]

# Fuse's dtype names -> torch dtype attribute names.
_TORCH_DTYPES = {"f32": "float32", "bf16": "bfloat16", "f16": "float16", "i64": "int64",
                 "i32": "int32", "i1": "bool"}
_FUSE_DTYPES = {v: k for k, v in _TORCH_DTYPES.items()}
_AMP = {"bf16": "bf16", "bfloat16": "bf16", "f16": "f16", "fp16": "f16", "float16": "f16",
        None: "none", "none": "none", "f32": "none", "fp32": "none", False: "none"}


def _torch():
    import torch
    return torch


def pipeline_string(amp="bf16", memory_budget=None, max_arena_bytes=None, amp_results=False, weight_copies=False):
    """The `fuse-pipeline{...}` text for these options. `memory_budget` is
    bytes (an int: remat-budget) or a fraction of the peak without
    rematerialization (a float in (0, 1]: remat-fraction); `amp_results`
    returns results computed in the amp type in that type (narrow-results);
    `weight_copies` keeps the amp-type copy of each weight a training step
    updates as state (arguments and results `amp_weight.<name>`, which the
    caller binds: compile_step does)."""
    key = amp.lower() if isinstance(amp, str) else amp
    if key not in _AMP:
        raise ValueError(f"amp must be 'bf16', 'f16' or None, not {amp!r}")
    options = [f"amp={_AMP[key]}"]
    if memory_budget is not None:
        if isinstance(memory_budget, bool) or not isinstance(memory_budget, (int, float)):
            raise TypeError(f"memory_budget must be bytes (int) or a fraction (float), not {memory_budget!r}")
        if isinstance(memory_budget, float):
            if not 0.0 < memory_budget <= 1.0:
                raise ValueError(f"a fractional memory_budget must be in (0, 1], not {memory_budget}")
            options.append(f"remat-fraction={memory_budget!r}")
        else:
            if memory_budget <= 0:
                raise ValueError(f"memory_budget must be positive, not {memory_budget}")
            options.append(f"remat-budget={int(memory_budget)}")
    if max_arena_bytes:
        options.append(f"max-arena-bytes={int(max_arena_bytes)}")
    if amp_results:
        if key is None:
            raise ValueError("amp_results=True returns results in the amp type: it needs amp='bf16' or 'f16'")
        options.append("narrow-results=true")
    if weight_copies and _AMP[key] != "none":
        options.append("weight-copies=true")
    return "fuse-pipeline{" + " ".join(options) + "}"


def default_cache_dir():
    """$FUSE_CACHE_DIR, else $XDG_CACHE_HOME/fuse, else ~/.cache/fuse (the
    runtime's cubin cache uses the same root)."""
    if os.environ.get("FUSE_CACHE_DIR"):
        return pathlib.Path(os.environ["FUSE_CACHE_DIR"])
    if os.environ.get("XDG_CACHE_HOME"):
        return pathlib.Path(os.environ["XDG_CACHE_HOME"]) / "fuse"
    return pathlib.Path.home() / ".cache" / "fuse"


def _library_identity():
    path = _capi.library_path()
    try:
        stat = os.stat(path)
        return f"{path}:{stat.st_size}:{stat.st_mtime_ns}"
    except OSError:
        return path


def _cache_key(text, pipeline, entry, arch):
    from . import __version__
    digest = hashlib.sha256()
    for part in (text, pipeline, entry or "", arch, _capi.API_VERSION, __version__, _library_identity()):
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def _resolve_arch(arch):
    if arch:
        return arch
    try:
        return _capi.device_info()["arch"]
    except FuseError as error:
        raise FuseError(f"{error} (name the target architecture, e.g. arch=\"sm_90a\", to compile "
                        "without a GPU)") from None


def _has_gpu():
    try:
        _capi.device_info()
        return True
    except FuseError:
        return False


def _private_directory(path):
    """Creates `path` and its missing parents owner-only (0700), as the
    runtime does for its cubin cache: what the cache holds is code this
    process will load and run."""
    missing = []
    path = pathlib.Path(path)
    while not path.exists():
        missing.append(path)
        path = path.parent
    for directory in reversed(missing):
        directory.mkdir(mode=0o700, exist_ok=True)


def _owned_by_us(directory):
    """Whether `directory` (if it exists) belongs to this user."""
    try:
        return directory.stat().st_uid == os.getuid()
    except FileNotFoundError:
        return True


def compile_executable(text, *, pipeline, entry=None, arch=None, source_name=None, cache_dir=None):
    """(Executable, seconds, cache_hit): `text` compiled, or loaded from the
    on-disk cache. cache_dir=False turns the cache off."""
    arch = _resolve_arch(arch)
    started = time.perf_counter()
    path = None
    if cache_dir is not False:
        root = pathlib.Path(cache_dir) if cache_dir else default_cache_dir()
        path = root / "executables" / (_cache_key(text, pipeline, entry, arch) + ".fuseexe")
        if not _owned_by_us(path.parent):
            warnings.warn(f"fuse: the executable cache {path.parent} belongs to another user; compiling "
                          "without it (what it holds would run as this process)", stacklevel=3)
            path = None
    if path is None:
        executable = _capi.Executable.compile(text, pipeline=pipeline, entry=entry, arch=arch,
                                              source_name=source_name)
        return executable, time.perf_counter() - started, False
    if path.exists():
        try:
            executable = _capi.Executable.load(path)
            return executable, time.perf_counter() - started, True
        except FuseError as error:
            warnings.warn(f"fuse: the cached executable {path} cannot be read ({error}); compiling again",
                          stacklevel=3)
    executable = _capi.Executable.compile(text, pipeline=pipeline, entry=entry, arch=arch,
                                          source_name=source_name)
    seconds = time.perf_counter() - started
    try:
        _private_directory(path.parent)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.stem, suffix=".tmp")
        os.close(handle)
        try:
            executable.save(temporary)
            os.replace(temporary, path)
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    except (OSError, FuseError) as error:
        warnings.warn(f"fuse: cannot write the compile cache entry {path}: {error}", stacklevel=3)
    return executable, seconds, False


class TensorSpec:
    """One argument or result of the signature."""
    __slots__ = ("index", "name", "dtype", "shape", "bytes", "side", "arena_offset")

    def __init__(self, index, entry, side):
        self.index, self.side = index, side
        self.name, self.dtype = entry["name"], entry["dtype"]
        self.shape, self.bytes = tuple(entry["shape"]), entry["bytes"]
        # Where a run finds (input) or leaves (output) it in its arena, or
        # None: in memory of its own (fuse.arena_offset).
        offset = entry.get("arena_offset", -1)
        self.arena_offset = offset if offset >= 0 else None

    def describe(self):
        return f"{self.dtype} {list(self.shape)}"

    def label(self):
        return f"{self.side} '{self.name}' (#{self.index})"

    def torch_dtype(self):
        return getattr(_torch(), _TORCH_DTYPES[self.dtype])

    def __repr__(self):
        return f"{self.name}: {self.describe()}"


def dtype_name(torch_dtype):
    """torch.bfloat16 -> 'bf16' (or the torch name for dtypes Fuse lacks)."""
    name = str(torch_dtype).replace("torch.", "")
    return _FUSE_DTYPES.get(name, name)


# Generated kernels load and store 16 bytes at a time (kernels/vector_io.cuh)
# wherever the innermost extent allows: every bound tensor must start on such
# a boundary. torch's allocator gives 512-byte aligned blocks; only views at
# an offset can miss it.
BIND_ALIGNMENT = 16

# Parameters remembered per input as checked: a layer graph's calls per
# step (one per layer), as many as the runtime keeps captured graphs.
CHECKED_PARAMETERS = 32


def check_tensor(spec, tensor, device, contiguous_copy=False):
    """`tensor` if it fits `spec` on `device`; else a TypeError/ValueError
    that names the argument. With contiguous_copy a non-contiguous tensor is
    copied instead of refused (the torch.compile backend, whose callers do
    not choose strides)."""
    torch = _torch()
    if not isinstance(tensor, torch.Tensor):
        raise TypeError(f"{spec.label()}: expected a torch.Tensor ({spec.describe()}), "
                        f"got {type(tensor).__name__}")
    # The message is built only on failure: the backend checks hundreds of
    # tensors a call.
    if tensor.dtype != spec.torch_dtype():
        raise TypeError(f"{spec.label()}: expected {spec.describe()}, "
                        f"got {dtype_name(tensor.dtype)} {list(tensor.shape)}")
    if tensor.shape != spec.shape:
        raise ValueError(f"{spec.label()}: expected {spec.describe()}, "
                         f"got {dtype_name(tensor.dtype)} {list(tensor.shape)}")
    if tensor.device != device:
        raise ValueError(f"{spec.label()}: is on {tensor.device}, but the compiled graph runs on {device} "
                         f"(move it with .to('{device}'))")
    if not tensor.is_contiguous():
        if contiguous_copy:
            return tensor.contiguous()
        raise ValueError(f"{spec.label()}: is not contiguous (strides {tuple(tensor.stride())} for shape "
                         f"{list(tensor.shape)}); Fuse binds dense row-major memory: pass .contiguous()")
    if tensor.data_ptr() % BIND_ALIGNMENT:
        if contiguous_copy:
            return tensor.clone()
        raise ValueError(f"{spec.label()}: starts at address {tensor.data_ptr():#x}, not a multiple of "
                         f"{BIND_ALIGNMENT} bytes (a view at an odd offset?); Fuse's kernels make "
                         f"{BIND_ALIGNMENT}-byte accesses: pass .clone()")
    return tensor


class CompiledGraph:
    """A compiled graph bound to the current GPU. Call it with torch tensors
    in the order of `signature["inputs"]`; it returns the outputs (a tuple,
    or the tensor itself when there is one).

    Attributes: `signature` (fuseDescribeExecutable's JSON as a dict),
    `inputs`/`outputs` (TensorSpec lists), `plan` (the launch plan text),
    `compile_seconds` (export + pipeline or cache load + NVRTC/cubin cache),
    `timings` (those parts), `cache_hit`, `pipeline`, `text` (the graph).

    An output the signature lists as donated from an input (an input
    returned as it is, or updated in place because the graph marks it
    `fuse.donated`) is written into that input's memory and returned as that
    very tensor (viewed to the output's shape): the runtime then skips the
    copy. CUDA graphs: the runtime captures the step once per set of
    pointers and replays it; new pointers (fresh outputs whose memory the
    caching allocator did not hand back) mean a new capture.
    """

    def __init__(self, executable, text, pipeline, *, cuda_graphs=True, cache_dir=None, profile=False,
                 compile_seconds=0.0, timings=None, cache_hit=False, name=None, progress=True,
                 contiguous_copy=False, scratch=None):
        self.executable = executable
        self._scratch_for = scratch
        self.text, self.pipeline, self.name = text, pipeline, name
        self.signature = executable.describe()
        self.plan = executable.plan_text()
        self.inputs = [TensorSpec(i, e, "input") for i, e in enumerate(self.signature["inputs"])]
        self.outputs = [TensorSpec(i, e, "output") for i, e in enumerate(self.signature["outputs"])]
        self.input_names = [s.name for s in self.inputs]
        self.output_names = [s.name for s in self.outputs]
        # A graph that finds inputs or leaves outputs in its arena runs in
        # an arena its caller gives each run (run(arena=...)).
        self.arena_per_run = any(s.arena_offset is not None for s in self.inputs + self.outputs)
        self.arena_bytes = int(self.signature.get("arena_bytes", 0))
        self._aliases = {}
        for out_index, in_index in self.signature.get("donated", []):
            out, inp = self.outputs[out_index], self.inputs[in_index]
            if out.dtype == inp.dtype and out.bytes == inp.bytes:
                self._aliases[out_index] = in_index
        self.cuda_graphs, self.cache_dir = cuda_graphs, cache_dir
        self.profile_first_call, self.last_profile = profile, None
        self.cache_hit, self.timings = cache_hit, dict(timings or {})
        self.compile_seconds = compile_seconds
        self.contiguous_copy = contiguous_copy
        # Parameters that passed check_inputs, by input index: {id: (tensor, address)}.
        self._checked_parameters = {}
        self._progress = progress
        self.session, self.device, self.session_report = None, None, None
        if _has_gpu():
            self._create_session()

    # -- the session ---------------------------------------------------------
    def _create_session(self):
        torch = _torch()
        if not torch.cuda.is_available():
            raise FuseError("no CUDA device: torch cannot use the GPU that Fuse sees "
                            f"(torch {torch.__version__}, CUDA {torch.version.cuda})")
        # torch creates the device's primary context, which the runtime shares.
        index = torch.cuda.current_device()
        started = time.perf_counter()
        cache = None if self.cache_dir is False else (str(self.cache_dir) if self.cache_dir else None)
        scratch = self._scratch_for(index) if self._scratch_for is not None else None
        self.session = _capi.Session.create(self.executable, cache_dir=cache, use_cache=self.cache_dir is not False,
                                            use_cuda_graph=self.cuda_graphs, progress=self._progress,
                                            scratch=scratch, arena_per_run=self.arena_per_run)
        seconds = time.perf_counter() - started
        self.device = torch.device("cuda", index)
        self.session_report = self.session.compile_report()
        self.timings["load"] = seconds
        self.compile_seconds += seconds

    @property
    def phases(self):
        """{phase: seconds} of this graph's compile, in the order they ran
        (fuse.runtime._phases says what each is)."""
        order = ("aotautograd", "retrace", "export", "compile", "load")
        known = {p: float(self.timings[p]) for p in order if self.timings.get(p)}
        known.update({p: float(s) for p, s in self.timings.items() if p not in order and s})
        return known

    def report_phases(self, what=None):
        """Prints the phase report if FUSE_LOG asks for `compile`."""
        notes = {"compile": "from the cache" if self.cache_hit else "compiled",
                 "load": _phases.describe_load(self.session_report)}
        _phases.report(what or f"@{self.signature['entry']}", self.phases, notes, self.compile_parts)

    @property
    def compile_parts(self):
        """[(part, seconds)] of libFuseC's compile: parse and verify, each
        pass of the pipeline, code generation (empty for an executable
        read from the cache)."""
        return self.executable.compile_phases()

    def _require_session(self):
        if self.session is None:
            if not _has_gpu():
                raise FuseError(f"no CUDA device: @{self.signature['entry']} was compiled for "
                                f"{self.signature['arch']} but cannot run here")
            self._create_session()
        return self.session

    @property
    def graph_captures(self):
        """CUDA graphs the session has captured so far (one per new set of
        pointers, recaptures included; 0 before the first run). A count
        that grows with the calls means pointers that never repeat: host
        time spent capturing instead of replaying."""
        if self.session is None:
            return 0
        return int(self.session.compile_report().get("graph_captures", 0))

    @property
    def device_bytes(self):
        """Device memory the session holds outside torch's allocator (arena,
        workspace, constants, cuBLASLt workspace)."""
        self._require_session()
        return int(self.session_report.get("device_bytes", 0))

    # -- calling -------------------------------------------------------------
    def check_inputs(self, inputs, skip=(), indices=None):
        """The input tensors, checked (and made contiguous where allowed);
        those at indices in `skip` (bound by the caller) as they are, and
        with `indices`, only those are checked (the others bound before)."""
        self._require_session()
        if len(inputs) != len(self.inputs):
            names = ", ".join(self.input_names[:8]) + (", ..." if len(self.inputs) > 8 else "")
            raise TypeError(f"the compiled graph @{self.signature['entry']} takes {len(self.inputs)} inputs "
                            f"({names}); {len(inputs)} were given")
        if indices is not None:  # the caller keeps what it bound (runtime/_bound_call.py)
            checked = list(inputs)
            for index in indices:
                if index not in skip:
                    checked[index] = check_tensor(self.inputs[index], inputs[index], self.device,
                                                  self.contiguous_copy)
            return checked
        # A parameter that passed at this index, the same object at the same
        # address, passes again without a check (a graph that is one layer
        # binds each layer's in turn); anything else is checked.
        known = self._checked_parameters
        parameter = _torch().nn.Parameter
        checked = []
        for spec, tensor in zip(self.inputs, inputs):
            index = spec.index
            if index in skip:
                checked.append(tensor)
                continue
            passed = known.get(index)
            entry = passed.get(id(tensor)) if passed is not None else None
            if entry is not None and entry[0] is tensor and entry[1] == tensor.data_ptr():
                checked.append(tensor)
                continue
            result = check_tensor(spec, tensor, self.device, self.contiguous_copy)
            if result is tensor and type(tensor) is parameter:
                passed = known.setdefault(index, {})
                if len(passed) >= CHECKED_PARAMETERS:
                    del passed[next(iter(passed))]
                passed[id(tensor)] = (tensor, tensor.data_ptr())
            checked.append(result)
        return checked

    def allocate_outputs(self, inputs):
        """Fresh outputs on the device, donated ones in their input's memory."""
        torch = _torch()
        outputs = []
        for spec in self.outputs:
            source = self._aliases.get(spec.index)
            if source is not None:
                outputs.append(inputs[source].view(spec.shape))
            else:
                outputs.append(torch.empty(spec.shape, dtype=spec.torch_dtype(), device=self.device))
        return outputs

    def stream(self):
        torch = _torch()
        # The raw handle without building a torch.cuda.Stream (what
        # Inductor's generated code calls): tens of microseconds a call less.
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None and self.device.index is not None:
            return raw(self.device.index)
        return torch.cuda.current_stream(self.device).cuda_stream

    def run(self, inputs, outputs, check=True, arena=None):
        """Enqueues one step on the current stream with these tensors
        (outputs written in place). `check=False` skips the checks, for
        callers that validated the same tensors already. `arena`: for a
        graph with arena_per_run, the device memory it runs in (a tensor of
        at least arena_bytes, or an (address, bytes) pair); inputs and
        outputs with an arena offset are found and left there, and their
        entries in `inputs` and `outputs` are not used."""
        session = self._require_session()
        self._set_arena(session, arena)
        if check:
            inputs = self.check_inputs(inputs)
            if len(outputs) != len(self.outputs):
                raise TypeError(f"the compiled graph has {len(self.outputs)} outputs; {len(outputs)} were given")
            outputs = [check_tensor(s, t, self.device) for s, t in zip(self.outputs, outputs)]
        # Device addresses; a caller binding memory of its own (a slab of
        # saved values) passes the address as an int.
        session.run([t if isinstance(t, int) else t.data_ptr() for t in inputs],
                    [t if isinstance(t, int) else t.data_ptr() for t in outputs], self.stream())
        return outputs

    def run_addresses(self, addresses, arena=None):
        """Enqueues one step on the current stream with device addresses
        (a fuse.runtime._capi.Addresses) that the caller has bound and checked, as
        fuse.compile_step does once for many calls; `arena` as for run()."""
        session = self._require_session()
        self._set_arena(session, arena)
        session.run_addresses(addresses, self.stream())

    def _set_arena(self, session, arena):
        if arena is not None:
            address, nbytes = ((arena.data_ptr(), arena.numel() * arena.element_size())
                               if hasattr(arena, "data_ptr") else arena)
            session.set_arena(address, nbytes)
        elif self.arena_per_run:
            raise FuseError(f"@{self.signature['entry']} runs in an arena its caller gives (inputs or outputs "
                            "with fuse.arena_offset): pass arena=")

    def __call__(self, *inputs):
        inputs = self.check_inputs(inputs)
        outputs = self.allocate_outputs(inputs)
        self.run(inputs, outputs, check=False)
        if self.profile_first_call and self.last_profile is None:
            self.last_profile = self.profile(*inputs)
            print(str(self.last_profile), file=sys.stderr)
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def synchronize(self):
        """Waits for the step on the current stream; raises the asynchronous
        error of a failed launch, if any."""
        self._require_session().synchronize(self.stream())

    def profile(self, *inputs, warmup=3, iterations=20, counters=True, peak_tflops=None):
        """Profiles the step on these inputs (Fuse's profiler: per kernel
        time, SM efficiency, occupancy, DRAM bytes, MFU) and returns a
        `fuse.profile.Profile`. The runs use copies of the inputs and fresh
        outputs, so a step that updates its inputs in place leaves the
        caller's tensors untouched."""
        from .profile import Profile
        inputs = [t.clone() for t in self.check_inputs(inputs)]
        outputs = self.allocate_outputs(inputs)
        return Profile(*self._require_session().profile(
            [t.data_ptr() for t in inputs], [t.data_ptr() for t in outputs], self.stream(),
            warmup=warmup, iterations=iterations, counters=counters, peak_tflops=peak_tflops))

    def close(self):
        """Frees the session (device memory) and the executable."""
        for handle in (self.session, self.executable):
            if handle is not None:
                handle.close()
        self.session = None

    def __repr__(self):
        sig = self.signature
        return (f"<fuse.CompiledGraph @{sig['entry']} {sig['arch']}: {len(self.inputs)} inputs, "
                f"{len(self.outputs)} outputs, {sig['kernels']} kernels, {sig['launches']} launches, "
                f"{sig['gemms']} GEMMs, arena {sig['arena_bytes'] / 2**20:.1f} MiB>")


def _graph_text(graph, example_inputs, name):
    """(text, source name, export seconds) for what fuse.compile accepts."""
    if isinstance(graph, bytes):
        return graph.decode("utf-8"), name or "<graph>", 0.0
    if isinstance(graph, str):
        return graph, name or "<graph>", 0.0
    if isinstance(graph, os.PathLike):
        return pathlib.Path(graph).read_text(), str(graph), 0.0
    torch = _torch()
    if isinstance(graph, torch.fx.GraphModule) or hasattr(graph, "graph_signature"):
        from .export import export_graph
        started = time.perf_counter()
        text = export_graph(graph, example_inputs, name=name or "forward")
        return text, name or "<fx graph>", time.perf_counter() - started
    raise TypeError(f"fuse.compile takes fuse dialect text, a path to it, a torch.fx.GraphModule or an "
                    f"ExportedProgram, not {type(graph).__name__}")


def _dump(text, name, pipeline):
    """$FUSE_DUMP_DIR set: every graph compiled is written there first (the
    torch.compile backend's exported graphs included), for fuse-opt and
    fuse-translate to look at."""
    directory = os.environ.get("FUSE_DUMP_DIR")
    if not directory:
        return
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in (name or "graph"))
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
    path = pathlib.Path(directory) / f"{safe}-{digest}.mlir"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"// pipeline: {pipeline}\n" + text)


def compile(graph, example_inputs=None, *, amp="bf16", memory_budget=None, cuda_graphs=True, profile=False,
            cache_dir=None, arch=None, pipeline=None, entry=None, name=None, max_arena_bytes=None,
            progress=True, amp_results=False, report_phases=True, scratch=None):
    """Compiles `graph` with Fuse and returns a CompiledGraph.

    graph          fuse dialect text (str), a path to a .mlir file, a
                   torch.fx.GraphModule of ATen ops (make_fx, AOTAutograd) or
                   a torch.export ExportedProgram (both exported with
                   fuse.export.export_graph, on `example_inputs` if given)
    amp            "bf16" (default), "f16" or None: precision of matmuls and
                   attention (fuse-auto-mixed-precision); None keeps f32
    amp_results    return a result computed in the amp type (a language
                   model's logits) in that type, as torch.autocast does,
                   not cast back to f32: half its memory (for inference;
                   the signature's dtypes say what comes back)
    memory_budget  int: peak bytes of a training step not to exceed
                   (remat-budget); float in (0, 1]: fraction of the peak
                   without rematerialization (remat-fraction)
    cuda_graphs    replay the step as one captured CUDA graph (default)
    profile        profile the first call and print the table to stderr
                   (the report stays in `.last_profile`)
    cache_dir      root of the executable and cubin caches (default
                   $FUSE_CACHE_DIR or ~/.cache/fuse); False: no cache
    arch           target, e.g. "sm_90a" (default: the current GPU's); with
                   no GPU the graph still compiles, and calling it says so
    pipeline       a pass pipeline replacing the one amp/memory_budget make
    entry          the function to compile when the module has several
    report_phases  with FUSE_LOG=compile, print where the compile time went
                   (`.phases` has it as data either way; compile_step and
                   the backend print it themselves, with their own phases)
    scratch        a callable that returns the shared scratch memory (a
                   runtime Scratch) for a torch device index, for graphs
                   whose calls never overlap (the torch.compile backend
                   gives all of a model's graphs one per device); None: an
                   arena and workspaces of the graph's own

    $FUSE_DUMP_DIR, if set, receives every graph text before it compiles.
    """
    text, source_name, export_seconds = _graph_text(graph, example_inputs, name)
    pipeline = pipeline or pipeline_string(amp, memory_budget, max_arena_bytes, amp_results)
    _dump(text, name, pipeline)
    executable, seconds, hit = compile_executable(text, pipeline=pipeline, entry=entry, arch=arch,
                                                  source_name=source_name, cache_dir=cache_dir)
    timings = {"export": export_seconds, "compile": seconds}
    compiled = CompiledGraph(executable, text, pipeline, cuda_graphs=cuda_graphs, cache_dir=cache_dir,
                             profile=profile, compile_seconds=export_seconds + seconds, timings=timings,
                             cache_hit=hit, name=name, progress=progress, scratch=scratch)
    if report_phases:
        compiled.report_phases(name)
    return compiled
