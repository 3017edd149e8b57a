#!/usr/bin/python3
"""Check the hand-written backward of gpt2_layer_graph.py by finite differences.

At a tiny config it generates the graph, draws random float32 inputs (saved
as an .npz named by fuse.name), runs fuse-run once for the analytic
gradients, and compares chosen entries of several parameter gradients and of
grad_x with central differences of L = sum(y * grad_y), each L evaluated by a
fuse-run on a perturbed input. It also checks the forward output y against a
float64 numpy reference of the block.

    check_gradients.py [--fuse-run PATH] [--batch 2 --seq 8 --width 16 --heads 2]
                       [--step 1e-2] [--rtol 1e-2] [--per-tensor 3] [--seed 0]

Prints each check and a final "N passed, M failed" line; exits 1 on failure.
"""

import argparse
import math
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpt2_layer_graph as gen  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def make_inputs(rng, B, T, C, F):
    """GPT-2-like but larger-than-init values, so every path carries signal."""
    inputs = {}
    for name, shape_fn in gen.PARAMS:
        shape = shape_fn(C, F)
        if name.startswith("ln_") and name.endswith(".weight"):
            a = 1.0 + 0.2 * rng.standard_normal(shape)
        elif name.endswith(".bias"):
            a = 0.1 * rng.standard_normal(shape)
        else:  # Linear weight [out, in]
            a = rng.standard_normal(shape) / math.sqrt(shape[1])
        inputs[name] = a.astype(np.float32)
    inputs["x"] = rng.standard_normal((B, T, C)).astype(np.float32)
    inputs["grad_y"] = rng.standard_normal((B, T, C)).astype(np.float32)
    return inputs


def reference_forward(p, B, T, C, H):
    """float64 numpy forward of the block, for checking y."""
    p = {k: v.astype(np.float64) for k, v in p.items()}
    D = C // H

    def ln(x, w, b):
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(var + gen.LN_EPS) * w + b

    def gelu(z):
        return 0.5 * z * (1 + np.tanh(gen.GELU_K * (z + gen.GELU_C * z ** 3)))

    x = p["x"]
    h = ln(x, p["ln_1.weight"], p["ln_1.bias"])
    qkv = h @ p["attn.c_attn.weight"].T + p["attn.c_attn.bias"]
    q, k, v = (qkv[..., i * C:(i + 1) * C].reshape(B, T, H, D).transpose(0, 2, 1, 3) for i in range(3))
    s = q @ k.transpose(0, 1, 3, 2) / math.sqrt(D)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    s = np.exp(s - s.max(-1, keepdims=True))
    a = (s / s.sum(-1, keepdims=True)) @ v
    a = a.transpose(0, 2, 1, 3).reshape(B, T, C)
    r = x + a @ p["attn.c_proj.weight"].T + p["attn.c_proj.bias"]
    h2 = ln(r, p["ln_2.weight"], p["ln_2.bias"])
    f = gelu(h2 @ p["mlp.c_fc.weight"].T + p["mlp.c_fc.bias"])
    return r + f @ p["mlp.c_proj.weight"].T + p["mlp.c_proj.bias"]


class Runner:
    def __init__(self, fuse_run, graph, workdir):
        self.fuse_run, self.graph, self.workdir = fuse_run, graph, workdir
        self.calls = 0

    def run(self, inputs):
        self.calls += 1
        inp = os.path.join(self.workdir, "in.npz")
        out = os.path.join(self.workdir, "out.npz")
        np.savez(inp, **inputs)
        proc = subprocess.run([self.fuse_run, self.graph, "--inputs", inp, "--dump-outputs", out],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            sys.exit(f"fuse-run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        with np.load(out) as z:
            return [z[f"out{i}"] for i in range(len(z.files))]

    def loss(self, inputs):
        y = self.run(inputs)[0]
        return float(np.sum(y.astype(np.float64) * inputs["grad_y"].astype(np.float64)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--fuse-run", default=os.path.join(ROOT, "build", "bin", "fuse-run"))
    ap.add_argument("--batch", type=int, default=2)
    ap.add_argument("--seq", type=int, default=8)
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--heads", type=int, default=2)
    ap.add_argument("--step", type=float, default=1e-2)
    ap.add_argument("--rtol", type=float, default=1e-2)
    ap.add_argument("--atol", type=float, default=None,
                    help="absolute floor (default: rtol x the tensor's largest gradient / 10)")
    ap.add_argument("--per-tensor", type=int, default=3, help="random entries per tensor (plus its largest)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep", help="keep the graph and inputs in this directory")
    a = ap.parse_args()

    B, T, C, H = a.batch, a.seq, a.width, a.heads
    F = 4 * C
    rng = np.random.default_rng(a.seed)
    workdir = a.keep or tempfile.mkdtemp(prefix="gpt2_gradcheck_")
    os.makedirs(workdir, exist_ok=True)
    graph = os.path.join(workdir, "graph.mlir")
    text, _ = gen.build(B, T, C, H, F)
    with open(graph, "w") as f:
        f.write(text)
    inputs = make_inputs(rng, B, T, C, F)
    runner = Runner(a.fuse_run, graph, workdir)
    outputs = runner.run(inputs)
    np.savez(os.path.join(workdir, "inputs.npz"), **inputs)
    print(f"config B={B} T={T} C={C} H={H} F={F}; graph {graph}; step {a.step}, rtol {a.rtol}")

    passed = failed = 0

    def report(ok, line):
        nonlocal passed, failed
        passed += ok
        failed += not ok
        print(("PASS  " if ok else "FAIL  ") + line)

    # Forward output against float64 numpy.
    y_ref = reference_forward(inputs, B, T, C, H)
    err = float(np.max(np.abs(outputs[0] - y_ref)))
    scale = float(np.max(np.abs(y_ref)))
    report(err <= 1e-4 * max(scale, 1.0), f"y vs numpy float64 reference: max abs err {err:.3e} (max |y| {scale:.3g})")

    # Analytic gradients: out1 = grad x, out2.. = params in argument order.
    analytic = {"x": outputs[1]}
    for (name, _), g in zip(gen.PARAMS, outputs[2:]):
        analytic[name] = g
    names = ["x"] + [name for name, _ in gen.PARAMS]
    for name in names:
        grad = analytic[name]
        assert grad.shape == inputs[name].shape, (name, grad.shape, inputs[name].shape)
        gmax = float(np.max(np.abs(grad)))
        atol = a.atol if a.atol is not None else a.rtol * gmax / 10
        flat_idx = list(rng.choice(grad.size, size=min(a.per_tensor, grad.size), replace=False))
        largest = int(np.argmax(np.abs(grad)))
        if largest not in flat_idx:
            flat_idx.append(largest)
        for fi in flat_idx:
            idx = np.unravel_index(int(fi), grad.shape)
            base = inputs[name]
            plus, minus = base.copy(), base.copy()
            plus[idx] += np.float32(a.step)
            minus[idx] -= np.float32(a.step)
            # The perturbation actually applied in f32.
            h2 = float(np.float64(plus[idx]) - np.float64(minus[idx]))
            lp = runner.loss({**inputs, name: plus})
            lm = runner.loss({**inputs, name: minus})
            fd = (lp - lm) / h2
            an = float(grad[idx])
            diff = abs(fd - an)
            ok = diff <= a.rtol * max(abs(fd), abs(an)) + atol
            rel = diff / max(abs(fd), abs(an), 1e-30)
            report(ok, f"d L / d {name}{list(map(int, idx))}: analytic {an:+.6e}  fd {fd:+.6e}  "
                       f"abs err {diff:.2e}  rel err {rel:.2e}")

    print(f"{passed} passed, {failed} failed  ({runner.calls} fuse-run calls; files in {workdir})")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
