#!/usr/bin/python3
"""Emit one GPT-2 transformer block, forward and backward, as a fuse graph.

The function @gpt2_layer_train takes the block's 12 parameters (fuse.name =
the GPT-2 parameter names, Linear weights in PyTorch's [out, in] layout), the
input hidden states `x` and the upstream gradient `grad_y`, and returns

    y, grad_x, grad_<param> for the 12 parameters in argument order.

The backward is written by hand: matmuls with transpose flags for the linear
layers, fuse.scaled_dot_product_attention_backward for attention, and
primitives (reduce, broadcast_in_dim, mul, sub, tanh, ...) for layer_norm and
gelu(tanh), which have no backward op.

    gpt2_layer_graph.py [--batch B] [--seq T] [--width C] [--heads H]
                        [--mlp-ratio 4] [-o FILE]
"""

import argparse
import math
import sys

PARAMS = [
    # (fuse.name, shape as a function of C and the MLP width F)
    ("ln_1.weight", lambda C, F: [C]),
    ("ln_1.bias", lambda C, F: [C]),
    ("attn.c_attn.weight", lambda C, F: [3 * C, C]),
    ("attn.c_attn.bias", lambda C, F: [3 * C]),
    ("attn.c_proj.weight", lambda C, F: [C, C]),
    ("attn.c_proj.bias", lambda C, F: [C]),
    ("ln_2.weight", lambda C, F: [C]),
    ("ln_2.bias", lambda C, F: [C]),
    ("mlp.c_fc.weight", lambda C, F: [F, C]),
    ("mlp.c_fc.bias", lambda C, F: [F]),
    ("mlp.c_proj.weight", lambda C, F: [C, F]),
    ("mlp.c_proj.bias", lambda C, F: [C]),
]

LN_EPS = 1e-5
GELU_K = math.sqrt(2.0 / math.pi)
GELU_C = 0.044715


def ty(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def arr(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def flt(value):
    return f"{value:.17e}"


class Builder:
    """Collects ops in SSA form; each value is (name, shape)."""

    def __init__(self):
        self.lines = []
        self.counter = 0
        self.ops = 0

    def fresh(self, hint):
        self.counter += 1
        return f"%{hint}_{self.counter}"

    def emit(self, hint, text, shape):
        name = self.fresh(hint)
        self.lines.append(f"  {name} = {text}")
        self.ops += 1
        return (name, shape)

    def emit_multi(self, hints, text, shapes):
        names = [self.fresh(h) for h in hints]
        self.lines.append(f"  {', '.join(names)} = {text}")
        self.ops += 1
        return list(zip(names, shapes))

    def comment(self, text):
        self.lines.append(f"  // {text}")

    # Elementwise.
    def binary(self, op, a, b, hint=None):
        assert a[1] == b[1], (op, a, b)
        return self.emit(hint or op, f"fuse.{op} {a[0]}, {b[0]} : {ty(a[1])}", a[1])

    def add(self, a, b, hint=None):
        return self.binary("add", a, b, hint)

    def sub(self, a, b, hint=None):
        return self.binary("sub", a, b, hint)

    def mul(self, a, b, hint=None):
        return self.binary("mul", a, b, hint)

    def unary(self, op, a, hint=None):
        return self.emit(hint or op, f"fuse.{op} {a[0]} : {ty(a[1])}", a[1])

    def const(self, value, shape, hint="cst"):
        return self.emit(hint, f"fuse.constant dense<{flt(value)}> : {ty(shape)}", shape)

    def scale(self, a, value, hint=None):
        return self.mul(a, self.const(value, a[1]), hint)

    # Shape ops.
    def broadcast(self, a, dims, shape, hint="bcast"):
        return self.emit(hint, f"fuse.broadcast_in_dim {a[0]}, dims = {arr(dims)} : "
                               f"({ty(a[1])}) -> {ty(shape)}", list(shape))

    def reshape(self, a, shape, hint="reshape"):
        return self.emit(hint, f"fuse.reshape {a[0]} : ({ty(a[1])}) -> {ty(shape)}", list(shape))

    def transpose(self, a, perm, hint="transpose"):
        shape = [a[1][p] for p in perm]
        return self.emit(hint, f"fuse.transpose {a[0]}, permutation = {arr(perm)} : "
                               f"({ty(a[1])}) -> {ty(shape)}", shape)

    def slice(self, a, start, limit, hint="slice"):
        shape = [l - s for s, l in zip(start, limit)]
        stride = [1] * len(start)
        return self.emit(hint, f"fuse.slice {a[0]}, start = {arr(start)}, limit = {arr(limit)}, "
                               f"stride = {arr(stride)} : ({ty(a[1])}) -> {ty(shape)}", shape)

    def concat(self, values, dim, hint="concat"):
        shape = list(values[0][1])
        shape[dim] = sum(v[1][dim] for v in values)
        names = ", ".join(v[0] for v in values)
        types = ", ".join(ty(v[1]) for v in values)
        return self.emit(hint, f"fuse.concat dim({dim}) {names} : ({types}) -> {ty(shape)}", shape)

    def reduce(self, kind, a, dims, keepdim=False, hint=None):
        if keepdim:
            shape = [1 if d in dims else s for d, s in enumerate(a[1])]
        else:
            shape = [s for d, s in enumerate(a[1]) if d not in dims]
        kd = " keepdim" if keepdim else ""
        return self.emit(hint or f"r{kind}", f"fuse.reduce {kind} {a[0]}, dims = {arr(dims)}{kd} : "
                                             f"({ty(a[1])}) -> {ty(shape)}", shape)

    # Linear algebra.
    def matmul(self, a, b, transpose_lhs=False, transpose_rhs=False, hint="mm"):
        m = a[1][-1] if transpose_lhs else a[1][-2]
        n = b[1][-2] if transpose_rhs else b[1][-1]
        shape = list(a[1][:-2]) + [m, n]
        flags = (" transpose_lhs" if transpose_lhs else "") + (" transpose_rhs" if transpose_rhs else "")
        return self.emit(hint, f"fuse.matmul {a[0]}, {b[0]}{flags} : ({ty(a[1])}, {ty(b[1])}) -> {ty(shape)}",
                         shape)


def build(B, T, C, H, F):
    assert C % H == 0, "width must be a multiple of heads"
    D = C // H
    sm_scale = 1.0 / math.sqrt(D)
    g = Builder()

    args = []
    for name, shape_fn in PARAMS:
        ssa = "%" + name.replace(".", "_")
        args.append((ssa, shape_fn(C, F), name))
    args.append(("%x", [B, T, C], "x"))
    args.append(("%grad_y", [B, T, C], "grad_y"))
    P = {name: (ssa, shape) for ssa, shape, name in args}
    x = P["x"]
    dy = P["grad_y"]
    BTC = [B, T, C]

    def bias_bcast(b, width, hint):
        return g.broadcast(b, [2], [B, T, width], hint)

    def linear(inp, w, b, hint):
        out = g.matmul(inp, w, transpose_rhs=True, hint=hint + "_mm")
        return g.add(out, bias_bcast(b, w[1][0], hint + "_bias"), hint)

    def layer_norm(inp, w, b, hint):
        res = g.emit_multi(
            [hint, hint + "_mean", hint + "_rstd"],
            f"fuse.layer_norm {inp[0]} weight({w[0]}) bias({b[0]}) axis = 2 epsilon = {flt(LN_EPS)} : "
            f"({ty(inp[1])}, {ty(w[1])}, {ty(b[1])}) -> ({ty(inp[1])}, {ty([B, T, 1])}, {ty([B, T, 1])})",
            [inp[1], [B, T, 1], [B, T, 1]])
        return res

    def split_heads(t, hint):
        r = g.reshape(t, [B, T, H, D], hint + "_split")
        return g.transpose(r, [0, 2, 1, 3], hint + "_heads")

    def merge_heads(t, hint):
        r = g.transpose(t, [0, 2, 1, 3], hint + "_t")
        return g.reshape(r, [B, T, C], hint + "_merged")

    # ------------------------------------------------------------------ fwd
    g.comment("Forward: attention.")
    h1, mean1, rstd1 = layer_norm(x, P["ln_1.weight"], P["ln_1.bias"], "ln1")
    qkv = linear(h1, P["attn.c_attn.weight"], P["attn.c_attn.bias"], "qkv")
    q = split_heads(g.slice(qkv, [0, 0, 0], [B, T, C], "q"), "q")
    k = split_heads(g.slice(qkv, [0, 0, C], [B, T, 2 * C], "k"), "k")
    v = split_heads(g.slice(qkv, [0, 0, 2 * C], [B, T, 3 * C], "v"), "v")
    hd = [B, H, T, D]
    attn, lse = g.emit_multi(
        ["attn", "lse"],
        f"fuse.scaled_dot_product_attention {q[0]}, {k[0]}, {v[0]} causal scale = {flt(sm_scale)} : "
        f"({ty(hd)}, {ty(hd)}, {ty(hd)}) -> ({ty(hd)}, {ty([B, H, T])})",
        [hd, [B, H, T]])
    attn_merged = merge_heads(attn, "attn")
    proj = linear(attn_merged, P["attn.c_proj.weight"], P["attn.c_proj.bias"], "proj")
    resid = g.add(x, proj, "resid")

    g.comment("Forward: MLP.")
    h2, mean2, rstd2 = layer_norm(resid, P["ln_2.weight"], P["ln_2.bias"], "ln2")
    fc = linear(h2, P["mlp.c_fc.weight"], P["mlp.c_fc.bias"], "fc")
    act = g.emit("act", f"fuse.gelu {fc[0]}, approximate = tanh : {ty(fc[1])}", fc[1])
    mlp = linear(act, P["mlp.c_proj.weight"], P["mlp.c_proj.bias"], "mlp")
    y = g.add(resid, mlp, "y")

    # ------------------------------------------------------------------ bwd
    def linear_backward(dout, inp, w, hint):
        """out = inp @ w^T + b, inp [B,T,in], w [out,in], dout [B,T,out].
        Returns (d_inp, d_w, d_b)."""
        n_out, n_in = w[1]
        d_b = g.reduce("sum", dout, [0, 1], hint=hint + "_db")
        dout2 = g.reshape(dout, [B * T, n_out], hint + "_dout2d")
        inp2 = g.reshape(inp, [B * T, n_in], hint + "_in2d")
        d_w = g.matmul(dout2, inp2, transpose_lhs=True, hint=hint + "_dw")   # [out, in]
        d_inp = g.matmul(dout, w, hint=hint + "_dx")                         # [B,T,in]
        return d_inp, d_w, d_b

    def layer_norm_backward(dout, inp, w, mean, rstd, hint):
        """out = xhat * w + b, xhat = (inp - mean) * rstd over dim 2.
        dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))."""
        mean_b = g.broadcast(mean, [0, 1, 2], BTC, hint + "_mean_b")
        rstd_b = g.broadcast(rstd, [0, 1, 2], BTC, hint + "_rstd_b")
        xhat = g.mul(g.sub(inp, mean_b, hint + "_xc"), rstd_b, hint + "_xhat")
        d_w = g.reduce("sum", g.mul(dout, xhat, hint + "_dout_xhat"), [0, 1], hint=hint + "_dw")
        d_b = g.reduce("sum", dout, [0, 1], hint=hint + "_db")
        w_b = g.broadcast(w, [2], BTC, hint + "_w_b")
        dxhat = g.mul(dout, w_b, hint + "_dxhat")
        m1 = g.reduce("mean", dxhat, [2], keepdim=True, hint=hint + "_m1")
        m2 = g.reduce("mean", g.mul(dxhat, xhat, hint + "_dxhat_xhat"), [2], keepdim=True,
                      hint=hint + "_m2")
        m1_b = g.broadcast(m1, [0, 1, 2], BTC, hint + "_m1_b")
        m2_b = g.broadcast(m2, [0, 1, 2], BTC, hint + "_m2_b")
        t = g.sub(g.sub(dxhat, m1_b, hint + "_t0"), g.mul(xhat, m2_b, hint + "_xhat_m2"), hint + "_t1")
        d_x = g.mul(t, rstd_b, hint + "_dx")
        return d_x, d_w, d_b

    def gelu_tanh_backward(dout, z, hint):
        """gelu(z) = 0.5 z (1 + tanh(u)), u = k (z + c z^3);
        gelu'(z) = 0.5 (1 + t) + 0.5 z (1 - t^2) k (1 + 3 c z^2)."""
        s = z[1]
        z2 = g.mul(z, z, hint + "_z2")
        z3 = g.mul(z2, z, hint + "_z3")
        u = g.scale(g.add(z, g.scale(z3, GELU_C, hint + "_cz3"), hint + "_inner"), GELU_K, hint + "_u")
        t = g.unary("tanh", u, hint + "_t")
        one = g.const(1.0, s, hint + "_one")
        half = g.const(0.5, s, hint + "_half")
        left = g.mul(half, g.add(one, t, hint + "_1pt"), hint + "_left")
        sech2 = g.sub(one, g.mul(t, t, hint + "_t2"), hint + "_sech2")
        du = g.scale(g.add(one, g.scale(z2, 3.0 * GELU_C, hint + "_3cz2"), hint + "_dpoly"), GELU_K,
                     hint + "_du")
        right = g.mul(g.mul(g.mul(half, z, hint + "_hz"), sech2, hint + "_hzs"), du, hint + "_right")
        deriv = g.add(left, right, hint + "_deriv")
        return g.mul(dout, deriv, hint + "_dz")

    g.comment("Backward: MLP.")
    # y = resid + mlp
    d_act, d_mlp_w, d_mlp_b = linear_backward(dy, act, P["mlp.c_proj.weight"], "g_mlp")
    d_fc = gelu_tanh_backward(d_act, fc, "g_gelu")
    d_h2, d_fc_w, d_fc_b = linear_backward(d_fc, h2, P["mlp.c_fc.weight"], "g_fc")
    d_resid_ln, d_ln2_w, d_ln2_b = layer_norm_backward(d_h2, resid, P["ln_2.weight"], mean2, rstd2, "g_ln2")
    d_resid = g.add(dy, d_resid_ln, "g_resid")

    g.comment("Backward: attention.")
    # resid = x + proj
    d_attn_merged, d_proj_w, d_proj_b = linear_backward(d_resid, attn_merged, P["attn.c_proj.weight"], "g_proj")
    d_attn = split_heads(d_attn_merged, "g_attn")
    dq, dk, dv = g.emit_multi(
        ["g_q", "g_k", "g_v"],
        f"fuse.scaled_dot_product_attention_backward {d_attn[0]}, {q[0]}, {k[0]}, {v[0]}, {attn[0]}, {lse[0]} "
        f"causal scale = {flt(sm_scale)} : ({ty(hd)}, {ty(hd)}, {ty(hd)}, {ty(hd)}, {ty(hd)}, {ty([B, H, T])}) "
        f"-> ({ty(hd)}, {ty(hd)}, {ty(hd)})",
        [hd, hd, hd])
    d_qkv = g.concat([merge_heads(dq, "g_q"), merge_heads(dk, "g_k"), merge_heads(dv, "g_v")], 2, "g_qkv")
    d_h1, d_attn_w, d_attn_b = linear_backward(d_qkv, h1, P["attn.c_attn.weight"], "g_qkv")
    d_x_ln, d_ln1_w, d_ln1_b = layer_norm_backward(d_h1, x, P["ln_1.weight"], mean1, rstd1, "g_ln1")
    d_x = g.add(d_resid, d_x_ln, "g_x")

    grads = {
        "ln_1.weight": d_ln1_w, "ln_1.bias": d_ln1_b,
        "attn.c_attn.weight": d_attn_w, "attn.c_attn.bias": d_attn_b,
        "attn.c_proj.weight": d_proj_w, "attn.c_proj.bias": d_proj_b,
        "ln_2.weight": d_ln2_w, "ln_2.bias": d_ln2_b,
        "mlp.c_fc.weight": d_fc_w, "mlp.c_fc.bias": d_fc_b,
        "mlp.c_proj.weight": d_mlp_w, "mlp.c_proj.bias": d_mlp_b,
    }
    results = [y, d_x] + [grads[name] for name, _ in PARAMS]
    for (name, shape_fn), r in zip(PARAMS, results[2:]):
        assert r[1] == shape_fn(C, F), (name, r[1])

    header = (
        f"// One GPT-2 transformer block (pre-norm), forward and backward, f32.\n"
        f"// Generated by bench/interpreter/gpt2_layer_graph.py --batch {B} --seq {T} "
        f"--width {C} --heads {H} (MLP width {F}).\n"
        f"// Results: y, grad of x, then the gradients of the 12 parameters in\n"
        f"// argument order, for the upstream gradient grad_y (L = sum(y * grad_y)).\n"
    )
    sig_args = ",\n".join(f"    {ssa}: {ty(shape)} {{fuse.name = \"{name}\"}}" for ssa, shape, name in args)
    res_types = ", ".join(ty(r[1]) for r in results)
    out = [header, f"func.func @gpt2_layer_train(\n{sig_args}) -> ({res_types}) {{"]
    out += g.lines
    out.append(f"  return {', '.join(r[0] for r in results)} : {res_types}")
    out.append("}")
    return "\n".join(out) + "\n", g.ops + 1


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=1024)
    ap.add_argument("--width", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--mlp-ratio", type=int, default=4)
    ap.add_argument("-o", "--output", help="write here instead of stdout")
    a = ap.parse_args(argv)
    text, _ = build(a.batch, a.seq, a.width, a.heads, a.mlp_ratio * a.width)
    if a.output:
        with open(a.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
