#!/usr/bin/env python3
"""Cross-checks fuse-run --device=cpu against NumPy, op by op.

usage: numpy_reference.py FUSE_RUN SCRATCH_DIR

For every op of the fuse dialect, in f32 and bf16 (f16 for a few elementwise
ops, i64/i32/i1 where the op takes them), this writes a tiny graph to
SCRATCH_DIR, draws fresh random inputs with NumPy, saves them with np.savez,
runs `FUSE_RUN GRAPH --device=cpu --inputs IN.npz --dump-outputs OUT.npz`, and
compares every output with a NumPy reference.

References are computed in float64 from the inputs (which already hold values
of their dtype) and rounded once to the output's dtype, the interpreter's
numerics contract (include/fuse/Interpreter/Interpreter.h): f16 and bf16
values are rounded to nearest even whenever stored, math runs in f32. Inside
a fuse.fusion body every intermediate value is stored, so the reference
rounds there too. Tolerances on ||got - want|| / ||want||:

    f32   1e-5 elementwise, 1e-4 reductions, matmul and composites
    bf16  1e-2 (one rounding of the output), 2e-2 for composites
    f16   2e-3
    i64, i32, i1: exact

NaN never passes. fuse.random is checked through statistics and the
documented counter layout only (NumPy cannot reproduce Philox bits).

The seed comes from FUSE_TEST_SEED, else a fresh one is drawn and printed:
rerun with FUSE_TEST_SEED=<seed> to reproduce a failure. Every case leaves
its graph and inputs in SCRATCH_DIR; a FAIL line names the command to rerun.

Output: one line per checked result, `PASS op dtype rel_err=...` or
`FAIL op dtype ...`, then exactly one final line `N passed, M failed`. The
exit status is 1 if anything failed.
"""

import math
import os
import re
import subprocess
import sys
import time
from collections import OrderedDict

import numpy as np

np.seterr(all="ignore")

FLOAT_TYPES = ("f32", "f16", "bf16")
INT_TYPES = ("i64", "i32", "i1")

# rel_err bounds by kind of op and output dtype.
TOLERANCES = {
    # One op per element, computed in f32 and rounded once.
    "elem": {"f32": 1e-5, "f16": 2e-3, "bf16": 1e-2},
    # Reductions and matmul: f32 accumulation, one rounding of the output.
    "reduce": {"f32": 1e-4, "f16": 2e-3, "bf16": 1e-2},
    # Composites (softmax, norms, attention, cross entropy, fusions).
    "comp": {"f32": 1e-4, "f16": 2e-3, "bf16": 2e-2},
}

# ----------------------------------------------------------------------------
# dtype helpers
# ----------------------------------------------------------------------------


def f32_to_bf16_bits(x):
    """float32 -> bf16 bit patterns (uint16), round to nearest even.

    NaN stays a (quiet) NaN; values beyond the bf16 range become infinity.
    """
    arr = np.asarray(x, dtype=np.float32)
    flat = np.ascontiguousarray(arr).reshape(-1)
    u = flat.view(np.uint32).astype(np.uint64)
    rounded = ((u + np.uint64(0x7FFF) + ((u >> np.uint64(16)) & np.uint64(1)))
               >> np.uint64(16)).astype(np.uint16)
    quiet_nan = ((u >> np.uint64(16)) | np.uint64(0x40)).astype(np.uint16)
    bits = np.where(np.isnan(flat), quiet_nan, rounded)
    return bits.reshape(arr.shape)


def bf16_bits_to_f32(bits):
    arr = np.asarray(bits, dtype=np.uint16)
    flat = arr.reshape(-1).astype(np.uint32) << np.uint32(16)
    return flat.view(np.float32).reshape(arr.shape)


def round_to(dtype, x):
    """`x` rounded to a float dtype the way the interpreter stores it (a
    float64 value goes through f32 first), returned as float64."""
    x32 = np.asarray(x, dtype=np.float64).astype(np.float32)
    if dtype == "f32":
        return x32.astype(np.float64)
    if dtype == "f16":
        return x32.astype(np.float16).astype(np.float64)
    if dtype == "bf16":
        return bf16_bits_to_f32(f32_to_bf16_bits(x32)).astype(np.float64)
    raise ValueError(dtype)


def encode(dtype, values):
    """The .npz array fuse-run reads for an input of `dtype`."""
    v = np.asarray(values)
    if dtype in FLOAT_TYPES:
        exact = round_to(dtype, v)
        both_nan = np.isnan(exact) & np.isnan(v.astype(np.float64))
        assert np.all((exact == v) | both_nan), "input not representable in " + dtype
    if dtype == "f32":
        return v.astype(np.float32)
    if dtype == "f16":
        return v.astype(np.float32).astype(np.float16)
    if dtype == "bf16":
        return f32_to_bf16_bits(v.astype(np.float32)).view(np.dtype("V2"))
    if dtype == "i64":
        return v.astype(np.int64)
    if dtype == "i32":
        assert np.all((v >= -2**31) & (v < 2**31)), "i32 input out of range"
        return v.astype(np.int32)
    if dtype == "i1":
        return v.astype(bool)
    raise ValueError(dtype)


NPZ_DTYPES = {
    np.dtype(np.float32): "f32",
    np.dtype(np.float16): "f16",
    np.dtype("V2"): "bf16",
    np.dtype(np.int64): "i64",
    np.dtype(np.int32): "i32",
    np.dtype(bool): "i1",
}


def decode(arr):
    """(dtype, values) of an array fuse-run wrote: floats as float64,
    integers as int64, i1 as bool."""
    dtype = NPZ_DTYPES.get(arr.dtype)
    if dtype == "bf16":
        return dtype, bf16_bits_to_f32(arr.reshape(-1).view(np.uint16)).reshape(
            arr.shape).astype(np.float64)
    if dtype in ("f32", "f16"):
        return dtype, arr.astype(np.float64)
    if dtype in ("i64", "i32"):
        return dtype, arr.astype(np.int64)
    if dtype == "i1":
        return dtype, arr.astype(bool)
    return None, arr


def T(shape, dtype):
    """MLIR tensor type: T((2, 3), 'f32') == 'tensor<2x3xf32>'."""
    return "tensor<" + "".join("%dx" % d for d in shape) + dtype + ">"


def fnum(x):
    """A float literal MLIR parses back to the same double."""
    return "%.17e" % float(x)


def dense(values, dtype):
    """The body of a dense<...> attribute holding `values` (nested lists)."""
    v = np.asarray(values)
    if dtype == "i1":
        item = lambda e: "true" if e else "false"
    elif dtype in FLOAT_TYPES:
        item = fnum
    else:
        item = lambda e: str(int(e))

    def nest(a):
        if a.ndim == 0:
            return item(a)
        return "[" + ", ".join(nest(s) for s in a) + "]"

    return nest(v)


# ----------------------------------------------------------------------------
# NumPy references of the composite ops
# ----------------------------------------------------------------------------


def erf(x):
    return np.vectorize(math.erf, otypes=[np.float64])(np.asarray(x, np.float64))


def gelu_erf(x):
    return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))


def gelu_tanh(x):
    return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def softmax(x, dim):
    m = np.max(x, axis=dim, keepdims=True)
    e = np.exp(x - m)
    return e / np.sum(e, axis=dim, keepdims=True)


def log_softmax(x, dim):
    m = np.max(x, axis=dim, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True))


def logsumexp(x, dim):
    m = np.max(x, axis=dim, keepdims=True)
    return np.squeeze(m + np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True)), axis=dim)


def int_div(a, b):
    """Integer division truncating toward zero (C, the GPU)."""
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def wrap_i32(v):
    return ((np.asarray(v, np.int64) + 2**31) % 2**32) - 2**31


def attention_scores(q, k, mask, causal, scale):
    """Scaled, masked scores [B, Hq, Tq, Tk] with key heads expanded."""
    hq, hkv = q.shape[1], k.shape[1]
    kk = np.repeat(k, hq // hkv, axis=1)  # query head h reads kv head h // g
    s = scale * (q @ np.swapaxes(kk, -1, -2))
    tq, tk = s.shape[-2:]
    if causal:  # query i sees keys j <= i (top-left aligned)
        s = np.where(np.tril(np.ones((tq, tk), dtype=bool)), s, -np.inf)
    if mask is not None:
        if mask.dtype == bool:
            s = np.where(mask, s, -np.inf)
        else:
            s = s + mask
    return s


def attention_forward(q, k, v, mask=None, causal=False, scale=1.0, keep=None,
                      dropout_p=0.0):
    """Output and f32 log-sum-exp of fuse.scaled_dot_product_attention.

    `keep` (bool [B, Hq, Tq, Tk]) applies dropout with 1 / (1 - p) scaling.
    """
    hq, hkv = q.shape[1], k.shape[1]
    vv = np.repeat(v, hq // hkv, axis=1)
    s = attention_scores(q, k, mask, causal, scale)
    p = softmax(s, -1)
    lse = logsumexp(s, -1)
    if keep is not None:
        p = p * keep / (1.0 - dropout_p)
    return p @ vv, lse


def attention_backward(do, q, k, v, mask=None, causal=False, scale=1.0,
                       keep=None, dropout_p=0.0):
    """dq, dk, dv of O = dropout(softmax(scale Q K^T + M)) V.

    With P = softmax(S), Z = keep / (1 - p) (1 without dropout):
      dV = (P * Z)^T dO                  summed over the query heads of a group
      dP = (dO V^T) * Z
      dS = P * (dP - rowsum(P * dP))
      dQ = scale * dS K
      dK = scale * dS^T Q                summed over the query heads of a group
    """
    b, hq, tq, _ = q.shape
    hkv, tk = k.shape[1], k.shape[2]
    g = hq // hkv
    kk = np.repeat(k, g, axis=1)
    vv = np.repeat(v, g, axis=1)
    p = softmax(attention_scores(q, k, mask, causal, scale), -1)
    z = np.ones_like(p) if keep is None else keep / (1.0 - dropout_p)
    dv_full = np.swapaxes(p * z, -1, -2) @ do
    dp = (do @ np.swapaxes(vv, -1, -2)) * z
    ds = p * (dp - np.sum(p * dp, axis=-1, keepdims=True))
    dq = scale * (ds @ kk)
    dk_full = scale * (np.swapaxes(ds, -1, -2) @ q)
    dk = dk_full.reshape(b, hkv, g, tk, q.shape[3]).sum(axis=2)
    dv = dv_full.reshape(b, hkv, g, tk, v.shape[3]).sum(axis=2)
    return dq, dk, dv


def cross_entropy(logits, labels, ignore_index, reduction):
    classes = logits.shape[-1]
    x = logits.reshape(-1, classes)
    lab = labels.reshape(-1)
    counted = lab != ignore_index
    safe = np.where(counted, lab, 0)
    loss = logsumexp(x, -1) - x[np.arange(len(lab)), safe]
    loss = np.where(counted, loss, 0.0)
    if reduction == "none":
        return loss.reshape(labels.shape)
    if reduction == "sum":
        return np.array(loss.sum())
    return np.array(loss.sum() / np.count_nonzero(counted))


def cross_entropy_backward(grad, logits, labels, ignore_index, reduction):
    classes = logits.shape[-1]
    x = logits.reshape(-1, classes)
    lab = labels.reshape(-1)
    counted = lab != ignore_index
    g = np.broadcast_to(np.asarray(grad, np.float64).reshape(-1), lab.shape).copy()
    if reduction == "mean":
        g = g / np.count_nonzero(counted)
    onehot = np.zeros_like(x)
    onehot[np.arange(len(lab)), np.where(counted, lab, 0)] = 1.0
    d = (softmax(x, -1) - onehot) * g[:, None]
    d[~counted] = 0.0
    return d.reshape(logits.shape)


def layer_norm(x, weight, bias, axis, eps):
    dims = tuple(range(axis, x.ndim))
    mean = x.mean(axis=dims, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=dims, keepdims=True)
    rstd = 1.0 / np.sqrt(var + eps)
    y = (x - mean) * rstd
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y, mean, rstd


def rms_norm(x, weight, axis, eps):
    dims = tuple(range(axis, x.ndim))
    y = x / np.sqrt((x ** 2).mean(axis=dims, keepdims=True) + eps)
    return y if weight is None else y * weight


# ----------------------------------------------------------------------------
# The harness
# ----------------------------------------------------------------------------


class Harness:
    def __init__(self, fuse_run, scratch, seed):
        self.fuse_run = fuse_run
        self.scratch = scratch
        self.seed = seed
        self.rng = np.random.default_rng(seed)
        self.graphs = 0
        self.passed = 0
        self.failed = 0
        self.families = OrderedDict()

    # -- random inputs, already rounded to their dtype ---------------------

    def normal(self, shape, dtype, scale=1.0, loc=0.0):
        return round_to(dtype, self.rng.standard_normal(shape) * scale + loc)

    def uniform(self, shape, dtype, lo, hi):
        return round_to(dtype, self.rng.uniform(lo, hi, shape))

    def ints(self, shape, lo, hi):
        return self.rng.integers(lo, hi, shape, dtype=np.int64)

    def bools(self, shape, p=0.5):
        return self.rng.random(shape) < p

    # -- running fuse-run ---------------------------------------------------

    def run(self, tag, args, body, results):
        """Writes and runs one graph. args: [(dtype, values)], referred to as
        %a0, %a1, ...; body: MLIR lines; results: [(ssa, dtype, shape)].
        Returns (outputs or None, error or None, reproducer command)."""
        self.graphs += 1
        base = os.path.join(self.scratch, "%03d_%s" % (self.graphs, re.sub(r"[^A-Za-z0-9_.-]", "_", tag)))
        graph_path, in_path, out_path = base + ".mlir", base + ".in.npz", base + ".out.npz"
        params = ", ".join("%%a%d: %s" % (i, T(np.shape(v), dt)) for i, (dt, v) in enumerate(args))
        rtypes = ", ".join(T(shape, dt) for _, dt, shape in results)
        text = "func.func @main(%s) -> (%s) {\n" % (params, rtypes)
        text += "".join("  " + line + "\n" for line in body)
        text += "  return %s : %s\n}\n" % (", ".join(r[0] for r in results), rtypes)
        with open(graph_path, "w") as f:
            f.write(text)
        cmd = [self.fuse_run, graph_path, "--device=cpu", "--dump-outputs", out_path]
        if args:
            np.savez(in_path, **{"arg%d" % i: encode(dt, v) for i, (dt, v) in enumerate(args)})
            # Additive attention masks hold -inf on purpose.
            cmd[3:3] = ["--inputs", in_path, "--allow-inf"]
        repro = " ".join(cmd)
        if os.path.exists(out_path):
            os.remove(out_path)
        try:
            proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  universal_newlines=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, "fuse-run timed out", repro
        if proc.returncode != 0:
            err = (proc.stderr.strip() or proc.stdout.strip()).replace("\n", " | ")
            return None, "fuse-run exited with %d: %s" % (proc.returncode, err[-600:]), repro
        try:
            with np.load(out_path) as z:
                outputs = [z["out%d" % i] for i in range(len(results))]
        except Exception as e:  # pylint: disable=broad-except
            return None, "cannot read %s: %s" % (out_path, e), repro
        return outputs, None, repro

    # -- reporting ------------------------------------------------------------

    def report(self, family, op, dtype, ok, detail, repro=None):
        counts = self.families.setdefault(family, [0, 0])
        if ok:
            self.passed += 1
            counts[0] += 1
            print("PASS %s %s %s" % (op, dtype, detail))
        else:
            self.failed += 1
            counts[1] += 1
            print("FAIL %s %s %s" % (op, dtype, detail))
            if repro:
                print("     reproduce: FUSE_TEST_SEED=%d, %s" % (self.seed, repro))
        sys.stdout.flush()

    def compare(self, got_arr, out_dtype, want, tol):
        """(ok, rel_err text) of one output against its reference."""
        got_dtype, got = decode(got_arr)
        want = np.asarray(want)
        if got_dtype != out_dtype:
            return False, "output dtype %s, expected %s" % (got_arr.dtype, out_dtype)
        if got.shape != want.shape:
            return False, "output shape %s, expected %s" % (got.shape, want.shape)
        if out_dtype in INT_TYPES:
            want_i = want.astype(bool) if out_dtype == "i1" else want.astype(np.int64)
            bad = got != want_i
            n = int(np.count_nonzero(bad))
            if n == 0:
                return True, "rel_err=0 (exact)"
            at = tuple(np.argwhere(bad)[0])
            return False, "%d of %d elements differ (exact match required); first at %s: got %s, expected %s" % (
                n, got.size, at, got[at], want_i[at])
        want_r = round_to(out_dtype, want)
        if np.isnan(want_r).any():
            return False, "NaN in the NumPy reference (bug in this test)"
        if np.isnan(got).any():
            at = tuple(np.argwhere(np.isnan(got))[0])
            return False, "NaN in the output (%d elements; first at %s, expected %r)" % (
                int(np.isnan(got).sum()), at, want_r[at])
        finite = np.isfinite(want_r)
        inf_bad = (~finite & (got != want_r)) | (finite & ~np.isfinite(got))
        if inf_bad.any():
            at = tuple(np.argwhere(inf_bad)[0])
            return False, "infinity mismatch at %s: got %r, expected %r" % (at, got[at], want_r[at])
        diff = got[finite] - want_r[finite]
        norm_want = float(np.linalg.norm(want_r[finite]))
        norm_diff = float(np.linalg.norm(diff))
        rel = norm_diff / norm_want if norm_want > 0 else norm_diff
        text = "rel_err=%.2e (tol %.0e)" % (rel, tol)
        if rel <= tol:
            return True, text
        err = np.where(finite, np.abs(got - want_r), 0.0)
        at = tuple(np.unravel_index(int(np.argmax(err)), err.shape))
        return False, text + "; worst at %s: got %r, expected %r" % (at, got[at], want_r[at])

    def case(self, family, op, label, args, body, outs, kind="elem"):
        """Runs one graph and checks its outputs.

        outs: [(ssa, dtype, reference, name)]; `name` (default `op`) is what
        the PASS/FAIL line calls that output. Float references are rounded
        to the output dtype here.
        """
        results = [(o[0], o[1], np.shape(o[2])) for o in outs]
        outputs, error, repro = self.run("%s_%s" % (op, label), args, body, results)
        for i, out in enumerate(outs):
            ssa, dtype, ref = out[:3]
            name = out[3] if len(out) > 3 and out[3] else op
            if error:
                self.report(family, name, label, False, error, repro)
                continue
            tol = TOLERANCES[kind].get(dtype, 0.0)
            ok, detail = self.compare(outputs[i], dtype, ref, tol)
            self.report(family, name, label, ok, detail, None if ok else repro)


# ----------------------------------------------------------------------------
# The cases
# ----------------------------------------------------------------------------

UNARY = OrderedDict([
    # name: (reference, input sampler)
    ("neg", (lambda x: -x, "normal")),
    ("abs", (np.abs, "normal")),
    ("relu", (lambda x: np.maximum(x, 0.0), "normal")),
    ("exp", (np.exp, "exp")),
    ("log", (np.log, "positive")),
    ("tanh", (np.tanh, "normal")),
    ("erf", (erf, "normal")),
    ("sqrt", (np.sqrt, "positive")),
    ("rsqrt", (lambda x: 1.0 / np.sqrt(x), "positive")),
    ("reciprocal", (lambda x: 1.0 / x, "nonzero")),
    ("sigmoid", (sigmoid, "normal")),
    ("silu", (lambda x: x * sigmoid(x), "normal")),
])

BINARY = OrderedDict([
    ("add", (np.add, "normal")),
    ("sub", (np.subtract, "normal")),
    ("mul", (np.multiply, "normal")),
    ("div", (np.divide, "nonzero")),
    ("maximum", (np.maximum, "ties")),
    ("minimum", (np.minimum, "ties")),
    ("pow", (np.power, "pow")),
])

F16_OPS = ("exp", "tanh", "sigmoid", "rsqrt", "add", "mul", "div", "gelu_erf")

EW_SHAPE = (4, 33)


def sample(h, how, dtype, shape=EW_SHAPE):
    if how == "normal":
        return h.normal(shape, dtype, 2.0)
    if how == "exp":
        return h.uniform(shape, dtype, -4.0, 4.0)
    if how == "positive":
        return h.uniform(shape, dtype, 0.1, 10.0)
    if how == "nonzero":
        sign = np.where(h.bools(shape), 1.0, -1.0)
        return round_to(dtype, sign * h.rng.uniform(0.25, 4.0, shape))
    raise ValueError(how)


def elementwise_cases(h):
    fam = "elementwise"
    for dtype in ("f32", "bf16", "f16"):
        for name, (ref, how) in UNARY.items():
            if dtype == "f16" and name not in F16_OPS:
                continue
            x = sample(h, how, dtype)
            t = T(x.shape, dtype)
            h.case(fam, name, dtype, [(dtype, x)], ["%%r = fuse.%s %%a0 : %s" % (name, t)],
                   [("%r", dtype, ref(x))])
        for approx, ref in (("erf", gelu_erf), ("tanh", gelu_tanh)):
            if dtype == "f16" and approx != "erf":
                continue
            x = h.normal(EW_SHAPE, dtype, 2.0)
            t = T(x.shape, dtype)
            h.case(fam, "gelu_" + approx, dtype, [(dtype, x)],
                   ["%%r = fuse.gelu %%a0, approximate = %s : %s" % (approx, t)],
                   [("%r", dtype, ref(x))])
        for name, (ref, how) in BINARY.items():
            if dtype == "f16" and name not in F16_OPS:
                continue
            if how == "pow":
                x = h.uniform(EW_SHAPE, dtype, 0.25, 4.0)
                y = h.uniform(EW_SHAPE, dtype, -2.0, 2.0)
            elif how == "ties":
                x = h.normal(EW_SHAPE, dtype, 2.0)
                y = h.normal(EW_SHAPE, dtype, 2.0)
                y.flat[::5] = x.flat[::5]
            else:
                x = h.normal(EW_SHAPE, dtype, 2.0)
                y = sample(h, how, dtype)
            t = T(x.shape, dtype)
            h.case(fam, name, dtype, [(dtype, x), (dtype, y)],
                   ["%%r = fuse.%s %%a0, %%a1 : %s" % (name, t)], [("%r", dtype, ref(x, y))])

    # Integer forms of the numeric ops: exact.
    int_unary = OrderedDict([("neg", lambda x: -x), ("abs", np.abs), ("relu", lambda x: np.maximum(x, 0))])
    int_binary = OrderedDict([("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                              ("div", int_div), ("maximum", np.maximum), ("minimum", np.minimum)])
    for dtype in ("i64", "i32"):
        bound = 2**40 if dtype == "i64" else 2**15
        for name, ref in int_unary.items():
            x = h.ints((3, 17), -bound, bound)
            h.case(fam, name, dtype, [(dtype, x)], ["%%r = fuse.%s %%a0 : %s" % (name, T(x.shape, dtype))],
                   [("%r", dtype, ref(x))])
        for name, ref in int_binary.items():
            x = h.ints((3, 17), -bound, bound)
            if name == "div":
                y = h.ints((3, 17), 1, 50) * np.where(h.bools((3, 17)), 1, -1)
            elif name == "mul":
                x = h.ints((3, 17), -(2**15), 2**15)
                y = h.ints((3, 17), -(2**15), 2**15)
            else:
                y = h.ints((3, 17), -bound, bound)
                y.flat[::4] = x.flat[::4]
            h.case(fam, name, dtype, [(dtype, x), (dtype, y)],
                   ["%%r = fuse.%s %%a0, %%a1 : %s" % (name, T(x.shape, dtype))], [("%r", dtype, ref(x, y))])
    # i32 arithmetic wraps to 32 bits, as PyTorch's int32.
    for name, ref in (("add", np.add), ("sub", np.subtract), ("mul", np.multiply)):
        x, y = h.ints((3, 17), -(2**31), 2**31), h.ints((3, 17), -(2**31), 2**31)
        h.case(fam, name, "i32 (wraps)", [("i32", x), ("i32", y)],
               ["%%r = fuse.%s %%a0, %%a1 : %s" % (name, T(x.shape, "i32"))], [("%r", "i32", wrap_i32(ref(x, y)))])

    # Logic on i1.
    p, q = h.bools((5, 13)), h.bools((5, 13))
    t = T(p.shape, "i1")
    h.case(fam, "and", "i1", [("i1", p), ("i1", q)], ["%%r = fuse.and %%a0, %%a1 : %s" % t], [("%r", "i1", p & q)])
    h.case(fam, "or", "i1", [("i1", p), ("i1", q)], ["%%r = fuse.or %%a0, %%a1 : %s" % t], [("%r", "i1", p | q)])
    h.case(fam, "not", "i1", [("i1", p)], ["%%r = fuse.not %%a0 : %s" % t], [("%r", "i1", ~p)])


COMPARE = OrderedDict([("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                       ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)])


def compare_cases(h):
    fam = "compare"
    shape = (6, 11)
    for dtype in ("f32", "bf16", "i64", "i32", "i1"):
        if dtype == "i1":
            x, y = h.bools(shape), h.bools(shape)
        elif dtype in FLOAT_TYPES:  # a coarse grid, so that ties happen
            x = round_to(dtype, h.ints(shape, -6, 7) * 0.5 + (h.rng.random(shape) < 0.2) * 1e-3)
            y = round_to(dtype, h.ints(shape, -6, 7) * 0.5)
        else:
            x, y = h.ints(shape, -4, 5), h.ints(shape, -4, 5)
        for direction, ref in COMPARE.items():
            if dtype == "i1" and direction not in ("eq", "ne"):
                continue
            h.case(fam, "compare_" + direction, dtype, [(dtype, x), (dtype, y)],
                   ["%%r = fuse.compare %s, %%a0, %%a1 : %s" % (direction, T(shape, dtype))],
                   [("%r", "i1", ref(x, y))])


def select_cases(h):
    fam = "select"
    shape = (3, 4, 7)
    for dtype in ("f32", "bf16", "f16", "i64", "i32", "i1"):
        c = h.bools(shape)
        if dtype in FLOAT_TYPES:
            a, b = h.normal(shape, dtype), h.normal(shape, dtype)
        elif dtype == "i1":
            a, b = h.bools(shape), h.bools(shape)
        else:
            a, b = h.ints(shape, -1000, 1000), h.ints(shape, -1000, 1000)
        h.case(fam, "select", dtype, [("i1", c), (dtype, a), (dtype, b)],
               ["%%r = fuse.select %%a0, %%a1, %%a2 : %s, %s" % (T(shape, "i1"), T(shape, dtype))],
               [("%r", dtype, np.where(c, a, b))])


def cast_source(h, src, dst, shape):
    """Inputs that exercise rounding, truncation toward zero and zero tests."""
    if src in FLOAT_TYPES:
        x = h.rng.standard_normal(shape) * (300.0 if dst != "i1" else 1.0)
        x[..., 0] = 0.0
        x[..., 1] = -0.0
        x[..., 2] = h.rng.uniform(-0.99, 0.99, shape[:-1])  # truncates to 0
        x[..., 3] = np.round(x[..., 3])  # integral values
        return round_to(src, x)
    if src == "i1":
        return h.bools(shape)
    if dst == "i1":
        x = h.ints(shape, -3, 4)
    elif src == "i64" and dst == "i32":  # wraps, as PyTorch's .to(torch.int32)
        x = h.ints(shape, -(2**40), 2**40)
    elif src == "i64" and dst == "f32":  # beyond 2^24: rounds to nearest even
        x = h.ints(shape, -(2**27), 2**27)
    else:
        x = h.ints(shape, -5000, 5000)
    x[..., 0] = 0
    return x


def cast_reference(src, dst, x):
    if dst == "i1":
        return x != 0
    if src == "i1":
        return x.astype(np.int64)
    if dst in FLOAT_TYPES:
        return x.astype(np.float64)  # rounded to dst (via f32) by compare
    if src in FLOAT_TYPES:
        v = np.trunc(x).astype(np.int64)
    else:
        v = x.astype(np.int64)
    return wrap_i32(v) if dst == "i32" else v


def cast_cases(h):
    fam = "cast"
    types = ("f32", "f16", "bf16", "i32", "i64", "i1")
    shape = (3, 20)
    for src in types:
        for dst in types:
            if src == dst:
                continue
            x = cast_source(h, src, dst, shape)
            h.case(fam, "cast", "%s->%s" % (src, dst), [(src, x)],
                   ["%%r = fuse.cast %%a0 : %s to %s" % (T(shape, src), T(shape, dst))],
                   [("%r", dst, cast_reference(src, dst, x))])


def generator_cases(h):
    fam = "constant/iota"
    # Splats, including values that need rounding to the dtype and -inf.
    for dtype, shape, value in (("f32", (3, 4), h.rng.standard_normal()),
                                ("bf16", (5,), h.rng.standard_normal() * 10),
                                ("f16", (2, 2), 0.1),
                                ("bf16", (2, 3), 0.1)):
        h.case(fam, "constant_splat", dtype, [],
               ["%%r = fuse.constant dense<%s> : %s" % (fnum(value), T(shape, dtype))],
               [("%r", dtype, np.full(shape, value))])
    h.case(fam, "constant_splat", "f32(-inf)", [],
           ["%%r = fuse.constant dense<0xFF800000> : %s" % T((2, 3), "f32")],
           [("%r", "f32", np.full((2, 3), -np.inf))])
    value = int(h.ints((), -(2**40), 2**40))
    h.case(fam, "constant_splat", "i64", [], ["%%r = fuse.constant dense<%d> : %s" % (value, T((4,), "i64"))],
           [("%r", "i64", np.full((4,), value))])
    h.case(fam, "constant_splat", "i32", [], ["%%r = fuse.constant dense<-7> : %s" % T((2, 2), "i32")],
           [("%r", "i32", np.full((2, 2), -7))])
    h.case(fam, "constant_splat", "i1", [], ["%%r = fuse.constant dense<true> : %s" % T((3,), "i1")],
           [("%r", "i1", np.ones((3,), bool))])
    # Dense constants (exactly representable values).
    for dtype, shape in (("f32", (2, 3)), ("bf16", (3, 2)), ("f16", (4,))):
        v = h.normal(shape, dtype, 3.0)
        h.case(fam, "constant_dense", dtype, [],
               ["%%r = fuse.constant dense<%s> : %s" % (dense(v, dtype), T(shape, dtype))],
               [("%r", dtype, v)])
    for dtype, shape in (("i64", (2, 3)), ("i32", (5,))):
        v = h.ints(shape, -(2**31), 2**31)
        h.case(fam, "constant_dense", dtype, [],
               ["%%r = fuse.constant dense<%s> : %s" % (dense(v, dtype), T(shape, dtype))],
               [("%r", dtype, v)])
    v = h.bools((2, 4))
    h.case(fam, "constant_dense", "i1", [],
           ["%%r = fuse.constant dense<%s> : %s" % (dense(v, "i1"), T((2, 4), "i1"))], [("%r", "i1", v)])

    # iota: bf16 and f16 round the larger indices (257 -> 256 in bf16).
    for dtype, shape, dim in (("i64", (3, 5), 1), ("i32", (6, 2), 0), ("f32", (2, 7, 3), 1),
                              ("bf16", (300, 2), 0), ("f16", (2, 2100), 1)):
        ref = np.broadcast_to(np.arange(shape[dim]).reshape([-1 if d == dim else 1 for d in range(len(shape))]),
                              shape)
        h.case(fam, "iota", dtype, [], ["%%r = fuse.iota dim = %d : %s" % (dim, T(shape, dtype))],
               [("%r", dtype, ref)])


def values(h, dtype, shape):
    if dtype in FLOAT_TYPES:
        return h.normal(shape, dtype)
    if dtype == "i1":
        return h.bools(shape)
    return h.ints(shape, -(2**30), 2**30)


def shape_cases(h):
    fam = "shape"
    # broadcast_in_dim
    for dtype, ishape, dims, oshape in (("f32", (5,), [2], (3, 4, 5)),
                                        ("f32", (3, 1, 5), [0, 1, 2], (3, 4, 5)),
                                        ("f32", (), [], (2, 3)),
                                        ("bf16", (4,), [0], (4, 6)),
                                        ("bf16", (2, 1, 3), [0, 2, 3], (2, 5, 1, 3)),
                                        ("i64", (1, 7), [0, 1], (3, 7)),
                                        ("i1", (4, 4), [2, 3], (2, 3, 4, 4))):
        x = values(h, dtype, ishape)
        expanded = np.reshape(x, [ishape[dims.index(d)] if d in dims else 1 for d in range(len(oshape))])
        h.case(fam, "broadcast_in_dim", dtype, [(dtype, x)],
               ["%%r = fuse.broadcast_in_dim %%a0, dims = [%s] : (%s) -> %s"
                % (", ".join(map(str, dims)), T(ishape, dtype), T(oshape, dtype))],
               [("%r", dtype, np.broadcast_to(expanded, oshape))])
    # reshape
    for dtype, ishape, oshape in (("f32", (2, 3, 4), (6, 4)), ("bf16", (24,), (2, 3, 4)),
                                  ("i32", (4, 6), (2, 2, 6)), ("i1", (2, 8), (16,)), ("f32", (1,), ())):
        x = values(h, dtype, ishape)
        h.case(fam, "reshape", dtype, [(dtype, x)],
               ["%%r = fuse.reshape %%a0 : (%s) -> %s" % (T(ishape, dtype), T(oshape, dtype))],
               [("%r", dtype, x.reshape(oshape))])
    # transpose
    for dtype, ishape, perm in (("f32", (2, 3, 4, 5), [0, 2, 1, 3]), ("bf16", (3, 5), [1, 0]),
                                ("i64", (2, 3, 4), [2, 0, 1]), ("i1", (3, 4), [1, 0])):
        x = values(h, dtype, ishape)
        y = np.transpose(x, perm)
        h.case(fam, "transpose", dtype, [(dtype, x)],
               ["%%r = fuse.transpose %%a0, permutation = [%s] : (%s) -> %s"
                % (", ".join(map(str, perm)), T(ishape, dtype), T(y.shape, dtype))],
               [("%r", dtype, y)])
    # slice, with strides
    for dtype, ishape, start, limit, stride in (("f32", (5, 9, 7), [1, 0, 2], [5, 9, 6], [2, 3, 1]),
                                                ("bf16", (8, 10), [0, 1], [8, 10], [3, 4]),
                                                ("i32", (9,), [2], [9], [3]),
                                                ("i1", (6, 6), [1, 1], [6, 6], [2, 2]),
                                                ("f32", (2, 4, 3), [0, 2, 0], [2, 2, 3], [1, 1, 1])):
        x = values(h, dtype, ishape)
        y = x[tuple(slice(a, b, s) for a, b, s in zip(start, limit, stride))]
        fmt = lambda v: ", ".join(map(str, v))
        h.case(fam, "slice", dtype, [(dtype, x)],
               ["%%r = fuse.slice %%a0, start = [%s], limit = [%s], stride = [%s] : (%s) -> %s"
                % (fmt(start), fmt(limit), fmt(stride), T(ishape, dtype), T(y.shape, dtype))],
               [("%r", dtype, y)])
    # concat
    for dtype, shapes, dim in (("f32", [(2, 3, 4), (2, 1, 4), (2, 5, 4)], 1),
                               ("bf16", [(3, 6), (4, 6)], 0),
                               ("i64", [(2, 3), (2, 1)], 1),
                               ("i1", [(2, 5), (3, 5)], 0),
                               ("f32", [(3, 2)], 0)):
        xs = [values(h, dtype, s) for s in shapes]
        y = np.concatenate(xs, axis=dim)
        h.case(fam, "concat", dtype, [(dtype, x) for x in xs],
               ["%%r = fuse.concat dim(%d) %s : (%s) -> %s"
                % (dim, ", ".join("%%a%d" % i for i in range(len(xs))),
                   ", ".join(T(s, dtype) for s in shapes), T(y.shape, dtype))],
               [("%r", dtype, y)])
    # gather
    for dtype, tshape, itype, ishape, dim in (("f32", (10, 6), "i64", (3, 4), 0),
                                              ("bf16", (3, 7, 5), "i32", (9,), 1),
                                              ("f32", (2, 8, 3), "i64", (), 1),
                                              ("bf16", (12, 4), "i64", (2, 5), 0),
                                              ("i64", (10,), "i64", (2, 5), 0),
                                              ("i1", (9, 2), "i32", (4,), 0)):
        table = values(h, dtype, tshape)
        idx = h.ints(ishape, 0, tshape[dim])
        y = np.take(table, idx, axis=dim)
        h.case(fam, "gather", "%s[%s]" % (dtype, itype), [(dtype, table), (itype, idx)],
               ["%%r = fuse.gather %%a0[%%a1], dim = %d : (%s, %s) -> %s"
                % (dim, T(tshape, dtype), T(ishape, itype), T(y.shape, dtype))],
               [("%r", dtype, y)])
    # scatter_add, with repeated indices
    for dtype, dshape, itype, ishape, dim in (("f32", (6, 5), "i64", (3, 4), 0),
                                              ("bf16", (2, 5, 3), "i32", (7,), 1),
                                              ("bf16", (8, 4), "i64", (4, 3), 0),
                                              ("i64", (6,), "i64", (10,), 0),
                                              ("i32", (3, 5), "i64", (2, 4), 1)):
        dest = values(h, dtype, dshape)
        idx = h.ints(ishape, 0, dshape[dim])
        idx.flat[1] = idx.flat[0]  # at least one repeat
        if idx.size > 3:
            idx.flat[3] = idx.flat[0]
        ushape = dshape[:dim] + ishape + dshape[dim + 1:]
        upd = values(h, dtype, ushape)
        ref = dest.astype(np.float64 if dtype in FLOAT_TYPES else np.int64).copy()
        # updates[..., k..., ...] adds into dest[..., idx[k], ...]
        moved = np.moveaxis(ref, dim, 0)
        upd_m = np.moveaxis(np.asarray(upd), list(range(dim, dim + len(ishape))), list(range(len(ishape))))
        np.add.at(moved, idx.reshape(-1), upd_m.reshape((-1,) + moved.shape[1:]))
        if dtype == "i32":
            ref = wrap_i32(ref)
        h.case(fam, "scatter_add", "%s[%s]" % (dtype, itype), [(dtype, dest), (itype, idx), (dtype, upd)],
               ["%%r = fuse.scatter_add %%a0[%%a1], %%a2, dim = %d : (%s, %s, %s) -> %s"
                % (dim, T(dshape, dtype), T(ishape, itype), T(ushape, dtype), T(dshape, dtype))],
               [("%r", dtype, ref)], kind="reduce")


REDUCE = OrderedDict([("sum", np.sum), ("max", np.max), ("min", np.min), ("mean", np.mean)])


def reduction_cases(h):
    fam = "reduce/argmax"
    shape = (3, 5, 7)
    for dtype in ("f32", "bf16"):
        # An offset keeps sums away from cancellation.
        x = h.normal(shape, dtype, 1.0, 0.5)
        for kind, ref in REDUCE.items():
            for dims, keepdim in (([2], False), ([1], True), ([0, 2], False), ([0, 1, 2], True)):
                y = ref(x, axis=tuple(dims), keepdims=keepdim)
                h.case(fam, "reduce_%s%s" % (kind, "_keepdim" if keepdim else ""), "%s dims=%s" % (dtype, dims),
                       [(dtype, x)],
                       ["%%r = fuse.reduce %s %%a0, dims = [%s]%s : (%s) -> %s"
                        % (kind, ", ".join(map(str, dims)), " keepdim" if keepdim else "",
                           T(shape, dtype), T(np.shape(y), dtype))],
                       [("%r", dtype, y)], kind="reduce")
    for dtype in ("i64", "i32"):
        x = h.ints(shape, -1000, 1000)
        for kind in ("sum", "max", "min"):
            for dims, keepdim in (([1], False), ([0, 2], True)):
                y = REDUCE[kind](x, axis=tuple(dims), keepdims=keepdim)
                h.case(fam, "reduce_%s%s" % (kind, "_keepdim" if keepdim else ""), "%s dims=%s" % (dtype, dims),
                       [(dtype, x)],
                       ["%%r = fuse.reduce %s %%a0, dims = [%s]%s : (%s) -> %s"
                        % (kind, ", ".join(map(str, dims)), " keepdim" if keepdim else "",
                           T(shape, dtype), T(np.shape(y), dtype))],
                       [("%r", dtype, y)])
    # argmax: the first index on ties (coarse values make ties likely).
    for dtype in ("f32", "bf16", "i64", "i32"):
        if dtype in FLOAT_TYPES:
            x = round_to(dtype, h.ints(shape, -3, 4) * 0.25 + (h.rng.random(shape) < 0.5) * h.rng.random(shape))
        else:
            x = h.ints(shape, -3, 4)
        for dim, keepdim in ((1, False), (2, True), (0, False)):
            y = np.argmax(x, axis=dim)
            if keepdim:
                y = np.expand_dims(y, dim)
            h.case(fam, "argmax%s" % ("_keepdim" if keepdim else ""), "%s dim=%d" % (dtype, dim), [(dtype, x)],
                   ["%%r = fuse.argmax %%a0, dim = %d%s : (%s) -> %s"
                    % (dim, " keepdim" if keepdim else "", T(shape, dtype), T(y.shape, "i64"))],
                   [("%r", "i64", y)])


def cumsum_cases(h):
    fam = "cumsum"
    shape = (3, 5, 7)
    for dtype in ("f32", "bf16", "f16"):
        # An offset keeps prefix sums away from cancellation.
        x = h.normal(shape, dtype, 1.0, 0.5)
        for dim in (0, 1, 2):
            h.case(fam, "cumsum", "%s dim=%d" % (dtype, dim), [(dtype, x)],
                   ["%%r = fuse.cumsum %%a0, dim = %d : %s" % (dim, T(shape, dtype))],
                   [("%r", dtype, np.cumsum(x, axis=dim))], kind="reduce")
    for dtype in ("i64", "i32"):
        x = h.ints(shape, -1000, 1000)
        for dim in (1, 2):
            h.case(fam, "cumsum", "%s dim=%d" % (dtype, dim), [(dtype, x)],
                   ["%%r = fuse.cumsum %%a0, dim = %d : %s" % (dim, T(shape, dtype))],
                   [("%r", dtype, np.cumsum(x, axis=dim))])
    # i32 prefix sums past 2^31 wrap to the type's width, as on the GPU.
    x = h.ints((2, 9), 2**29, 2**30)
    h.case(fam, "cumsum_wraps", "i32 dim=1", [("i32", x)],
           ["%%r = fuse.cumsum %%a0, dim = 1 : %s" % T((2, 9), "i32")],
           [("%r", "i32", wrap_i32(np.cumsum(x, axis=1)))])
    # RoBERTa's position ids: cumsum of a padding mask.
    mask = h.bools((4, 12), 0.8).astype(np.int64)
    h.case(fam, "cumsum_mask", "i64 dim=1", [("i64", mask)],
           ["%%r = fuse.cumsum %%a0, dim = 1 : %s" % T((4, 12), "i64")],
           [("%r", "i64", np.cumsum(mask, axis=1))])


def matmul_cases(h):
    fam = "matmul"
    configs = (
        # name, lhs shape, rhs shape, transpose_lhs, transpose_rhs
        ("plain", (8, 16), (16, 12), False, False),
        ("transpose_lhs", (16, 8), (16, 12), True, False),
        ("transpose_rhs", (8, 16), (12, 16), False, True),
        ("transpose_both", (16, 8), (12, 16), True, True),
        ("batched", (2, 3, 8, 16), (2, 3, 16, 5), False, False),
        ("batched_transpose_rhs", (2, 3, 8, 16), (2, 3, 5, 16), False, True),
        ("shared_rhs", (2, 4, 16), (16, 12), False, False),
        ("shared_rhs_transposed", (2, 4, 16), (12, 16), False, True),
    )
    for dtype in ("f32", "bf16", "f16"):
        for name, ls, rs, tl, tr in configs:
            if dtype == "f16" and name not in ("plain", "batched"):
                continue
            a, b = h.normal(ls, dtype), h.normal(rs, dtype)
            y = (np.swapaxes(a, -1, -2) if tl else a) @ (np.swapaxes(b, -1, -2) if tr else b)
            h.case(fam, "matmul_" + name, dtype, [(dtype, a), (dtype, b)],
                   ["%%r = fuse.matmul %%a0, %%a1%s%s : (%s, %s) -> %s"
                    % (" transpose_lhs" if tl else "", " transpose_rhs" if tr else "",
                       T(ls, dtype), T(rs, dtype), T(y.shape, dtype))],
                   [("%r", dtype, y)], kind="reduce")


def normalization_cases(h):
    fam = "softmax/norms"
    for dtype in ("f32", "bf16"):
        for shape, dim in (((2, 3, 5, 16), 3), ((4, 24), 1), ((6, 5, 3), 0)):
            x = h.normal(shape, dtype, 2.0)
            for op, ref in (("softmax", softmax), ("log_softmax", log_softmax)):
                h.case(fam, op, "%s dim=%d" % (dtype, dim), [(dtype, x)],
                       ["%%r = fuse.%s %%a0, dim = %d : %s" % (op, dim, T(shape, dtype))],
                       [("%r", dtype, ref(x, dim))], kind="comp")
        # layer_norm: weight and bias, none, weight only over two dims, bias only.
        for shape, axis, with_w, with_b, eps in (((2, 5, 16), 2, True, True, 1e-5),
                                                 ((3, 4, 8), 1, False, False, 1e-5),
                                                 ((2, 4, 8), 1, True, False, 1e-6),
                                                 ((6, 12), 1, False, True, 0.0)):
            x = h.normal(shape, dtype, 2.0, 0.3)
            nshape = shape[axis:]
            w = h.normal(nshape, dtype, 0.5, 1.0) if with_w else None
            b = h.normal(nshape, dtype, 0.5) if with_b else None
            y, mean, rstd = layer_norm(x, w, b, axis, eps)
            args = [(dtype, x)] + ([(dtype, w)] if with_w else []) + ([(dtype, b)] if with_b else [])
            operands = "%a0"
            if with_w:
                operands += " weight(%a1)"
            if with_b:
                operands += " bias(%%a%d)" % (2 if with_w else 1)
            label = "%s axis=%d%s%s" % (dtype, axis, " weight" if with_w else "", " bias" if with_b else "")
            h.case(fam, "layer_norm", label, args,
                   ["%%y, %%m, %%s = fuse.layer_norm %s axis = %d epsilon = %s : (%s) -> (%s, %s, %s)"
                    % (operands, axis, fnum(eps), ", ".join(T(np.shape(a[1]), dtype) for a in args),
                       T(shape, dtype), T(mean.shape, "f32"), T(rstd.shape, "f32"))],
                   [("%y", dtype, y, "layer_norm.output"), ("%m", "f32", mean, "layer_norm.mean"),
                    ("%s", "f32", rstd, "layer_norm.rstd")], kind="comp")
        for shape, axis, with_w, eps in (((2, 5, 16), 2, True, 1e-6), ((4, 24), 1, False, 1e-5),
                                         ((2, 3, 8), 1, True, 1e-6)):
            x = h.normal(shape, dtype, 2.0)
            w = h.normal(shape[axis:], dtype, 0.5, 1.0) if with_w else None
            args = [(dtype, x)] + ([(dtype, w)] if with_w else [])
            h.case(fam, "rms_norm", "%s axis=%d%s" % (dtype, axis, " weight" if with_w else ""), args,
                   ["%%y = fuse.rms_norm %%a0%s axis = %d epsilon = %s : (%s) -> %s"
                    % (" weight(%a1)" if with_w else "", axis, fnum(eps),
                       ", ".join(T(np.shape(a[1]), dtype) for a in args), T(shape, dtype))],
                   [("%y", dtype, rms_norm(x, w, axis, eps))], kind="comp")


def attention_configs(h, dtype):
    """(label, q, k, v, mask or None, causal, scale) for the forward and
    backward cases."""
    out = []
    b, hq, t, d = 2, 3, 9, 8
    qkv = lambda hq_, hkv, tq, tk, dk, dv: (h.normal((b, hq_, tq, dk), dtype), h.normal((b, hkv, tk, dk), dtype),
                                            h.normal((b, hkv, tk, dv), dtype))
    q, k, v = qkv(hq, hq, t, t, d, d)
    out.append(("causal", q, k, v, None, True, 1.0 / math.sqrt(d)))
    q, k, v = qkv(hq, hq, 5, 7, d, 6)
    out.append(("causal_cross", q, k, v, None, True, 0.4))
    # Float mask broadcast over heads and queries, with some -inf (padding).
    q, k, v = qkv(hq, hq, 5, 11, d, 6)
    mask = h.normal((b, 1, 1, 11), dtype)
    mask[0, 0, 0, 9:] = -np.inf
    mask[1, 0, 0, 2] = -np.inf
    out.append(("float_mask", q, k, v, mask, False, 0.35))
    # A full-size float mask.
    q, k, v = qkv(hq, hq, t, t, d, d)
    out.append(("float_mask_full", q, k, v, h.normal((b, hq, t, t), dtype, 2.0), False, 0.3))
    # Boolean masks: [1, 1, Tq, Tk] and [B, 1, Tq, Tk]; every row keeps one.
    for shape in ((1, 1, t, t), (b, 1, t, t)):
        keep = h.bools(shape, 0.6)
        keep[..., np.arange(t), h.ints((t,), 0, t)] = True
        q, k, v = qkv(hq, hq, t, t, d, d)
        out.append(("bool_mask" + ("_batch" if shape[0] > 1 else ""), q, k, v, keep, False, 0.3))
    # Grouped-query (4 query heads, 2 kv heads) and multi-query attention.
    q, k, v = qkv(4, 2, t, t, d, d)
    out.append(("gqa_causal", q, k, v, None, True, 0.35))
    q, k, v = qkv(4, 1, t, t, d, d)
    keep = h.bools((b, 1, 1, t), 0.7)
    keep[..., 0] = True
    out.append(("mqa_bool_mask", q, k, v, keep, False, 0.35))
    return out


def attention_text(op, operands, mask, causal, scale, types, results, rng=None, dropout_p=0.0):
    text = "%s = fuse.%s %s" % (", ".join(r[0] for r in results), op, operands)
    if mask is not None:
        text += " mask(%s)" % mask
    if rng:
        text += " rng(%s, %s)" % rng
    if causal:
        text += " causal"
    text += " scale = %s" % fnum(scale)
    if dropout_p:
        text += " dropout_p = %s" % fnum(dropout_p)
    text += " : (%s) -> (%s)" % (", ".join(types), ", ".join(T(r[2], r[1]) for r in results))
    return text


def attention_cases(h):
    fam = "attention"
    for dtype in ("f32", "bf16"):
        for label, q, k, v, mask, causal, scale in attention_configs(h, dtype):
            mdtype = None if mask is None else ("i1" if mask.dtype == bool else dtype)
            o, lse = attention_forward(q, k, v, mask, causal, scale)
            args = [(dtype, q), (dtype, k), (dtype, v)] + ([(mdtype, mask)] if mask is not None else [])
            types = [T(a[1].shape, a[0]) for a in args]
            h.case(fam, "sdpa", "%s %s" % (dtype, label), args,
                   [attention_text("scaled_dot_product_attention", "%a0, %a1, %a2",
                                   "%a3" if mask is not None else None, causal, scale, types,
                                   [("%o", dtype, o.shape), ("%l", "f32", lse.shape)])],
                   [("%o", dtype, o, "sdpa.output"), ("%l", "f32", lse, "sdpa.logsumexp")], kind="comp")

            # Backward, from the NumPy forward's output and log-sum-exp.
            do = h.normal(o.shape, dtype)
            dq, dk, dv = attention_backward(do, q, k, v, mask, causal, scale)
            args = [(dtype, do), (dtype, q), (dtype, k), (dtype, v), (dtype, round_to(dtype, o)),
                    ("f32", round_to("f32", lse))] + ([(mdtype, mask)] if mask is not None else [])
            types = [T(a[1].shape, a[0]) for a in args]
            h.case(fam, "sdpa_backward", "%s %s" % (dtype, label), args,
                   [attention_text("scaled_dot_product_attention_backward", "%a0, %a1, %a2, %a3, %a4, %a5",
                                   "%a6" if mask is not None else None, causal, scale, types,
                                   [("%dq", dtype, q.shape), ("%dk", dtype, k.shape), ("%dv", dtype, v.shape)])],
                   [("%dq", dtype, dq, "sdpa_backward.dq"), ("%dk", dtype, dk, "sdpa_backward.dk"),
                    ("%dv", dtype, dv, "sdpa_backward.dv")], kind="comp")

    # Dropout, through the documented convention: score (b, h, i, j), linear
    # index n, is dropped iff philox uniform(seed, offset, n) < p, which a
    # fuse.random uniform of the score shape with the same seed and offset
    # returns; kept ones are scaled by 1 / (1 - p).
    dtype, p = "f32", 0.3
    b, hq, hkv, t, d = 2, 4, 2, 8, 8
    q, k, v = h.normal((b, hq, t, d), dtype), h.normal((b, hkv, t, d), dtype), h.normal((b, hkv, t, d), dtype)
    do = h.normal((b, hq, t, d), dtype)
    seed, offset = h.ints((), 0, 2**62), h.ints((), 0, 2**40)
    sshape = (b, hq, t, t)
    args = [(dtype, q), (dtype, k), (dtype, v), (dtype, do), ("i64", seed), ("i64", offset)]
    types = [T(a[1].shape, a[0]) for a in args[:3]]
    results = [("%o", dtype, q.shape), ("%l", "f32", q.shape[:3])]
    body = ["%%u = fuse.random uniform, %%a4, %%a5 : %s" % T(sshape, "f32"),
            attention_text("scaled_dot_product_attention", "%a0, %a1, %a2", None, True, 0.35,
                           types + ["tensor<i64>"] * 2, results, rng=("%a4", "%a5"), dropout_p=p),
            attention_text("scaled_dot_product_attention_backward", "%a3, %a0, %a1, %a2, %o, %l", None, True, 0.35,
                           [types[0]] + types + [types[0], T(q.shape[:3], "f32")] + ["tensor<i64>"] * 2,
                           [("%dq", dtype, q.shape), ("%dk", dtype, k.shape), ("%dv", dtype, v.shape)],
                           rng=("%a4", "%a5"), dropout_p=p)]
    all_results = [("%u", "f32", sshape)] + results + [("%dq", dtype, q.shape), ("%dk", dtype, k.shape),
                                                       ("%dv", dtype, v.shape)]
    outputs, error, repro = h.run("sdpa_dropout_f32", args, body, all_results)
    names = ["sdpa_dropout.output", "sdpa_dropout.logsumexp", "sdpa_dropout_backward.dq",
             "sdpa_dropout_backward.dk", "sdpa_dropout_backward.dv"]
    if error:
        for name in names:
            h.report(fam, name, "f32 causal p=0.3", False, error, repro)
        return
    _, u = decode(outputs[0])
    keep = u >= np.float32(p)
    o, lse = attention_forward(q, k, v, None, True, 0.35, keep, p)
    grads = attention_backward(do, q, k, v, None, True, 0.35, keep, p)
    refs = [(o, dtype), (lse, "f32")] + [(g, dtype) for g in grads]
    for name, got, (ref, dt) in zip(names, outputs[1:], refs):
        ok, detail = h.compare(got, dt, ref, TOLERANCES["comp"][dt])
        h.report(fam, name, "f32 causal p=0.3", ok, detail, None if ok else repro)


def cross_entropy_cases(h):
    fam = "cross_entropy"
    classes = 11
    configs = (
        # logits dtype, logits shape, label dtype, ignore_index, reduction
        ("f32", (3, 4, classes), "i64", None, "mean"),
        ("f32", (3, 4, classes), "i64", None, "none"),
        ("f32", (3, 4, classes), "i64", 0, "sum"),
        ("f32", (12, classes), "i32", -1, "mean"),
        ("bf16", (12, classes), "i32", -1, "mean"),
        ("bf16", (3, 4, classes), "i64", 5, "none"),
        ("bf16", (12, classes), "i64", None, "sum"),
    )
    for dtype, lshape, ltype, ignore, reduction in configs:
        x = h.normal(lshape, dtype, 2.0)
        labels = h.ints(lshape[:-1], 0, classes)
        ig = -100 if ignore is None else ignore
        if ignore is not None:
            labels.flat[::3] = ignore  # some ignored positions
            labels.flat[1] = 0 if ignore != 0 else 1
        attrs = ("" if ignore is None else " ignore_index = %d" % ignore)
        attrs += "" if reduction == "mean" and ignore is None else " reduction = %s" % reduction
        loss = cross_entropy(x, labels, ig, reduction)
        label = "%s[%s] ignore=%s %s" % (dtype, ltype, ig, reduction)
        h.case(fam, "cross_entropy", label, [(dtype, x), (ltype, labels)],
               ["%%r = fuse.cross_entropy %%a0, %%a1%s : (%s, %s) -> %s"
                % (attrs, T(lshape, dtype), T(labels.shape, ltype), T(loss.shape, dtype))],
               [("%r", dtype, loss)], kind="comp")
        g = h.normal(loss.shape, dtype, 1.0, 0.5)
        dx = cross_entropy_backward(g, x, labels, ig, reduction)
        h.case(fam, "cross_entropy_backward", label, [(dtype, g), (dtype, x), (ltype, labels)],
               ["%%r = fuse.cross_entropy_backward %%a0, %%a1, %%a2%s : (%s, %s, %s) -> %s"
                % (attrs, T(g.shape, dtype), T(lshape, dtype), T(labels.shape, ltype), T(lshape, dtype))],
               [("%r", dtype, dx)], kind="comp")


def fusion_cases(h):
    fam = "fusion"
    # Loop fusion: bias add then GELU (tanh); the sum is stored (rounded)
    # before the GELU reads it.
    for dtype in ("f32", "bf16"):
        x, bias = h.normal((4, 24), dtype, 2.0), h.normal((24,), dtype)
        tx, tb = T(x.shape, dtype), T(bias.shape, dtype)
        body = ["%%y = fuse.fusion loop (%%a0, %%a1) : (%s, %s) -> %s {" % (tx, tb, tx),
                "^bb0(%%x: %s, %%b: %s):" % (tx, tb),
                "  %%bb = fuse.broadcast_in_dim %%b, dims = [1] : (%s) -> %s" % (tb, tx),
                "  %%s = fuse.add %%x, %%bb : %s" % tx,
                "  %%g = fuse.gelu %%s, approximate = tanh : %s" % tx,
                "  fuse.yield %%g : %s" % tx,
                "}"]
        ref = gelu_tanh(round_to(dtype, x + bias))
        h.case(fam, "fusion_loop", dtype, [(dtype, x), (dtype, bias)], body, [("%y", dtype, ref)], kind="comp")
    # Row reduction with two results: row max and row sum of exp(x - max).
    for dtype in ("f32", "bf16"):
        x = h.normal((6, 20), dtype, 2.0)
        tx, tr = T(x.shape, dtype), T((6,), dtype)
        body = ["%%m, %%s = fuse.fusion row_reduction (%%a0) : (%s) -> (%s, %s) {" % (tx, tr, tr),
                "^bb0(%%x: %s):" % tx,
                "  %%mx = fuse.reduce max %%x, dims = [1] : (%s) -> %s" % (tx, tr),
                "  %%mb = fuse.broadcast_in_dim %%mx, dims = [0] : (%s) -> %s" % (tr, tx),
                "  %%d = fuse.sub %%x, %%mb : %s" % tx,
                "  %%e = fuse.exp %%d : %s" % tx,
                "  %%sm = fuse.reduce sum %%e, dims = [1] : (%s) -> %s" % (tx, tr),
                "  fuse.yield %%mx, %%sm : %s, %s" % (tr, tr),
                "}"]
        mx = x.max(axis=1)
        e = round_to(dtype, np.exp(round_to(dtype, x - mx[:, None])))
        h.case(fam, "fusion_row_reduction", dtype, [(dtype, x)], body,
               [("%m", dtype, mx, "fusion_row_reduction.max"), ("%s", dtype, e.sum(axis=1), "fusion_row_reduction.sum")],
               kind="comp")
    # GEMM epilogue: matmul, bias add, ReLU; the product is stored first.
    for dtype in ("f32", "bf16"):
        a, w, c = h.normal((8, 16), dtype), h.normal((12, 16), dtype), h.normal((8, 12), dtype)
        ta, tw, tc = T(a.shape, dtype), T(w.shape, dtype), T(c.shape, dtype)
        body = ["%%y = fuse.fusion gemm_epilogue (%%a0, %%a1, %%a2) : (%s, %s, %s) -> %s {" % (ta, tw, tc, tc),
                "^bb0(%%a: %s, %%w: %s, %%c: %s):" % (ta, tw, tc),
                "  %%mm = fuse.matmul %%a, %%w transpose_rhs : (%s, %s) -> %s" % (ta, tw, tc),
                "  %%s = fuse.add %%mm, %%c : %s" % tc,
                "  %%r = fuse.relu %%s : %s" % tc,
                "  fuse.yield %%r : %s" % tc,
                "}"]
        ref = np.maximum(round_to(dtype, round_to(dtype, a @ w.T) + c), 0.0)
        h.case(fam, "fusion_gemm_epilogue", dtype, [(dtype, a), (dtype, w), (dtype, c)], body,
               [("%y", dtype, ref)], kind="comp")


def random_cases(h):
    """fuse.random through statistics and its documented counter layout."""
    fam = "random"
    seed, offset = h.ints((), 0, 2**62), h.ints((), 0, 2**40)
    n = 64 * 64
    big = 65536
    outs = [
        ("%u", "f32", (64, 64), "uniform f32"),
        ("%u2", "f32", (64, 64), "uniform f32 (again)"),
        ("%u1", "f32", (64, 64), "uniform f32 offset+1"),
        ("%ub", "bf16", (64, 64), "uniform bf16"),
        ("%uh", "f16", (big,), "uniform f16"),
        ("%n", "f32", (64, 64), "normal f32"),
        ("%n1", "f32", (64, 64), "normal f32 offset+1"),
        ("%nb", "bf16", (64, 64), "normal bf16"),
        ("%b3", "i1", (64, 64), "bernoulli i1 p=0.3"),
        ("%b5", "f32", (64, 64), "bernoulli f32 p=0.5"),
        ("%b8", "bf16", (64, 64), "bernoulli bf16 p=0.8"),
        ("%b0", "i1", (64,), "bernoulli i1 p=0"),
        ("%b1", "i1", (64,), "bernoulli i1 p=1"),
    ]
    body = [
        "%one = fuse.constant dense<1> : tensor<i64>",
        "%o1 = fuse.add %a1, %one : tensor<i64>",
        "%%u = fuse.random uniform, %%a0, %%a1 : %s" % T((64, 64), "f32"),
        "%%u2 = fuse.random uniform, %%a0, %%a1 : %s" % T((64, 64), "f32"),
        "%%u1 = fuse.random uniform, %%a0, %%o1 : %s" % T((64, 64), "f32"),
        "%%ub = fuse.random uniform, %%a0, %%a1 : %s" % T((64, 64), "bf16"),
        "%%uh = fuse.random uniform, %%a0, %%a1 : %s" % T((big,), "f16"),
        "%%n = fuse.random normal, %%a0, %%a1 : %s" % T((64, 64), "f32"),
        "%%n1 = fuse.random normal, %%a0, %%o1 : %s" % T((64, 64), "f32"),
        "%%nb = fuse.random normal, %%a0, %%a1 : %s" % T((64, 64), "bf16"),
        "%%b3 = fuse.random bernoulli, %%a0, %%a1, p = %s : %s" % (fnum(0.3), T((64, 64), "i1")),
        "%%b5 = fuse.random bernoulli, %%a0, %%a1, p = %s : %s" % (fnum(0.5), T((64, 64), "f32")),
        "%%b8 = fuse.random bernoulli, %%a0, %%a1, p = %s : %s" % (fnum(0.8), T((64, 64), "bf16")),
        "%%b0 = fuse.random bernoulli, %%a0, %%a1, p = %s : %s" % (fnum(0.0), T((64,), "i1")),
        "%%b1 = fuse.random bernoulli, %%a0, %%a1, p = %s : %s" % (fnum(1.0), T((64,), "i1")),
    ]
    outputs, error, repro = h.run("random", [("i64", seed), ("i64", offset)], body,
                                  [(o[0], o[1], o[2]) for o in outs])
    checks = OrderedDict()

    def stat(name, value, want, sigma):
        ok = abs(value - want) <= 5.0 * sigma
        return ok, "%s=%.5f (expected %.5f +- %.5f, 5 sigma)" % (name, value, want, 5.0 * sigma)

    if error:
        for o in outs:
            h.report(fam, "random", o[3], False, error, repro)
        return
    got = {}
    for o, arr in zip(outs, outputs):
        dtype, vals = decode(arr)
        if dtype != o[1] or vals.shape != o[2]:
            h.report(fam, "random", o[3], False, "got %s %s, expected %s %s" % (arr.dtype, arr.shape, o[1], o[2]),
                     repro)
            return
        got[o[0]] = vals

    def uniform_check(x, grid_bits):
        flat = x.reshape(-1)
        inside = (flat >= 0.0) & (flat < 1.0)
        if not inside.all():
            bad = flat[~inside]
            return False, "%d of %d values outside [0, 1) (e.g. %r)" % (bad.size, flat.size, bad[0])
        ok1, t1 = stat("mean", flat.mean(), 0.5, math.sqrt(1.0 / 12.0 / flat.size))
        ok2, t2 = stat("var", flat.var(), 1.0 / 12.0, math.sqrt((1.0 / 80.0 - 1.0 / 144.0) / flat.size))
        ok3 = True
        if grid_bits:
            scaled = flat * 2.0 ** grid_bits
            ok3 = bool(np.all(scaled == np.round(scaled)))
        return ok1 and ok2 and ok3, "%s %s%s" % (t1, t2, "" if ok3 else " not on the 2^-24 grid")

    checks["uniform f32"] = uniform_check(got["%u"], 24)
    checks["uniform bf16"] = uniform_check(got["%ub"], 0)
    checks["uniform f16"] = uniform_check(got["%uh"], 0)
    same = bool(np.array_equal(got["%u"], got["%u2"]))
    checks["uniform f32 deterministic"] = (same, "two identical ops %s" % ("agree" if same else "differ"))
    # Element i uses counter offset + i / 4: offset + 1 shifts by 4 elements.
    u, u1 = got["%u"].reshape(-1), got["%u1"].reshape(-1)
    shifted = bool(np.array_equal(u1[:-4], u[4:]))
    checks["uniform f32 counter layout"] = (
        shifted and not np.array_equal(u1, u),
        "offset+1 %s offset shifted by 4 elements" % ("equals" if shifted else "differs from"))
    nrm = got["%n"].reshape(-1)
    ok1, t1 = stat("mean", nrm.mean(), 0.0, 1.0 / math.sqrt(n))
    ok2, t2 = stat("std", nrm.std(), 1.0, 1.0 / math.sqrt(2.0 * n))
    ok3 = bool(np.all(np.abs(nrm) <= 5.7684))
    checks["normal f32"] = (ok1 and ok2 and ok3, t1 + " " + t2 + ("" if ok3 else " |x| > 5.7683"))
    n1 = got["%n1"].reshape(-1)
    shifted = bool(np.array_equal(n1[:-2], nrm[2:]))
    checks["normal f32 counter layout"] = (
        shifted, "offset+1 %s offset shifted by 2 elements" % ("equals" if shifted else "differs from"))
    nb = got["%nb"].reshape(-1)
    same = bool(np.array_equal(nb, round_to("bf16", nrm)))
    checks["normal bf16"] = (same, "%s the f32 draw rounded to bf16" % ("equals" if same else "differs from"))
    for key, p in (("%b3", 0.3), ("%b5", 0.5), ("%b8", 0.8)):
        x = got[key].reshape(-1).astype(np.float64)
        binary = bool(np.all((x == 0.0) | (x == 1.0)))
        ok, text = stat("mean", x.mean(), p, math.sqrt(p * (1.0 - p) / x.size))
        # Documented in kernels/philox.cuh: bernoulli is uniform < p.
        agree = bool(np.array_equal(x == 1.0, u < np.float32(p)))
        name = [o[3] for o in outs if o[0] == key][0]
        checks[name] = (ok and binary and agree, text + ("" if binary else " values not 0/1") +
                        ("" if agree else " not equal to uniform < p"))
    checks["bernoulli i1 p=0"] = (not got["%b0"].any(), "all false" if not got["%b0"].any() else "some true")
    checks["bernoulli i1 p=1"] = (bool(got["%b1"].all()), "all true" if got["%b1"].all() else "some false")
    for name, (ok, text) in checks.items():
        h.report(fam, "random", name, ok, text, None if ok else repro)


def main(argv):
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    fuse_run, scratch = argv[1], argv[2]
    os.makedirs(scratch, exist_ok=True)
    env_seed = os.environ.get("FUSE_TEST_SEED", "").strip()
    seed = int(env_seed) if env_seed else int(np.random.SeedSequence().entropy % (2**32))
    print("seed %d (%s; rerun with FUSE_TEST_SEED=%d to reproduce)"
          % (seed, "from FUSE_TEST_SEED" if env_seed else "fresh", seed))
    print("numpy %s, fuse-run %s, graphs and inputs in %s" % (np.__version__, fuse_run, scratch))
    sys.stdout.flush()
    h = Harness(fuse_run, scratch, seed)
    start = time.time()
    for cases in (elementwise_cases, compare_cases, select_cases, cast_cases, generator_cases, shape_cases,
                  reduction_cases, cumsum_cases, matmul_cases, normalization_cases, attention_cases, cross_entropy_cases,
                  fusion_cases, random_cases):
        try:
            cases(h)
        except Exception as e:  # pylint: disable=broad-except
            import traceback
            traceback.print_exc(file=sys.stdout)
            h.report(cases.__name__, cases.__name__, "-", False, "exception in the test: %r" % (e,))
    print("families: " + ", ".join("%s %d/%d" % (f, c[0], c[0] + c[1]) for f, c in h.families.items()))
    print("%d fuse-run graphs in %.1f s, seed %d" % (h.graphs, time.time() - start, seed))
    print("%d passed, %d failed" % (h.passed, h.failed))
    return 1 if h.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
