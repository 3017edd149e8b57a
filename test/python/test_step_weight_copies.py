"""The 16-bit weight copies a compiled training step keeps (the pipeline's
weight-copies, WeightCopies.cpp): which steps get them, that the binding
refreshes them when torch changes a weight, and that a graph reading the
copies computes what the graph casting its weights computes, on the CPU
reference interpreter."""

import copy
import subprocess

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import fuse
from conftest import BIN, relative_error, requires_cuda
from step_interpreter import on_interpreter


def _mlp(seed=0):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 4))


def _batch(seed=1):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(6, 8, generator=generator), torch.randint(0, 4, (6,), generator=generator)


def _step(model, optimizer=True, **options):
    adamw = torch.optim.AdamW(model.parameters(), lr=1e-2) if optimizer else None
    return fuse.compile_step(model, F.cross_entropy, _batch(), optimizer=adamw, arch="sm_90a", cache_dir=False,
                             progress=False, **options)


def _copies(step):
    return [n for n in step.compiled.input_names if n.startswith("amp_weight.")]


def test_steps_with_an_in_graph_optimizer_keep_copies_of_their_matmul_weights():
    step = _step(_mlp())
    assert _copies(step) == ["amp_weight.0.weight", "amp_weight.2.weight"]  # not the biases
    assert [n for n in step.compiled.output_names if n.startswith("amp_weight.")] == _copies(step)
    assert {s.name: s.dtype for s in step.compiled.inputs}["amp_weight.0.weight"] == "bf16"
    # The copies are updated in place, like the weights.
    names = step.compiled.input_names
    donated = {o: i for o, i in step.compiled.signature["donated"]}
    out = step.compiled.output_names.index("amp_weight.0.weight")
    assert names[donated[out]] == "amp_weight.0.weight"


@pytest.mark.parametrize("options", [dict(optimizer=False), dict(amp=None)])
def test_steps_without_an_update_in_the_graph_or_without_amp_keep_none(options):
    assert _copies(_step(_mlp(), **options)) == []


def test_copies_follow_the_changes_torch_makes_to_the_weights(tmp_path):
    """on_interpreter checks on every call that each copy bound is its weight
    in bf16; a copy left stale fails there."""
    model = _mlp()
    step = on_interpreter(_step(model, accumulation_steps=2), tmp_path)
    batch = _batch(2)
    step(batch)
    step(batch)  # the update: the step writes the weights and their copies
    with torch.no_grad():
        model[0].weight.mul_(0.5)  # an in-place change torch counts
    step(batch)
    model.load_state_dict(_mlp(seed=3).state_dict())
    step(batch)
    model[2].weight.data.add_(1.0)  # through .data: torch does not count it
    with pytest.raises(AssertionError, match="amp_weight.2.weight is not its weight"):
        step(batch)
    step.reload_weights()
    step(batch)


def _bf16_bits(tensor):
    return tensor.to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)


def _run_interpreter(graph, inputs, tmp_path, name):
    path = tmp_path / f"{name}-in.npz"
    out = tmp_path / f"{name}-out.npz"
    np.savez(path, **inputs)
    result = subprocess.run([str(BIN / "fuse-run"), str(graph), "--device=cpu", "--inputs", str(path),
                             "--dump-outputs", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    with np.load(out) as arrays:
        return {k: np.array(arrays[k]) for k in arrays.files}


@pytest.mark.parametrize("apply", [0.0, 1.0])
def test_reading_the_copies_computes_what_casting_the_weights_computes(apply, tmp_path):
    """The same bf16 step with and without weight-copies on the interpreter,
    on the same inputs (the copies filled from the weights): every result
    equal, and each copy returned is the updated weight in bf16 (the copy
    given, on a micro-batch that only accumulates)."""
    step = _step(_mlp(), accumulation_steps=2)
    source = tmp_path / "step.mlir"
    source.write_text(step.text)
    graphs = {}
    for copies in (False, True):
        graphs[copies] = tmp_path / f"amp-{copies}.mlir"
        option = "weight-copies=true" if copies else "weight-copies=false"
        result = subprocess.run([str(BIN / "fuse-opt"), str(source), f"--fuse-auto-mixed-precision={option}",
                                 "-o", str(graphs[copies])], capture_output=True, text=True)
        assert result.returncode == 0, result.stderr
    generator = torch.Generator().manual_seed(4)
    inputs = {}
    for spec in step.compiled.inputs:
        if spec.name.startswith("amp_weight."):
            continue
        if spec.dtype == "i64":
            inputs[spec.name] = torch.randint(0, 4, spec.shape, generator=generator).numpy()
        elif spec.name == "accumulate.apply":
            inputs[spec.name] = np.array(apply, dtype=np.float32)
        elif spec.name in ("step", "lr"):
            inputs[spec.name] = np.array(1.0 if spec.name == "step" else 1e-2, dtype=np.float32)
        else:
            inputs[spec.name] = torch.rand(spec.shape, generator=generator).numpy()
    cast = _run_interpreter(graphs[False], inputs, tmp_path, "cast")
    copied_inputs = dict(inputs)
    for name in _copies(step):
        copied_inputs[name] = _bf16_bits(torch.from_numpy(inputs[name[len("amp_weight."):]]))
    copied = _run_interpreter(graphs[True], copied_inputs, tmp_path, "copied")
    assert set(copied) == set(cast) | set(_copies(step))
    for name, value in cast.items():
        assert np.array_equal(value, copied[name], equal_nan=True), name
    for name in _copies(step):
        weight = name[len("amp_weight."):]
        expected = _bf16_bits(torch.from_numpy(copied[weight]))
        assert np.array_equal(copied[name].view(np.uint16), expected), name
        if apply == 0.0:
            assert np.array_equal(copied[name].view(np.uint16), copied_inputs[name]), name


@requires_cuda
@pytest.mark.parametrize("accumulation_steps", [1, 3])
def test_gpu_step_reading_its_copies_tracks_eager_autocast(accumulation_steps, tmp_path):
    """bf16 steps with AdamW on the GPU against eager autocast, update by
    update, with the weights halved by torch between two updates: after
    every update each copy is exactly its weight in bf16 (the update wrote
    it), and the losses follow eager's (a stale copy after the halving
    would not)."""
    model = _mlp().cuda()
    eager = copy.deepcopy(model)
    make = lambda m: torch.optim.AdamW(m.parameters(), lr=1e-2, weight_decay=0.1)  # noqa: E731
    fuse_opt, eager_opt = make(model), make(eager)
    generator = torch.Generator().manual_seed(5)
    micro = [(torch.randn(6, 8, generator=generator).cuda() * 3, torch.randint(0, 4, (6,), generator=generator).cuda())
             for _ in range(4 * accumulation_steps)]
    step = fuse.compile_step(model, F.cross_entropy, micro[0], optimizer=fuse_opt, cache_dir=tmp_path,
                             accumulation_steps=accumulation_steps)
    assert _copies(step) == ["amp_weight.0.weight", "amp_weight.2.weight"]
    for update in range(4):
        if update == 2:
            with torch.no_grad():
                for m in (model, eager):
                    m[0].weight.mul_(0.5)
        group = micro[accumulation_steps * update:accumulation_steps * (update + 1)]
        losses = [step(batch) for batch in group]
        eager_opt.zero_grad(set_to_none=True)
        for (x, y), loss in zip(group, losses):
            with torch.autocast("cuda", dtype=torch.bfloat16):
                expected = F.cross_entropy(eager(x), y)
            (expected / accumulation_steps).backward()
            assert relative_error(loss, expected.float()) < 3e-2, f"update {update}: loss {loss} against {expected}"
        eager_opt.step()
        for i, weight_copy in step._buffers["weight_copy"].items():
            assert torch.equal(weight_copy, step.params[i].detach().to(torch.bfloat16)), \
                f"update {update}: the copy of {step.param_names[i]}"
        for (name, p), q in zip(model.named_parameters(), eager.parameters()):
            assert relative_error(p, q) < 3e-2, f"update {update}: {name}"
