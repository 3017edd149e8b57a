"""The processes of the data-parallel tests: each function runs as one rank
(torch.multiprocessing.spawn calls it with the rank first), joins the group
through a file store in the test's temporary folder, and writes what it saw
to `<folder>/rank<R>.json` for the test to check. Collectives time out after
a minute, so a rank that waits for a peer that never comes fails instead of
hanging the suite.
"""

import datetime
import json
import os
import pathlib
import sys
import traceback

import torch
import torch.distributed as dist

# NVLink multicast (NVLS) stays off in NCCL, PyTorch's symmetric memory and
# NVSHMEM, in every process started here: on GPUs other jobs share, a program
# that uses multicast can take the host's GPUs out of service, and plain
# all-reduces are all these tests need.
NCCL_ENVIRONMENT = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}

TIMEOUT = datetime.timedelta(seconds=60)


def _join(rank, world, folder, backend):
    os.environ.update(NCCL_ENVIRONMENT)
    if backend == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(backend, init_method=f"file://{folder}/store", rank=rank, world_size=world,
                            timeout=TIMEOUT)


def _report(folder, rank, result):
    pathlib.Path(folder, f"rank{rank}.json").write_text(json.dumps(result))


def _run_rank(rank, world, folder, backend, body):
    """Runs body(rank) in the group; its dict (or the error) goes to the
    rank's report."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    _join(rank, world, folder, backend)
    try:
        result = body(rank)
    except Exception as error:  # reported, then re-raised for spawn
        _report(folder, rank, {"error": f"{type(error).__name__}: {error}",
                               "traceback": traceback.format_exc()})
        raise
    finally:
        dist.destroy_process_group()
    _report(folder, rank, result)


# -- on the CPU (gloo): the agreement check ----------------------------------------------

def agreement(rank, world, folder, summaries):
    """Each rank offers summaries[rank] to check_ranks_agree."""
    from fuse.distributed import check_ranks_agree
    from fuse.errors import FuseError

    def body(rank):
        try:
            check_ranks_agree(None, summaries[rank])
        except FuseError as error:
            return {"raised": str(error)}
        return {"raised": None}

    _run_rank(rank, world, folder, "gloo", body)


# -- on two GPUs (NCCL) ------------------------------------------------------------------

def _small_gpt2(rank, seed=0):
    """A two-layer GPT-2 of width 256 (1.7M parameters, 7 MB: several of
    DDP's 1 MB buckets, the smallest dynamo's DDP optimizer accepts) with
    the same weights on every rank and this rank's own batch."""
    from transformers import GPT2Config, GPT2LMHeadModel
    from fuse import models
    torch.manual_seed(seed)
    config = GPT2Config(n_layer=2, n_embd=256, n_head=4, vocab_size=512, n_positions=64, resid_pdrop=0.0,
                        embd_pdrop=0.0, attn_pdrop=0.0, activation_function="gelu_pytorch_tanh")
    model = GPT2LMHeadModel(config).float()
    model.config._attn_implementation = "sdpa"
    generator = torch.Generator().manual_seed(100 + rank)
    ids = torch.randint(0, 512, (2, 33), generator=generator).cuda()
    inputs, targets = {"input_ids": ids[:, :-1].contiguous()}, [ids[:, 1:].contiguous()]
    return model.cuda().train(), inputs, targets, models._causal_lm_loss


def _copy(model):
    import copy
    return copy.deepcopy(model)


def _grads(model):
    return {n: p.grad.detach().double().cpu() for n, p in model.named_parameters()}


def _relative_errors(got, expected):
    """Per tensor ‖a − b‖/‖b‖ (absolute where the reference is ~0)."""
    errors = {}
    for name, e in expected.items():
        g = got[name]
        if not torch.isfinite(g).all():
            errors[name] = float("inf")
            continue
        norm = float(e.norm())
        errors[name] = float((g - e).norm()) / (norm if norm > 1e-12 else 1.0)
    return errors


def equivalence(rank, world, folder, cache):
    """Eager DDP against torch.compile(DDP, backend="fuse") and against
    compile_step(process_group=...), gradients and three AdamW steps."""
    from torch.nn.parallel import DistributedDataParallel as DDP
    import fuse
    from fuse import backend

    def body(rank):
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = False
        model, inputs, targets, loss_fn = _small_gpt2(rank)
        result = {}

        # Eager DDP: the reference gradients (averaged over the ranks).
        eager = DDP(_copy(model), device_ids=[rank], bucket_cap_mb=1)
        loss = loss_fn(eager(**inputs), *targets)
        loss.backward()
        reference = _grads(eager.module)
        result["eager_loss"] = float(loss)

        # torch.compile of the DDP model with the fuse backend: dynamo splits
        # the graph at DDP's bucket boundaries and compiles each piece.
        graphs_before, compiled_before = backend.stats["graphs"], backend.stats["compiled"]
        wrapped = DDP(_copy(model), device_ids=[rank], bucket_cap_mb=1)
        compiled = torch.compile(wrapped, backend="fuse",
                                 options={"amp": None, "fallback": "error", "cache_dir": cache})
        for _ in range(2):  # the second call replays what the first compiled
            wrapped.zero_grad(set_to_none=True)
            loss = loss_fn(compiled(**inputs), *targets)
            loss.backward()
        result["dynamo_loss"] = float(loss)
        result["dynamo_graphs"] = backend.stats["graphs"] - graphs_before
        result["dynamo_compiled"] = backend.stats["compiled"] - compiled_before
        result["dynamo_errors"] = _relative_errors(_grads(wrapped.module), reference)

        # compile_step with the process group: buckets all-reduced while the
        # backward runs.
        mine = _copy(model)
        step = fuse.compile_step(mine, loss_fn, (inputs, targets), amp=None, cache_dir=cache,
                                 process_group=dist.group.WORLD, bucket_cap_mb=1)
        for _ in range(2):
            loss = step(inputs, targets)
        result["step_loss"] = float(loss)
        result["step_errors"] = _relative_errors(_grads(mine), reference)
        result["buckets"] = len(step._reducer.buckets)
        result["bucket_description"] = step._reducer.describe()
        flats = [t.data_ptr() for t in step._reducer.flat]
        result["grads_in_buckets"] = all(
            any(f <= p.grad.data_ptr() < f + t.numel() * t.element_size() for f, t in zip(flats, step._reducer.flat))
            for p in mine.parameters())
        result["sparse_embeddings"] = [name for name, _ in step._sparse_inputs]
        # Without overlap (every bucket after the whole step) and with the
        # embedding's gradient all-reduced whole.
        serial = _copy(model)
        step = fuse.compile_step(serial, loss_fn, (inputs, targets), amp=None, cache_dir=cache,
                                 process_group=dist.group.WORLD, overlap_grad_reduce=False,
                                 sparse_embedding_grads=False)
        step(inputs, targets)
        result["serial_errors"] = _relative_errors(_grads(serial), reference)

        # Three AdamW steps: eager DDP against compile_step, the parameters after.
        def adamw(m):
            return torch.optim.AdamW(m.parameters(), lr=1e-3, weight_decay=0.1)

        eager_model = DDP(_copy(model), device_ids=[rank])
        eager_opt = adamw(eager_model)
        fuse_model = _copy(model)
        step = fuse.compile_step(fuse_model, loss_fn, (inputs, targets), optimizer=adamw(fuse_model), amp=None,
                                 cache_dir=cache, process_group=dist.group.WORLD)
        for _ in range(3):
            eager_opt.zero_grad(set_to_none=True)
            loss_fn(eager_model(**inputs), *targets).backward()
            eager_opt.step()
            step(inputs, targets)
        # All parameters as one vector: AdamW moves a parameter whose
        # gradient is rounding noise (attention's key bias, which the
        # softmax cancels) by about the learning rate whatever the noise's
        # size, so single small tensors differ between any two correct
        # implementations; the model as a whole must not.
        flat = lambda m: torch.cat([p.detach().double().flatten().cpu() for p in m.parameters()])
        result["adamw_errors"] = _relative_errors({"all parameters": flat(fuse_model)},
                                                  {"all parameters": flat(eager_model.module)})
        # Every rank holds the same parameters afterwards.
        flat = torch.cat([p.detach().flatten() for p in fuse_model.parameters()])
        gathered = [torch.empty_like(flat) for _ in range(world)]
        dist.all_gather(gathered, flat)
        result["ranks_identical"] = all(torch.equal(gathered[0], g) for g in gathered)
        torch.cuda.synchronize()
        return result

    _run_rank(rank, world, folder, "nccl", body)


def mismatch(rank, world, folder, cache, kind):
    """Ranks that would compile different steps: rank 1 takes a longer batch
    ("shape"), or fails to export ("failure"). Every rank must raise."""
    import fuse
    from fuse.errors import FuseError

    def body(rank):
        model, inputs, targets, loss_fn = _small_gpt2(rank)
        if rank == 1 and kind == "shape":
            inputs = {"input_ids": inputs["input_ids"][:, :16].contiguous()}
            targets = [targets[0][:, :16].contiguous()]
        if rank == 1 and kind == "failure":
            def loss_fn(output, targets):
                raise RuntimeError("this loss cannot be traced")
        try:
            fuse.compile_step(model, loss_fn, (inputs, targets), amp=None, cache_dir=cache,
                              process_group=dist.group.WORLD)
        except FuseError as error:
            return {"raised": str(error)}
        return {"raised": None}

    _run_rank(rank, world, folder, "nccl", body)
