"""Kernels PyTorch launches per training step, eager and torch.compile (Inductor),
and the step's peak allocated memory (torch.cuda.max_memory_allocated: weights,
gradients, optimizer state and activations).

The yardstick for fuse-pipeline's kernel count (fusion_counts.py beside this): the
same models, batches and precision as the full fixtures in test/graphs
(GPT-2 124M B8 T1024, BERT-large B4 T512, Llama 160M B8 T1024; bf16
autocast, as fuse's bf16 mixed precision), one step = forward, loss,
backward [, fused AdamW], gradients set to None after each step. Kernels are counted with the torch
profiler on a steady-state step (after warm-up and compilation): every CUDA
kernel event, memcpy and memset excluded. Needs a GPU.

    python3 bench/fusion/torch_kernel_counts.py [--models gpt2,bert,llama] [-o bench/fusion/torch_kernel_counts.json]
"""

import argparse
import json
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
from fuse import models  # noqa: E402


def make_step(spec, optimizer):
    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16):
            output = spec.module(**spec.inputs)
            loss = spec.loss_fn(output, *spec.targets.values())
        loss.backward()
        if optimizer is not None:
            optimizer.step()
        # Fresh gradients each step, as a step with an optimizer has: no
        # accumulation kernels.
        for parameter in spec.module.parameters():
            parameter.grad = None
        return loss
    return step


def count_kernels(step, steps=2):
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
    kernels = [e for e in prof.events()
               if e.device_type == torch.autograd.DeviceType.CUDA
               and not e.name.startswith(("Memcpy", "Memset"))]
    return len(kernels) / steps


def time_step(step, repeats=10):
    """Median milliseconds of `step` (CUDA events; fuse.compare's timer)."""
    from fuse import compare
    return compare._time_steps(step, repeats)[0]


def prepare(name, backend, with_optimizer, batch=None):
    """The full-config model on the GPU (under torch.compile for "inductor")
    and its step function."""
    spec = models.build(name, "full", batch=batch)
    spec.module.cuda().train()
    spec.inputs = {k: v.cuda() for k, v in spec.inputs.items()}
    spec.targets = {k: v.cuda() for k, v in spec.targets.items()}
    if backend == "inductor":
        spec.module = torch.compile(spec.module)
    optimizer = (torch.optim.AdamW(spec.module.parameters(), lr=1e-4, fused=True)
                 if with_optimizer else None)
    step = make_step(spec, optimizer)
    return spec, optimizer, step


def measure(name, backend, with_optimizer):
    spec, optimizer, step = prepare(name, backend, with_optimizer)
    started = time.time()
    step()
    torch.cuda.synchronize()
    first_step_s = time.time() - started
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    step()
    torch.cuda.synchronize()
    peak = torch.cuda.max_memory_allocated()
    result = dict(model=name, backend=backend, optimizer="AdamW(fused=True)" if with_optimizer else None,
                  kernels_per_step=count_kernels(step), step_ms=time_step(step),
                  peak_allocated_bytes=peak,
                  first_step_s=round(first_step_s, 1), description=spec.description)
    del spec, optimizer, step
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    return result


def measure_step(name, backend, batch=None, with_optimizer=False):
    """Median step time (ms) of `name` at the full config (batch overridden
    if given) under `backend`: the comparison point of bench/codegen."""
    spec, optimizer, step = prepare(name, backend, with_optimizer, batch)
    for _ in range(4):
        step()
    torch.cuda.synchronize()
    milliseconds = time_step(step)
    del spec, optimizer, step
    torch._dynamo.reset()
    torch.cuda.empty_cache()
    return milliseconds


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="gpt2,bert,llama", help="comma-separated: gpt2, bert, llama")
    parser.add_argument("--optimizer-models", default="gpt2",
                        help="models also measured with AdamW in the step (the fixtures with one)")
    parser.add_argument("-o", "--output", default=os.path.join(os.path.dirname(__file__), "torch_kernel_counts.json"))
    args = parser.parse_args()
    if not torch.cuda.is_available():
        sys.exit("torch_kernel_counts: no CUDA device; this benchmark counts GPU kernels")
    results = []
    for name in args.models.split(","):
        for with_optimizer in (False, True) if name in args.optimizer_models.split(",") else (False,):
            for backend in ("eager", "inductor"):
                print(f"{name} {backend} optimizer={with_optimizer} ...", file=sys.stderr, flush=True)
                results.append(measure(name, backend, with_optimizer))
    meta = dict(device=torch.cuda.get_device_name(), torch=torch.__version__,
                date=time.strftime("%Y-%m-%d"), precision="bf16 autocast", results=results)
    with open(args.output, "w") as f:
        json.dump(meta, f, indent=2)
    print(f"{'model':6} {'backend':9} {'optimizer':18} {'kernels':>8} {'step ms':>8} {'peak GB':>8} {'1st step s':>10}")
    for r in results:
        print(f"{r['model']:6} {r['backend']:9} {str(r['optimizer']):18} {r['kernels_per_step']:8.0f} "
              f"{r['step_ms']:8.2f} {r['peak_allocated_bytes'] / 1e9:8.2f} {r['first_step_s']:10.1f}")


if __name__ == "__main__":
    main()
