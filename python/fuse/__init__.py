"""Fuse from Python.

    import fuse
    compiled = fuse.compile(graph_text_or_fx_graph, example_inputs, amp="bf16")
    outputs = compiled(*cuda_tensors)                  # zero copy, torch's current stream
    step = fuse.compile_step(model, loss_fn, (inputs, targets), optimizer=adamw)
    loss = step((inputs, targets))                     # grads in param.grad, or params updated
    print(fuse.profile(compiled, *cuda_tensors))       # per-kernel table, MFU; .to_json()
    torch.compile(model, backend="fuse")               # registered by `import fuse` (torch >= 2)

Modules: `fuse.compiler` (fuse.compile, the on-disk compile cache),
`fuse.step` (whole training steps), `fuse.optim` (Lion, which compile_step
runs in the graph beside torch's AdamW, Adam, SGD and Adafactor), `fuse.backend` (the torch.compile
backend, through AOTAutograd), `fuse.profile` (the profiler's report),
`fuse.runtime._capi` (ctypes bindings over libFuseC.so, include/fuse-c/Fuse.h),
`fuse.export` (PyTorch -> fuse dialect text; `python -m fuse.export`),
`fuse.models` (built-in HuggingFace models), `fuse.reference`, and
`python -m fuse.compare MODEL` (eager vs torch.compile vs Fuse).

Nothing is imported eagerly: `import fuse` needs neither torch nor the
shared library, and the names above load their modules on first use. The
torch.compile backend is registered when torch._dynamo has loaded (at once
if it already is, else by a small import hook that waits for it), so the
order of `import torch` and `import fuse` does not matter and a script that
never compiles pays nothing.
"""

import importlib
import importlib.abc
import importlib.util
import sys

__version__ = "0.1.0"

_LAZY = {
    "compile": ("compiler", "compile"),
    "CompiledGraph": ("compiler", "CompiledGraph"),
    "compile_step": ("step", "compile_step"),
    "TrainStep": ("step", "TrainStep"),
    "profile": ("profile", "profile"),
    "Profile": ("profile", "Profile"),
    "FuseError": ("errors", "FuseError"),
    "optim": ("optim", None),  # a module: fuse.optim.Lion
}

__all__ = sorted(_LAZY) + ["__version__"]


def __getattr__(name):
    if name in _LAZY:
        module, attribute = _LAZY[name]
        value = importlib.import_module(f".{module}", __name__)
        value = value if attribute is None else getattr(value, attribute)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fuse' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


# -- the torch.compile backend --------------------------------------------------

_DYNAMO = "torch._dynamo"
_REGISTRY = "torch._dynamo.backends.registry"


def _fuse_backend(graph_module, example_inputs, **kwargs):
    """torch.compile(backend="fuse") lands here; the real work is in
    fuse.backend, imported on first use."""
    from .backend import fuse_backend
    return fuse_backend(graph_module, example_inputs, **kwargs)


def _register(registry):
    # Looks in the registry's own table rather than calling list_backends():
    # that imports every built-in backend, Inductor's among them, and when
    # torch._dynamo was itself imported from inside Inductor (its
    # standalone_compile module, say) that import finds Inductor half
    # initialized and fails.
    try:
        known = getattr(registry, "_COMPILER_FNS", None)
        if known is None:
            known = registry.list_backends()
        if "fuse" not in known:
            registry.register_backend(compiler_fn=_fuse_backend, name="fuse")
    except Exception as error:  # never break `import torch._dynamo`
        import warnings
        warnings.warn(f"fuse: cannot register the torch.compile backend: {error}")


class _RegisterWhenDynamoLoads(importlib.abc.MetaPathFinder):
    """Registers the backend right after the torch._dynamo package has
    finished importing (its registry cannot register anything while the
    package is half initialized), and then removes itself."""

    def find_spec(self, fullname, path, target=None):
        if fullname != _DYNAMO:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        loader = spec.loader
        original = loader.exec_module

        def exec_module(module):
            original(module)
            _register(importlib.import_module(_REGISTRY))

        loader.exec_module = exec_module
        return spec


def _install_backend_hook():
    if _DYNAMO in sys.modules and _REGISTRY in sys.modules:
        _register(sys.modules[_REGISTRY])
    elif not any(isinstance(f, _RegisterWhenDynamoLoads) for f in sys.meta_path):
        sys.meta_path.insert(0, _RegisterWhenDynamoLoads())


_install_backend_hook()
