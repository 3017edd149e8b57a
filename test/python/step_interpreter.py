"""Runs a `fuse.compile_step` TrainStep on the CPU reference interpreter, so
that everything the step does around the graph (binding the model's
tensors, optimizer state, learning rates, random seeds, accumulation,
gradient norms) is tested on a machine without a GPU.

`on_interpreter(step, tmp_path)` points the step at the CPU: each call
writes the bound inputs to an .npz (named by `fuse.name`), runs `fuse-run
--device=cpu` on the exported graph (after the loss-scaling pass for
amp="f16", which adds the scaler's inputs and results) and copies the
results back into the bound outputs, as the GPU runtime writes them. The
interpreter computes in f32 as the graph says (amp="bf16" only changes
what the GPU runs), so results match eager f32 PyTorch to 1e-4 or so.

A step with an in-graph optimizer also binds the 16-bit copies of its
weights (`amp_weight.<name>`, the pipeline's weight-copies), which the f32
graph does not read: each call checks that every copy the step binds equals
its weight rounded to bf16 (a stale copy is an error here), and writes back
the rounded updated weight as the copy, as the GPU step does.
"""

import subprocess

import numpy as np
import torch

from conftest import BIN

WEIGHT_COPY = "amp_weight."


def _graph_for_interpreter(step, tmp_path):
    path = tmp_path / "step.mlir"
    path.write_text(step.text)
    if "loss_scale" not in step.compiled.input_names:
        return path
    scaled = tmp_path / "step-f16.mlir"
    result = subprocess.run([str(BIN / "fuse-opt"), str(path), "--fuse-auto-mixed-precision=dtype=f16",
                             "-o", str(scaled)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return scaled


def on_interpreter(step, tmp_path):
    """Makes `step` run on the CPU reference interpreter; returns it."""
    compiled = step.compiled
    compiled.device = torch.device("cpu")
    compiled._require_session = lambda: compiled
    graph = _graph_for_interpreter(step, tmp_path)
    calls = [0]

    def launch(binding):
        calls[0] += 1
        inputs, outputs = tmp_path / f"in{calls[0]}.npz", tmp_path / f"out{calls[0]}.npz"
        bound = {spec.name: t for spec, t in zip(compiled.inputs, binding.inputs)}
        for name, copy in bound.items():
            if name.startswith(WEIGHT_COPY):
                weight = bound[name[len(WEIGHT_COPY):]]
                assert torch.equal(copy, weight.to(copy.dtype)), f"{name} is not its weight in {copy.dtype}"
        np.savez(inputs, **{name: t.detach().cpu().numpy() for name, t in bound.items()
                            if not name.startswith(WEIGHT_COPY)})
        result = subprocess.run([str(BIN / "fuse-run"), str(graph), "--device=cpu", "--allow-nan",
                                 "--inputs", str(inputs), "--dump-outputs", str(outputs)],
                                capture_output=True, text=True)
        assert result.returncode == 0, f"fuse-run failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
        with np.load(outputs) as arrays:
            results = [torch.from_numpy(np.array(arrays[spec.name[len(WEIGHT_COPY):]]
                                                 if spec.name.startswith(WEIGHT_COPY) else arrays[spec.name]))
                       for spec in compiled.outputs]
        for target, value in zip(binding.outputs, results):
            target.copy_(value.reshape(target.shape))

    step._launch = launch
    return step
