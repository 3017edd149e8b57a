"""Fuse's attention on the GPU against PyTorch's scaled_dot_product_attention
(forward and backward, torch on the same GPU): head dims 64 and 128, bf16 and
f16, causal, an additive padding mask, grouped-query heads, lengths that are
not multiples of the tiles. The graph is compiled with `fuse-pipeline{amp=none}`
so it keeps the dtype it is written in (the flash kernels take bf16 and f16)
and run with `fuse-run --device=cuda`; the outputs come back through .npz.
Needs a GPU, torch 2.x and numpy: skipped, with the reason, elsewhere."""

import os
import subprocess

import numpy as np
import pytest
import torch

from conftest import BIN, requires_torch2

requires_gpu = pytest.mark.skipif(not torch.cuda.is_available(),
                                  reason="needs a CUDA GPU (the GPU machine runs these)")

# (batch, query heads, kv heads, length, head dim, causal, mask)
CASES = [
    (2, 3, 3, 100, 64, True, False),
    (1, 4, 2, 77, 128, False, False),
    (2, 2, 2, 257, 64, False, True),
    (1, 4, 1, 130, 128, True, False),
]


def _mlir_type(shape, dtype):
    return "tensor<" + "x".join(str(s) for s in shape) + "x" + dtype + ">"


def _graph(b, hq, hkv, t, d, causal, mask, dtype):
    q, kv, lse = (b, hq, t, d), (b, hkv, t, d), (b, hq, t)
    tq, tkv, tl = _mlir_type(q, dtype), _mlir_type(kv, dtype), _mlir_type(lse, "f32")
    tm = _mlir_type((b, 1, t, t), dtype)
    flags = ("causal " if causal else "") + f"scale = {1.0 / d ** 0.5:.10e}"
    mask_arg = f", %m: {tm}" if mask else ""
    mask_use = " mask(%m)" if mask else ""
    mask_ty = f", {tm}" if mask else ""
    return f"""
func.func @attention(%q: {tq}, %k: {tkv}, %v: {tkv}, %dout: {tq}{mask_arg}) -> ({tq}, {tq}, {tkv}, {tkv}) {{
  %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v{mask_use} {flags} : ({tq}, {tkv}, {tkv}{mask_ty}) -> ({tq}, {tl})
  %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %dout, %q, %k, %v, %o, %lse{mask_use} {flags} : ({tq}, {tq}, {tkv}, {tkv}, {tq}, {tl}{mask_ty}) -> ({tq}, {tkv}, {tkv})
  return %o, %dq, %dk, %dv : {tq}, {tq}, {tkv}, {tkv}
}}
"""


def _to_npz_array(tensor, dtype):
    """fuse's .npz holds bf16 as 2-byte void patterns and f16 as float16."""
    if dtype == "bf16":
        bits = tensor.to(torch.bfloat16).contiguous().view(torch.int16).cpu().numpy()
        return bits.view(np.uint16).view("V2")
    return tensor.to(torch.float16).cpu().numpy()


def _from_npz_array(array):
    if array.dtype.kind == "V":
        bits = array.view(np.uint16).astype(np.uint32) << 16
        return torch.from_numpy(bits.view(np.float32).copy())
    return torch.from_numpy(array.astype(np.float32))


def _relative_error(actual, expected):
    return float((actual - expected).norm() / expected.norm().clamp_min(1e-12))


@requires_gpu
@requires_torch2
@pytest.mark.parametrize("dtype", ["bf16", "f16"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "b{}_hq{}_hkv{}_t{}_d{}{}{}".format(
    *c[:5], "_causal" if c[5] else "", "_mask" if c[6] else ""))
def test_attention_matches_torch_sdpa(case, dtype, tmp_path):
    b, hq, hkv, t, d, causal, with_mask = case
    torch_dtype = torch.bfloat16 if dtype == "bf16" else torch.float16
    generator = torch.Generator().manual_seed(hash(case) % 2**31)
    q = torch.randn(b, hq, t, d, generator=generator).to(torch_dtype)
    k = torch.randn(b, hkv, t, d, generator=generator).to(torch_dtype)
    v = torch.randn(b, hkv, t, d, generator=generator).to(torch_dtype)
    dout = torch.randn(b, hq, t, d, generator=generator).to(torch_dtype)
    arrays = {"arg0": q, "arg1": k, "arg2": v, "arg3": dout}
    mask = None
    if with_mask:
        # Padding: the last keys of the second sequence are masked out.
        mask = torch.zeros(b, 1, t, t)
        mask[-1, :, :, t - t // 3:] = float("-inf")
        mask = mask.to(torch_dtype)
        arrays["arg4"] = mask
    graph = tmp_path / "attention.mlir"
    graph.write_text(_graph(b, hq, hkv, t, d, causal, with_mask, dtype))
    inputs, outputs = tmp_path / "in.npz", tmp_path / "out.npz"
    np.savez(inputs, **{name: _to_npz_array(x, dtype) for name, x in arrays.items()})
    # The padding mask's -inf is meant: fuse-run refuses infinite inputs
    # unless told.
    run = subprocess.run([str(BIN / "fuse-run"), str(graph), "--device=cuda", "--iters=0",
                          "--pipeline=fuse-pipeline{amp=none}", f"--inputs={inputs}",
                          f"--dump-outputs={outputs}"] + (["--allow-inf"] if with_mask else []),
                         capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    with np.load(outputs) as result:
        got = [_from_npz_array(result[f"out{i}"]) for i in range(4)]

    # PyTorch on the GPU: grouped-query heads as repeated key/value heads.
    groups = hq // hkv
    qc, kc, vc = (x.cuda().requires_grad_() for x in (q, k, v))
    k_rep, v_rep = (x.repeat_interleave(groups, dim=1) for x in (kc, vc))
    out = torch.nn.functional.scaled_dot_product_attention(
        qc, k_rep, v_rep, attn_mask=None if mask is None else mask.cuda(),
        is_causal=causal, scale=1.0 / d ** 0.5)
    out.backward(dout.cuda())
    expected = [x.float().cpu() for x in (out.detach(), qc.grad, kc.grad, vc.grad)]
    for name, a, e in zip(("out", "dq", "dk", "dv"), got, expected):
        error = _relative_error(a, e)
        assert error <= 2e-2, f"{name}: relative error {error:.2e} against torch SDPA"
