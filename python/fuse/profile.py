"""The profiler's report as a Python object.

Fuse's profiler (include/fuse/Runtime/Profiler.h) times every kernel and GEMM
of a compiled step, reads CUPTI counters (SM efficiency, occupancy, DRAM
bytes) or says they are estimates, and computes the step's MFU. The C API
returns the report as JSON (schema "fuse-profile/1"), the terminal table and
a Chrome trace; `Profile` holds all three:

    report = fuse.profile(compiled, *inputs)      # or compiled.profile(...)
    print(report)                                  # the table
    report.step_ms, report.mfu, report.steps[0].verdict
    report.to_json(); report.save_trace("step.json")   # chrome://tracing, Perfetto

Figures the profiler could not know are None (JSON null).
"""

import json
import sys
import types

__all__ = ["Profile", "ProfileStep", "profile"]

SCHEMA = "fuse-profile/1"


class ProfileStep:
    """One step of the plan (a kernel, a GEMM, a fill or a copy): its
    fields are the JSON's ("name", "kind", "time_ms", "achieved_tflops",
    "sm_efficiency", "verdict", ...) as attributes."""

    def __init__(self, data):
        self._data = dict(data)

    def __getattr__(self, name):
        try:
            return self.__dict__["_data"][name]
        except KeyError:
            raise AttributeError(f"a profile step has no field {name!r} (it has: "
                                 f"{', '.join(self._data)})") from None

    def __getitem__(self, key):
        return self._data[key]

    def to_dict(self):
        return dict(self._data)

    def __repr__(self):
        time_ms = self._data.get("time_ms")
        shown = f"{time_ms:.4f} ms" if isinstance(time_ms, (int, float)) else "?"
        return f"<ProfileStep #{self._data.get('index')} {self._data.get('name')} ({self._data.get('kind')}): {shown}>"


class Profile:
    """A profile report: `data` (the parsed JSON), `table` (str(profile)),
    `trace` (Chrome trace JSON text), and shortcuts for the totals."""

    def __init__(self, json_text, table="", trace=""):
        self.json_text = json_text
        self.data = json.loads(json_text)
        if self.data.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} report (schema {self.data.get('schema')!r})")
        self.table, self.trace = table, trace
        self.totals = dict(self.data.get("totals", {}))
        self.steps = [ProfileStep(s) for s in self.data.get("steps", [])]

    # -- the totals most readers want ------------------------------------------
    @property
    def step_ms(self):
        """Whole-step wall time: median CUDA-graph replay, in ms."""
        return self.totals.get("step_ms")

    @property
    def mfu(self):
        """Model FLOPs utilisation against the datasheet's dense bf16 peak
        (0..1), or None where the device is unknown (pass peak_tflops)."""
        return self.totals.get("mfu_datasheet")

    @property
    def mfu_calibrated(self):
        """MFU against the GEMM peak `fuse-run --calibrate` measured, if any."""
        return self.totals.get("mfu_calibrated")

    @property
    def model_flops(self):
        return self.totals.get("model_flops")

    @property
    def tflops(self):
        """Model FLOPs per second of the whole step, in TFLOP/s."""
        if not self.model_flops or not self.step_ms:
            return None
        return self.model_flops / (self.step_ms * 1e-3) / 1e12

    @property
    def kernels(self):
        return self.totals.get("kernels")

    @property
    def gemms(self):
        return self.totals.get("gemms")

    @property
    def peak_bytes(self):
        """Device bytes live during the step (executor's allocations plus the
        bound inputs and outputs); None where not measured."""
        value = self.totals.get("peak_bytes")
        return None if value is None or value < 0 else value

    @property
    def counters(self):
        """"measured" (CUPTI), "estimated" (see counters_warning) or "none"."""
        return self.data.get("counters")

    @property
    def counters_warning(self):
        return self.data.get("counters_warning") or ""

    @property
    def device(self):
        return self.data.get("device")

    def top(self, n=10):
        """The `n` slowest steps."""
        timed = [s for s in self.steps if isinstance(s._data.get("time_ms"), (int, float))]
        return sorted(timed, key=lambda s: s.time_ms, reverse=True)[:n]

    def time_by_kind(self):
        """{kind: total ms} over the steps, largest first."""
        kinds = {}
        for s in self.steps:
            if isinstance(s._data.get("time_ms"), (int, float)):
                kinds[s.kind] = kinds.get(s.kind, 0.0) + s.time_ms
        return dict(sorted(kinds.items(), key=lambda kv: -kv[1]))

    # -- output ------------------------------------------------------------------
    def to_json(self, indent=None):
        """The report as JSON text (the C API's document, re-indented if
        asked)."""
        return self.json_text if indent is None else json.dumps(self.data, indent=indent)

    def to_dict(self):
        return json.loads(self.json_text)

    def save_json(self, path, indent=2):
        with open(path, "w") as f:
            f.write(self.to_json(indent=indent))

    def save_trace(self, path):
        """Writes the Chrome trace (one event per step, in launch order)."""
        if not self.trace:
            raise ValueError("this profile carries no trace")
        with open(path, "w") as f:
            f.write(self.trace)

    def __str__(self):
        return self.table or self.summary()

    def summary(self):
        mfu = f"{self.mfu * 100:.1f}%" if isinstance(self.mfu, (int, float)) else "unknown"
        step = f"{self.step_ms:.3f} ms" if isinstance(self.step_ms, (int, float)) else "?"
        return (f"@{self.data.get('entry')} on {self.device}: step {step}, MFU {mfu}, "
                f"{self.kernels} kernels, {self.gemms} GEMMs, counters {self.counters}")

    def __repr__(self):
        return f"<fuse.Profile {self.summary()}>"


def profile(compiled, *inputs, iterations=20, warmup=3, counters=True, peak_tflops=None):
    """Profiles `compiled` (a fuse.compile result, or a fuse.compile_step
    step given its batch) on `inputs`; returns a Profile."""
    if not hasattr(compiled, "profile"):
        raise TypeError(f"fuse.profile takes what fuse.compile or fuse.compile_step returned, not "
                        f"{type(compiled).__name__}")
    return compiled.profile(*inputs, iterations=iterations, warmup=warmup, counters=counters,
                            peak_tflops=peak_tflops)


class _CallableModule(types.ModuleType):
    """`fuse.profile` is both this module and the function above: importing
    the submodule binds the name `profile` on the package to the module, so
    the module itself is made callable, and `fuse.profile(compiled, ...)`
    works whichever of the two the name holds."""

    def __call__(self, compiled, *inputs, **options):
        return profile(compiled, *inputs, **options)


sys.modules[__name__].__class__ = _CallableModule
