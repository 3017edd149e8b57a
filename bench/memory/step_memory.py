"""Where one training step's device memory goes, per system (GPU).

    python3 bench/memory/step_memory.py gpt2 [--mode infer] [--systems inductor,fuse-compile,fuse-step] [-o out.json]
    PYTHONPATH=bench/zoo python3 bench/memory/step_memory.py models:gemma --mode infer --systems eager,fuse-compile

For each system, in a process of its own (the harness's runner), the
harness's training (or inference) step of a built-in model (bench/run.py's
names) or of a module:function workload (the zoo's models) is run three
times and then once more, measured:
  saved_bytes        what autograd keeps for the backward: the distinct
                     storages the step's saved tensors live in
                     (torch.autograd.graph.saved_tensors_hooks; for Fuse's
                     torch.compile backend, its slab), and the largest of
                     them by shape and dtype
  allocated_*        torch's allocator: before the step, after the forward
                     (when backward() is called) and its peak over the step
  device_used        cudaMemGetInfo in use above the process's start, after
                     the step (torch's cached blocks, Fuse's arena and
                     workspaces, CUDA graph pools included)
  fuse_slab_bytes, fuse_scratch_bytes
                     the backend's slabs (backend.saved_bytes()) and shared
                     workspaces (backend.scratch_bytes())
  output_bytes       inference: the bytes of the step's result (the logits)
compile_step (fuse-step) saves nothing through autograd: its arena shows in
device_used. FUSE_DUMP_DIR set: Fuse writes each graph it compiles there
(`fuse-translate --emit-plan` then shows what its arena holds). This is a diagnostic, not a harness row: bench/run.py measures
the peaks that the README reports.
"""

import argparse
import collections
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))

SYSTEMS = ("eager", "inductor", "inductor-reduce-overhead", "fuse-compile", "fuse-step")


def measure(spec, system, mode="train"):
    """One system's figures (run in a process of its own)."""
    import torch
    from fuse.harness import systems, workloads
    torch.cuda.init()
    built = workloads.resolve(spec, "full").build(0, "cuda")
    free_at_start = torch.cuda.mem_get_info()[0]
    prepared = systems.prepare(system, mode, built, None)
    for _ in range(3):
        prepared.step()
    torch.cuda.synchronize()
    if mode == "infer":
        return _measure_infer(spec, system, built, prepared, free_at_start)

    storages, shapes = {}, collections.Counter()

    def pack(tensor):
        storage = tensor.untyped_storage()
        if storage.data_ptr() not in storages:
            storages[storage.data_ptr()] = storage.nbytes()
            shapes[(tuple(tensor.shape), str(tensor.dtype).replace("torch.", ""))] += 1
        return tensor

    marks = {}
    backward = torch.Tensor.backward

    def marked_backward(self, *args, **kwargs):
        torch.cuda.synchronize()
        marks["after_forward"] = torch.cuda.memory_allocated()
        return backward(self, *args, **kwargs)

    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    torch.Tensor.backward = marked_backward
    try:
        with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
            prepared.step()
        torch.cuda.synchronize()
    finally:
        torch.Tensor.backward = backward
    row = {"model": spec, "system": system, "saved_bytes": sum(storages.values()), "saved_storages": len(storages),
           "allocated_before": before, "allocated_after_forward": marks.get("after_forward"),
           "allocated_peak": torch.cuda.max_memory_allocated(),
           "device_used": free_at_start - torch.cuda.mem_get_info()[0],
           "parameter_bytes": sum(p.numel() * p.element_size() for p in built.model.parameters())}
    _add_fuse_figures(row, system)
    largest = []
    for (shape, dtype), count in shapes.items():
        numel = 1
        for size in shape:
            numel *= size
        element = torch.empty((), dtype=getattr(torch, dtype)).element_size()
        largest.append({"shape": list(shape), "dtype": dtype, "count": count, "bytes": numel * element * count})
    row["saved_by_shape"] = sorted(largest, key=lambda entry: -entry["bytes"])[:20]
    prepared.close()
    return row


def _add_fuse_figures(row, system):
    if system == "fuse-compile":
        from fuse import backend
        row.update(fuse_slab_bytes=backend.saved_bytes(), fuse_scratch_bytes=backend.scratch_bytes())


def _measure_infer(spec, system, built, prepared, free_at_start):
    """An inference step's figures: nothing is saved; what the step returns
    and what the allocator and Fuse hold around it."""
    import torch
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    result = prepared.step()
    torch.cuda.synchronize()
    row = {"model": spec, "system": system, "mode": "infer", "saved_bytes": 0, "saved_storages": 0,
           "allocated_before": before, "allocated_after_forward": torch.cuda.memory_allocated(),
           "allocated_peak": torch.cuda.max_memory_allocated(),
           "device_used": free_at_start - torch.cuda.mem_get_info()[0],
           "parameter_bytes": sum(p.numel() * p.element_size() for p in built.model.parameters()),
           "output_bytes": result.numel() * result.element_size() if isinstance(result, torch.Tensor) else None}
    _add_fuse_figures(row, system)
    del result
    prepared.close()
    return row


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", help="a bench/run.py model name (gpt2, nanogpt, llama, bert-b4, bert-b32) "
                        "or module:function (PYTHONPATH=bench/zoo: models:gemma)")
    parser.add_argument("--mode", choices=("train", "infer"), default="train")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help=f"comma-separated, of {', '.join(SYSTEMS)} (default all)")
    parser.add_argument("-o", "--output", help="write the rows here as JSON")
    args = parser.parse_args(argv)
    systems = [s for s in args.systems.split(",") if s]
    unknown = sorted(set(systems) - set(SYSTEMS))
    if unknown:
        parser.error(f"unknown system(s) {unknown}; known: {', '.join(SYSTEMS)}")
    # Asked in a child: a process that touched CUDA cannot fork measuring ones.
    from fuse.harness.runner import gpu_name, run_in_child
    gpu = gpu_name()
    if gpu is None:
        sys.exit("step_memory: no CUDA device; this diagnostic measures device memory")
    rows = []
    for system in systems:
        row = run_in_child(measure, args.model, system, args.mode)
        rows.append(row)
        if "error" in row:
            print(f"{args.model} {system}: FAILED: {row['error']}", flush=True)
            continue
        gb = lambda value: f"{value / 1e9:.2f}" if value is not None else "-"  # noqa: E731
        print(f"{args.model} {system}: saved {gb(row['saved_bytes'])} GB in {row['saved_storages']} storages, "
              f"allocated {gb(row['allocated_before'])} before / {gb(row['allocated_after_forward'])} after the "
              f"forward / {gb(row['allocated_peak'])} peak, device {gb(row['device_used'])} GB"
              + (f", Fuse slab {gb(row['fuse_slab_bytes'])} and scratch {gb(row['fuse_scratch_bytes'])} GB"
                 if "fuse_slab_bytes" in row else "")
              + (f", output {gb(row['output_bytes'])} GB" if row.get("output_bytes") else ""), flush=True)
    if args.output:
        with open(args.output, "w") as handle:
            json.dump({"model": args.model, "gpu": gpu, "rows": rows}, handle, indent=1)
    return 0 if all("error" not in row for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
