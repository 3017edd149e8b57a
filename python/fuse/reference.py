"""PyTorch's answer for an exported step, saved for `fuse-run`.

`save_io(step, prefix)` runs the step eagerly (CPU, float32) and writes
`prefix.inputs.npz` (one array per graph argument, by its fuse.name) and
`prefix.expected.npz` (one array per result), so that

    fuse-run GRAPH.mlir --inputs prefix.inputs.npz --expected prefix.expected.npz

checks the exported graph against PyTorch on the same inputs.
"""

import numpy as np
import torch


def to_numpy(tensor):
    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        raise ValueError("bf16 arrays are not written by the reference; export float32 models")
    return tensor.numpy()


def save_io(step, prefix):
    """Writes the step's inputs and PyTorch's outputs; returns both paths."""
    expected = step.run_eager()
    inputs_path, expected_path = f"{prefix}.inputs.npz", f"{prefix}.expected.npz"
    np.savez(inputs_path, **{k: to_numpy(v) for k, v in step.inputs_by_name().items()})
    np.savez(expected_path, **{k: to_numpy(v) for k, v in expected.items()})
    return inputs_path, expected_path
