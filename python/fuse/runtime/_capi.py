"""ctypes bindings over Fuse's C API (include/fuse-c/Fuse.h, libFuseC.so).

Why ctypes: libFuseC.so has MLIR linked in statically and no Python in it,
so one build serves every Python version (3.11 here, 3.12 on the GPU
machine); an extension module would have to be built per interpreter.

This module is the only place that knows the C signatures. It
  - finds the library ($FUSE_LIBRARY; the repository's build/lib; an
    installed tree's lib/ beside python/; then the loader's own search) and
    loads it on first use, so that `import fuse` costs nothing;
  - declares argtypes/restype for every function of Fuse.h;
  - turns every failure into `FuseError(fuseLastError())`;
  - copies every `char *` the library returns and frees it with
    fuseFreeString;
  - wraps the two handles in `Executable` and `Session`, which free them in
    close() (or when garbage collected).
Nothing here imports torch: pointers and streams are plain integers.
"""

import ctypes
import ctypes.util
import json
import os
import pathlib
import threading

from ..errors import FuseError

#: The interface version these bindings were written against.
API_VERSION = "fuse-c/3"
LIBRARY_NAME = "libFuseC.so"

# python/fuse (this file is in its runtime/ subpackage).
_PACKAGE = pathlib.Path(__file__).resolve().parents[1]


class CompileOptions(ctypes.Structure):
    _fields_ = [("pipeline", ctypes.c_char_p), ("entry", ctypes.c_char_p),
                ("arch", ctypes.c_char_p), ("source_name", ctypes.c_char_p)]


class SessionOptions(ctypes.Structure):
    _fields_ = [("cache_dir", ctypes.c_char_p), ("use_cache", ctypes.c_int),
                ("use_cuda_graph", ctypes.c_int), ("progress", ctypes.c_int),
                ("scratch", ctypes.c_void_p), ("arena_per_run", ctypes.c_int)]


class ProfileOptions(ctypes.Structure):
    _fields_ = [("warmup", ctypes.c_int), ("iterations", ctypes.c_int),
                ("counters", ctypes.c_int), ("peak_tflops", ctypes.c_double)]


_c_void_pp = ctypes.POINTER(ctypes.c_void_p)
_c_char_pp = ctypes.POINTER(ctypes.c_void_p)  # char ** out-parameters, read as addresses

# name: (restype, argtypes). `char *` results are c_void_p so that the
# address survives for fuseFreeString (c_char_p would copy and lose it).
_PROTOTYPES = {
    "fuseApiVersion": (ctypes.c_char_p, []),
    "fuseLastError": (ctypes.c_char_p, []),
    "fuseFreeString": (None, [ctypes.c_void_p]),
    "fuseDeviceInfo": (ctypes.c_void_p, []),
    "fuseCompile": (ctypes.c_void_p, [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(CompileOptions)]),
    "fuseLoadExecutable": (ctypes.c_void_p, [ctypes.c_char_p]),
    "fuseSaveExecutable": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p]),
    "fuseFreeExecutable": (None, [ctypes.c_void_p]),
    "fuseDescribeExecutable": (ctypes.c_void_p, [ctypes.c_void_p]),
    "fusePlanText": (ctypes.c_void_p, [ctypes.c_void_p]),
    "fuseExecutableCompilePhases": (ctypes.c_void_p, [ctypes.c_void_p]),
    "fuseDefaultSessionOptions": (None, [ctypes.POINTER(SessionOptions)]),
    "fuseCreateSession": (ctypes.c_void_p, [ctypes.c_void_p, ctypes.POINTER(SessionOptions)]),
    "fuseFreeSession": (None, [ctypes.c_void_p]),
    "fuseCreateScratch": (ctypes.c_void_p, []),
    "fuseFreeScratch": (None, [ctypes.c_void_p]),
    "fuseScratchBytes": (ctypes.c_int64, [ctypes.c_void_p]),
    "fuseSessionCompileReport": (ctypes.c_void_p, [ctypes.c_void_p]),
    "fuseRun": (ctypes.c_int, [ctypes.c_void_p, _c_void_pp, ctypes.c_size_t, _c_void_pp,
                               ctypes.c_size_t, ctypes.c_void_p]),
    "fuseSynchronize": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p]),
    "fuseSessionSetArena": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]),
    "fuseSessionSetSignals": (ctypes.c_int, [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int64), ctypes.c_size_t]),
    "fuseSessionWaitSignal": (ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]),
    "fuseDefaultProfileOptions": (None, [ctypes.POINTER(ProfileOptions)]),
    "fuseProfile": (ctypes.c_void_p, [ctypes.c_void_p, _c_void_pp, ctypes.c_size_t, _c_void_pp,
                                      ctypes.c_size_t, ctypes.c_void_p, ctypes.POINTER(ProfileOptions),
                                      _c_char_pp, _c_char_pp]),
}

_lock = threading.Lock()
_library = None
_library_path = None


def library_candidates():
    """Where the library is looked for, in order (paths that may not exist;
    a bare name last, for the dynamic loader's own search)."""
    candidates = []
    explicit = os.environ.get("FUSE_LIBRARY")
    if explicit:
        candidates.append(explicit)
    # A source checkout: <repo>/python/fuse -> <repo>/build/lib.
    candidates.append(str(_PACKAGE.parents[1] / "build" / "lib" / LIBRARY_NAME))
    # An installed tree (cmake --install): <prefix>/python/fuse -> <prefix>/lib.
    candidates.append(str(_PACKAGE.parents[1] / "lib" / LIBRARY_NAME))
    candidates.append(ctypes.util.find_library("FuseC") or LIBRARY_NAME)
    return candidates


def _open():
    explicit = os.environ.get("FUSE_LIBRARY")
    if explicit and not os.path.exists(explicit):
        raise FuseError(f"FUSE_LIBRARY={explicit} does not exist")
    tried = []
    for candidate in library_candidates():
        if os.sep in candidate and not os.path.exists(candidate):
            tried.append(f"{candidate} (missing)")
            continue
        try:
            return ctypes.CDLL(candidate), candidate
        except OSError as error:
            if explicit and candidate == explicit:
                raise FuseError(f"cannot load FUSE_LIBRARY={explicit}: {error}") from None
            tried.append(f"{candidate} ({error})")
    raise FuseError("cannot find Fuse's C API library " + LIBRARY_NAME + "; tried:\n  "
                    + "\n  ".join(tried)
                    + "\nbuild it (cmake --build build) or set FUSE_LIBRARY to its path")


def library():
    """The loaded library with every prototype declared (loaded once)."""
    global _library, _library_path
    if _library is not None:
        return _library
    with _lock:
        if _library is None:
            lib, path = _open()
            missing = [name for name in _PROTOTYPES if not hasattr(lib, name)]
            if missing:
                raise FuseError(f"{path} lacks {', '.join(missing)}: it is not Fuse's C API "
                                f"library, or an older build of it")
            for name, (restype, argtypes) in _PROTOTYPES.items():
                function = getattr(lib, name)
                function.restype = restype
                function.argtypes = argtypes
            version = lib.fuseApiVersion().decode()
            if version != API_VERSION:
                raise FuseError(f"{path} implements {version}; these bindings need {API_VERSION}")
            _library_path = os.path.abspath(path) if os.sep in path else path
            _library = lib
    return _library


def library_path():
    """The path the library was loaded from (loading it if needed)."""
    library()
    return _library_path


def api_version():
    return library().fuseApiVersion().decode()


def last_error():
    """This thread's last failure message ("" if none)."""
    return library().fuseLastError().decode("utf-8", "replace")


def _failure(what):
    message = last_error()
    return FuseError(message or f"{what} failed (the library gave no message)")


def _take_string(address, what):
    """Copies a `char *` the library returned and frees it; a NULL is the
    failure it reports."""
    if not address:
        raise _failure(what)
    try:
        return ctypes.string_at(address).decode("utf-8", "replace")
    finally:
        library().fuseFreeString(address)


def _encode(value):
    if value is None:
        return None
    return os.fsencode(value) if isinstance(value, os.PathLike) else str(value).encode("utf-8")


def device_info():
    """The GPU this process would run on, as a dict (name, arch,
    compute_capability, multiprocessors, free_bytes, total_bytes); FuseError
    ("no CUDA device: ...") where there is none."""
    return json.loads(_take_string(library().fuseDeviceInfo(), "fuseDeviceInfo"))


def _pointer_array(pointers):
    pointers = [int(p) if p else None for p in pointers]
    return (ctypes.c_void_p * max(len(pointers), 1))(*pointers), len(pointers)


class Addresses:
    """A step's input and output device addresses as the C arrays fuseRun
    takes, built once for the calls that bind the same memory."""

    def __init__(self, inputs, outputs):
        self.inputs, self.n_inputs = _pointer_array(inputs)
        self.outputs, self.n_outputs = _pointer_array(outputs)


class _Handle:
    """An owned C handle, freed once by close() or at garbage collection."""
    _free_name = None

    def __init__(self, handle):
        self._handle = handle
        # Kept so that __del__ at interpreter shutdown still finds it.
        self._lib = library()

    @property
    def handle(self):
        if not self._handle:
            raise FuseError(f"this {type(self).__name__} was closed")
        return self._handle

    def close(self):
        handle, self._handle = self._handle, None
        if handle:
            getattr(self._lib, self._free_name)(handle)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Executable(_Handle):
    """A compiled step (plain data: kernels' source, launches, GEMMs, arena
    layout), not yet bound to a GPU."""
    _free_name = "fuseFreeExecutable"

    @classmethod
    def compile(cls, text, *, pipeline=None, entry=None, arch=None, source_name=None):
        """Parses, verifies and compiles `text` (fuse dialect). `pipeline`
        None means fuse-pipeline with its defaults; `arch` None means the
        current GPU's."""
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        options = CompileOptions(_encode(pipeline), _encode(entry), _encode(arch), _encode(source_name))
        handle = library().fuseCompile(data, len(data), ctypes.byref(options))
        if not handle:
            raise _failure("fuseCompile")
        return cls(handle)

    @classmethod
    def load(cls, path):
        """Reads an executable file (fuseSaveExecutable, fuse-run
        --save-executable)."""
        handle = library().fuseLoadExecutable(_encode(os.fspath(path)))
        if not handle:
            raise _failure("fuseLoadExecutable")
        return cls(handle)

    def save(self, path):
        if self._lib.fuseSaveExecutable(self.handle, _encode(os.fspath(path))) != 0:
            raise _failure("fuseSaveExecutable")

    def describe(self):
        """The signature and plan summary (Fuse.h's fuseDescribeExecutable)
        as a dict."""
        return json.loads(_take_string(self._lib.fuseDescribeExecutable(self.handle),
                                       "fuseDescribeExecutable"))

    def plan_text(self):
        return _take_string(self._lib.fusePlanText(self.handle), "fusePlanText")

    def compile_phases(self):
        """[(phase, seconds)] of the compile that made this handle (Fuse.h's
        fuseExecutableCompilePhases); [] for one read from a file."""
        text = _take_string(self._lib.fuseExecutableCompilePhases(self.handle), "fuseExecutableCompilePhases")
        return [(str(name), float(seconds)) for name, seconds in json.loads(text)]


class Scratch(_Handle):
    """Device memory that sessions share for their arena and workspaces
    (fuseCreateScratch): for sessions whose runs never overlap, such as the
    graphs of one model. Made on the current GPU."""
    _free_name = "fuseFreeScratch"

    @classmethod
    def create(cls):
        handle = library().fuseCreateScratch()
        if not handle:
            raise _failure("fuseCreateScratch")
        return cls(handle)

    @property
    def device_bytes(self):
        """Device memory it holds now (it grows with its sessions)."""
        return int(self._lib.fuseScratchBytes(self.handle))


class Session(_Handle):
    """An executable loaded on the current GPU: kernels compiled by NVRTC
    (through the on-disk cubin cache), one arena and one workspace (or the
    shared ones of a Scratch)."""
    _free_name = "fuseFreeSession"

    @classmethod
    def create(cls, executable, *, cache_dir=None, use_cache=True, use_cuda_graph=True, progress=True,
               scratch=None, arena_per_run=False):
        lib = library()
        options = SessionOptions()
        lib.fuseDefaultSessionOptions(ctypes.byref(options))
        options.cache_dir = _encode(cache_dir)
        options.use_cache = int(bool(use_cache))
        options.use_cuda_graph = int(bool(use_cuda_graph))
        options.progress = int(bool(progress))
        options.scratch = scratch.handle if scratch is not None else None
        options.arena_per_run = int(bool(arena_per_run))
        handle = lib.fuseCreateSession(executable.handle, ctypes.byref(options))
        if not handle:
            raise _failure("fuseCreateSession")
        session = cls(handle)
        # The options' strings must outlive the call only; nothing to keep.
        return session

    def compile_report(self):
        """{"seconds", "modules", "cache_hits", "compiled", "device_bytes",
        "graph_captures", "cached_graphs", "conditional_runs"} (graph
        captures and cached graphs as of now; conditional runs: the runs of
        guarded launches each captured graph holds as a conditional node)."""
        return json.loads(_take_string(self._lib.fuseSessionCompileReport(self.handle),
                                       "fuseSessionCompileReport"))

    def run(self, inputs, outputs, stream=None):
        """Enqueues one step: `inputs` and `outputs` are device addresses
        (ints) in the signature's order; `stream` a cudaStream_t as an int
        (None: the legacy default stream)."""
        self.run_addresses(Addresses(inputs, outputs), stream)

    def run_addresses(self, addresses, stream=None):
        """run() with the addresses already as C arrays (an Addresses)."""
        if self._lib.fuseRun(self.handle, addresses.inputs, addresses.n_inputs, addresses.outputs,
                             addresses.n_outputs, stream or None) != 0:
            raise _failure("fuseRun")

    def set_arena(self, address, nbytes):
        """With arena_per_run: the device memory (an address, `nbytes`)
        that the next runs use as their arena."""
        if self._lib.fuseSessionSetArena(self.handle, address or None, int(nbytes)) != 0:
            raise _failure("fuseSessionSetArena")

    def set_signals(self, after_steps):
        """From the next run on, signal i is recorded after step
        after_steps[i] (-1: before the first) of every run."""
        steps = (ctypes.c_int64 * max(len(after_steps), 1))(*after_steps)
        if self._lib.fuseSessionSetSignals(self.handle, steps, len(after_steps)) != 0:
            raise _failure("fuseSessionSetSignals")

    def wait_signal(self, signal, stream):
        """Makes `stream` (a cudaStream_t as an int) wait for signal
        `signal` of the run queued last."""
        if self._lib.fuseSessionWaitSignal(self.handle, int(signal), stream or None) != 0:
            raise _failure("fuseSessionWaitSignal")

    def synchronize(self, stream=None):
        if self._lib.fuseSynchronize(self.handle, stream or None) != 0:
            raise _failure("fuseSynchronize")

    def profile(self, inputs, outputs, stream=None, *, warmup=None, iterations=None, counters=None,
                peak_tflops=None):
        """Profiles the step on these pointers; returns (json text, table,
        Chrome trace)."""
        options = ProfileOptions()
        self._lib.fuseDefaultProfileOptions(ctypes.byref(options))
        if warmup is not None:
            options.warmup = int(warmup)
        if iterations is not None:
            options.iterations = int(iterations)
        if counters is not None:
            options.counters = int(bool(counters))
        if peak_tflops:
            options.peak_tflops = float(peak_tflops)
        in_array, n_in = _pointer_array(inputs)
        out_array, n_out = _pointer_array(outputs)
        table, trace = ctypes.c_void_p(), ctypes.c_void_p()
        address = self._lib.fuseProfile(self.handle, in_array, n_in, out_array, n_out, stream or None,
                                        ctypes.byref(options), ctypes.byref(table), ctypes.byref(trace))
        # The out-parameters are set only on success; free what was set
        # even if reading the JSON fails.
        try:
            report = _take_string(address, "fuseProfile")
        finally:
            table_text = _take_string(table.value, "fuseProfile table") if table.value else ""
            trace_text = _take_string(trace.value, "fuseProfile trace") if trace.value else ""
        return report, table_text, trace_text
