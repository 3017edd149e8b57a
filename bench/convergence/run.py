"""Convergence evidence: one training run in eager PyTorch (bf16 autocast)
and through fuse.compile_step, from the same initial weights, seed and
batches, with the per-step losses of both in one JSON and one plot.

  gpt   a nanoGPT-style model (GPT-2 124M shapes with --config full; vocab
        256) trained byte-level on the Python standard library's sources
        (what every Debian machine ships): AdamW (weight decay 0.1 on
        matrices), linear warm-up then cosine decay, clipping at 1.0. Final
        metric: the mean training loss of the last 50 steps (the issue asks
        within 1% of eager's).
  bert  BERT-style sequence classification fine-tuned with the HuggingFace
        Trainer's defaults: dropout 0.1, AdamW with decay groups (none on
        biases and LayerNorm weights), linear warm-up and decay, clipping
        1.0, 4 micro-batches a step. The task can be learned: is token 5
        more frequent than token 6 in the sequence? Final metric: accuracy
        on 512 held-out sequences. Needs transformers.

    python3 bench/convergence/run.py                       # both runs, GPU
    python3 bench/convergence/run.py --runs gpt --config tiny --steps 20 --systems eager   # a CPU smoke test

Writes bench/convergence/<gpu>-<date>.json and latest.json as
{"gpu", "date", "torch", "command", "runs": [{"name", "steps", "eager_loss":
[...], "fuse_loss": [...], "eager_f32_loss": [...], "eager_final_metric",
"fuse_final_metric", "eager_f32_final_metric", "metric"}]} (None for a
system not run), and a PNG beside it when matplotlib is there. eager-f32 is
the same eager loop without autocast: the distance between the eager and
eager-f32 curves is what bf16 alone does to a run, the yardstick for the
distance between eager and Fuse.
"""

import argparse
import copy
import dataclasses
import datetime
import json
import math
import os
import sys
import sysconfig
import time

import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "python"))

# eager-f32, the same loop without autocast, is the yardstick of bf16's own
# noise: how far bf16 alone moves a curve from f32's.
SYSTEMS = ("eager", "fuse", "eager-f32")


def key(system):
    """The JSON key prefix of a system ("eager-f32" -> "eager_f32")."""
    return system.replace("-", "_")


# -- data -----------------------------------------------------------------------

def stdlib_bytes(limit=8 << 20):
    """The Python standard library's sources, concatenated, as uint8."""
    root = sysconfig.get_paths()["stdlib"]
    chunks, total = [], 0
    for folder, dirs, files in sorted(os.walk(root)):
        dirs[:] = sorted(d for d in dirs if d not in ("site-packages", "dist-packages", "test", "tests"))
        for name in sorted(files):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as f:
                    chunks.append(f.read())
                total += len(chunks[-1])
                if total >= limit:
                    return torch.frombuffer(bytearray(b"".join(chunks)[:limit]), dtype=torch.uint8)
    return torch.frombuffer(bytearray(b"".join(chunks)), dtype=torch.uint8)


def text_batches(data, steps, batch, length, seed):
    """The same `steps` batches of (inputs, next bytes) for every system."""
    generator = torch.Generator().manual_seed(seed)
    starts = torch.randint(0, len(data) - length - 1, (steps, batch), generator=generator)
    for row in starts:
        windows = torch.stack([data[s:s + length + 1] for s in row.tolist()]).long()
        yield windows[:, :-1].contiguous(), windows[:, 1:].contiguous()


def count_task(count, length, vocab, seed):
    """Sequences of tokens in [4, vocab) and labels: token 5 more frequent
    than token 6 (ties go to 0)."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(4, vocab, (count, length), generator=generator)
    # Make the counts close, so the task needs the whole sequence.
    ids[:, :6] = torch.tensor([5, 6, 5, 6, 5, 6])
    ids = ids[:, torch.randperm(length, generator=generator)]
    labels = ((ids == 5).sum(1) > (ids == 6).sum(1)).long()
    return ids, labels


# -- schedules --------------------------------------------------------------------

def warmup_cosine(step, warmup, total):
    if step < warmup:
        return (step + 1) / warmup
    progress = (step - warmup) / max(1, total - warmup)
    return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress))


def warmup_linear(step, warmup, total):
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


# -- runs -------------------------------------------------------------------------------

def gpt_run(args, device):
    from fuse.harness.nanogpt import SIZES, NanoGPT
    config = dataclasses.replace(SIZES[args.config], vocab_size=256)
    length = min(config.block_size, 256 if args.config == "full" else 64)
    batch = 16 if args.config == "full" else 4
    data = stdlib_bytes()
    torch.manual_seed(args.seed)
    initial = NanoGPT(config).state_dict()

    def train(system):
        torch.manual_seed(args.seed)
        model = NanoGPT(config)
        model.load_state_dict(initial)
        model.to(device).train()
        decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
        rest = [p for n, p in model.named_parameters() if p.dim() < 2]
        optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                       {"params": rest, "weight_decay": 0.0}], lr=6e-4, betas=(0.9, 0.95))
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: warmup_cosine(s, max(1, args.steps // 20), args.steps))
        losses = []
        step = None
        for inputs, targets in text_batches(data, args.steps, batch, length, args.seed):
            inputs, targets = inputs.to(device), targets.to(device)
            if system == "fuse":
                if step is None:
                    import fuse
                    step = fuse.compile_step(model, lambda loss: loss, ((inputs, targets), None),
                                             optimizer=optimizer, amp="bf16", max_grad_norm=1.0)
                loss = step((inputs, targets), None)
            else:
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=system == "eager"):
                    loss = model(inputs, targets)
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            schedule.step()
            losses.append(float(loss))
        return losses

    results = {system: train(system) for system in args.systems}
    tail = min(50, args.steps)
    final = {s: sum(v[-tail:]) / tail for s, v in results.items()}
    return {"name": "gpt-stdlib-bytes", "steps": args.steps, "metric": f"mean training loss of the last {tail} steps",
            "config": args.config, "batch": batch, "seq": length,
            **{f"{key(s)}_loss": results.get(s) for s in SYSTEMS},
            **{f"{key(s)}_final_metric": final.get(s) for s in SYSTEMS}}


def bert_run(args, device):
    try:
        from transformers import BertConfig, BertForSequenceClassification
    except ImportError as error:
        raise SystemExit(f"the bert run needs HuggingFace transformers ({error})")
    sizes = dict(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=1024) \
        if args.config == "full" else dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                           intermediate_size=128)
    vocab, length, micro, accumulation = 64, 64, 8, 4
    config = BertConfig(vocab_size=vocab, max_position_embeddings=length, num_labels=2, **sizes)
    torch.manual_seed(args.seed)
    initial = BertForSequenceClassification(config).state_dict()
    train_ids, train_labels = count_task(args.steps * accumulation * micro, length, vocab, args.seed)
    test_ids, test_labels = count_task(512, length, vocab, args.seed + 1)

    def loss_fn(output, labels):
        return F.cross_entropy(output.logits, labels)

    def train(system):
        torch.manual_seed(args.seed)
        model = BertForSequenceClassification(config)
        model.load_state_dict(initial)
        model.to(device).train()
        no_decay = ("bias", "LayerNorm.weight")
        groups = [{"params": [p for n, p in model.named_parameters() if not n.endswith(no_decay)],
                   "weight_decay": 0.01},
                  {"params": [p for n, p in model.named_parameters() if n.endswith(no_decay)],
                   "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=1e-4)
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda s: warmup_linear(s, max(1, args.steps // 10), args.steps))
        losses, step = [], None
        for i in range(args.steps):
            total = 0.0
            for j in range(accumulation):
                rows = slice((i * accumulation + j) * micro, (i * accumulation + j + 1) * micro)
                ids, labels = train_ids[rows].to(device), train_labels[rows].to(device)
                if system == "fuse":
                    if step is None:
                        import fuse
                        step = fuse.compile_step(model, loss_fn, ((ids,), labels), optimizer=optimizer,
                                                 amp="bf16", max_grad_norm=1.0, accumulation_steps=accumulation)
                    total += float(step((ids,), labels)) / accumulation
                else:
                    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=system == "eager"):
                        loss = loss_fn(model(ids), labels) / accumulation
                    loss.backward()
                    total += float(loss)
            if system != "fuse":
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
            schedule.step()
            losses.append(total)
        model.eval()
        with torch.no_grad():
            logits = model(test_ids.to(device)).logits
        return losses, float((logits.argmax(-1).cpu() == test_labels).float().mean())

    results = {system: train(system) for system in args.systems}
    return {"name": "bert-count-classification", "steps": args.steps, "metric": "held-out accuracy",
            "config": args.config, "micro_batch": micro, "accumulation_steps": accumulation, "seq": length,
            **{f"{key(s)}_loss": results[s][0] if s in results else None for s in SYSTEMS},
            **{f"{key(s)}_final_metric": results[s][1] if s in results else None for s in SYSTEMS}}


RUNS = {"gpt": gpt_run, "bert": bert_run}


def plot(results, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"no matplotlib: {path} not drawn (the JSON has every loss)", file=sys.stderr)
        return None
    figure, axes = plt.subplots(1, len(results["runs"]), figsize=(6 * len(results["runs"]), 4), squeeze=False)
    for axis, run in zip(axes[0], results["runs"]):
        for system in SYSTEMS:
            if run.get(f"{key(system)}_loss"):
                axis.plot(run[f"{key(system)}_loss"],
                          label=f"{system} (final {run[f'{key(system)}_final_metric']:.4g})", linewidth=0.8,
                          linestyle=":" if system == "eager-f32" else "-")
        axis.set_title(run["name"])
        axis.set_xlabel("step")
        axis.set_ylabel("loss")
        axis.legend()
    figure.suptitle(f"{results['gpu']}, {results['date']}: eager bf16 autocast against fuse.compile_step "
                    "(eager f32 dotted: bf16's own distance)")
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", default="gpt,bert", help="comma-separated: gpt, bert (default both)")
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help="comma-separated: eager (bf16 autocast), fuse, eager-f32 (no autocast: the yardstick "
                             "of bf16's noise) (default all three)")
    parser.add_argument("--config", choices=("full", "tiny"), default="full")
    parser.add_argument("--steps", type=int, default=None, help="default 1000 (gpt), 300 (bert)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("-o", "--output", default=None, help="default bench/convergence/<gpu>-<date>.json")
    args = parser.parse_args(argv)
    runs = [r.strip() for r in args.runs.split(",") if r.strip()]
    args.systems = [s.strip() for s in args.systems.split(",") if s.strip()]
    for name in runs:
        if name not in RUNS:
            parser.error(f"unknown run {name!r}; choose from {', '.join(RUNS)}")
    for system in args.systems:
        if system not in SYSTEMS:
            parser.error(f"unknown system {system!r}; choose from {', '.join(SYSTEMS)}")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if "fuse" in args.systems and device.type != "cuda":
        parser.error("the fuse system needs a CUDA GPU (run --systems eager for a CPU smoke test)")
    gpu = torch.cuda.get_device_name() if device.type == "cuda" else "cpu"
    date = datetime.date.today().isoformat()
    results = {"gpu": gpu, "date": date, "torch": torch.__version__,
               "command": "bench/convergence/run.py " + " ".join(argv if argv is not None else sys.argv[1:]),
               "runs": []}
    for name in runs:
        steps = args.steps
        run_args = copy.copy(args)
        run_args.steps = steps or (1000 if name == "gpt" else 300)
        started = time.perf_counter()
        results["runs"].append(RUNS[name](run_args, device))
        print(f"{name}: {time.perf_counter() - started:.0f} s; final "
              + ", ".join(f"{s} {results['runs'][-1][f'{key(s)}_final_metric']}" for s in args.systems), flush=True)
    folder = os.path.join(ROOT, "bench", "convergence")
    output = args.output or os.path.join(folder, f"{gpu.replace(' ', '-')}-{date}.json")
    with open(output, "w") as f:
        json.dump(results, f, indent=1)
    if args.output is None:
        with open(os.path.join(folder, "latest.json"), "w") as f:
            json.dump(results, f, indent=1)
    drawn = plot(results, os.path.splitext(output)[0] + ".png")
    print(f"wrote {output}" + (f" and {drawn}" if drawn else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
