"""Where one `compile_step` call of a harness workload spends its GPU time.

Builds the workload as bench/run.py does (same seed, bf16, the recipe's
optimizer, clipping and accumulation), compiles it with `fuse.compile_step`
and runs Fuse's profiler on one call (one micro-batch). With accumulation
the profile lists the update's kernels, each returning at once: the
profiler's graph records an event before every step, which a CUDA graph
conditional node cannot hold, so it launches them, where the step's own
graph leaves them out on all but the last micro-batch.
Prints the time per kind and the slowest kernels; with -o, saves the
profile (schema fuse-profile/1).

    python3 bench/profile/step_breakdown.py bert-hf -o bert_hf_profile.json
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a built-in workload (gpt2, bert-b4, bert-hf, ...) or module:function")
    parser.add_argument("--config", choices=["full", "tiny"], default="full")
    parser.add_argument("--top", type=int, default=25, help="slowest kernels to list (default 25)")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("-o", "--output", help="write the profile JSON here")
    args = parser.parse_args(argv)

    import torch
    import fuse
    from fuse.harness import workloads
    try:
        workload = workloads.resolve(args.model, args.config)
    except ValueError as error:
        sys.exit(f"step_breakdown.py: {error}")
    if not torch.cuda.is_available():
        sys.exit("step_breakdown.py: needs a CUDA GPU (torch sees none)")
    if workload.preload is not None:
        workload.preload()
    torch.manual_seed(0)
    built = workload.build(seed=0, device="cuda")
    model = built.model.train()
    batch = built.training_batches()[0]
    options = {}
    if built.recipe is not None:
        options = dict(optimizer=built.recipe.build_optimizer(model), max_grad_norm=built.recipe.max_grad_norm,
                       accumulation_steps=built.accumulation_steps)
    step = fuse.compile_step(model, built.loss_fn, batch, amp="bf16", **options)
    report = step.profile(*batch, iterations=args.iterations)
    kernels = [s for s in report.steps if isinstance(s["time_ms"], (int, float))]
    total = sum(s.time_ms for s in kernels)
    print(f"{args.model} ({args.config}): {len(kernels)} steps, {total:.3f} ms of kernels, "
          f"step {report.step_ms:.3f} ms on {report.device}")
    for kind, ms in report.time_by_kind().items():
        print(f"  {kind:<24} {ms:8.3f} ms  {100 * ms / total:5.1f}%")
    print(f"the {args.top} slowest:")
    for s in report.top(args.top):
        label = (s["label"] or "")[:70]
        print(f"  #{s.index:<5} {s.kind:<16} {s.time_ms:7.4f} ms  {s.name[:40]:<40} {label}")
    if args.output:
        report.save_json(args.output)
    step.close()


if __name__ == "__main__":
    main()
