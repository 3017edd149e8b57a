"""Every zoo model (bench/zoo: HuggingFace classes Fuse was not written for),
in its tiny config, takes a training step through
`torch.compile(backend="fuse")` with nothing falling back to eager: the
stranger's door, on the GPU. Where the model draws no dropout its loss and
gradients match eager autocast's; with dropout (each system draws its own
masks) the step must give a finite loss and finite gradients for every
parameter eager gives one. The full-sized rows are bench/zoo's; these catch
a model that stops compiling (whisper and t5 once failed inside the
backend's saved-value bookkeeping) before a benchmark run does."""

import math
import pathlib

import pytest
import torch

from conftest import load_file_module, relative_error, requires_cuda, requires_torch2, requires_transformers
from fuse.harness import systems, workloads

ZOO = pathlib.Path(__file__).resolve().parents[2] / "bench" / "zoo"


zoo_models = load_file_module("zoo_run", ZOO / "run.py").load_models()
NAMES = sorted(zoo_models.MODELS)

# Loss and gradients of a model without dropout, against eager autocast's
# (both bf16): a few bf16 roundings apart.
LOSS_TOLERANCE = 2e-2
GRADIENT_TOLERANCE = 1e-1


def _train_step(system, workload):
    built = workload.build(0, "cuda")
    prepared = systems.prepare(system, "train", built, fuse_fallback="error")
    loss = prepared.step()
    torch.cuda.synchronize()
    grads = {name: p.grad.detach().clone() for name, p in built.model.named_parameters() if p.grad is not None}
    return float(loss), grads, built.stochastic


@requires_cuda
@requires_torch2
@requires_transformers
@pytest.mark.parametrize("name", NAMES)
def test_each_tiny_zoo_model_trains_through_the_backend(name):
    import torch._dynamo
    from fuse import backend
    workload = workloads.custom(f"zoo_models:{zoo_models.MODELS[name]}", "tiny", name=name)
    workloads.preload([workload])
    eager_loss, eager_grads, stochastic = _train_step("eager", workload)
    torch._dynamo.reset()
    compiled_before = backend.stats["compiled"]
    loss, grads, _ = _train_step("fuse-compile", workload)
    assert backend.stats["compiled"] > compiled_before, "no graph was compiled by Fuse"
    assert math.isfinite(loss), f"{name}: loss {loss}"
    assert set(grads) == set(eager_grads), f"{name}: gradients of {sorted(set(grads) ^ set(eager_grads))}"
    for parameter, grad in grads.items():
        assert torch.isfinite(grad).all(), f"{name}: NaN or inf in the gradient of {parameter}"
    if stochastic:
        return
    assert abs(loss - eager_loss) <= LOSS_TOLERANCE * abs(eager_loss), f"{name}: loss {loss} vs eager {eager_loss}"
    flat = torch.cat([grads[p].float().flatten() for p in sorted(grads)])
    eager_flat = torch.cat([eager_grads[p].float().flatten() for p in sorted(grads)])
    assert relative_error(flat, eager_flat) <= GRADIENT_TOLERANCE, name
