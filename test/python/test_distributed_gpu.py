"""Data-parallel training on two GPUs (NCCL), one process per GPU:

- torch.compile(DistributedDataParallel(model), backend="fuse"): dynamo
  splits the graph at DDP's bucket boundaries and Fuse compiles each piece;
  the loss and the averaged gradients match eager DDP's.
- fuse.compile_step(..., process_group=...): gradients written into buckets
  that are all-reduced while the backward runs, and the token embedding's
  gradient exchanged as rows, match eager DDP's; so do they without the
  overlap and with the embedding all-reduced whole; three AdamW steps leave
  the same parameters as eager DDP with AdamW, bit-identical on both ranks.
- Ranks that would compile different steps (another batch shape, or an
  export that fails on one rank) raise FuseError on every rank, not a hang.

f32 (amp=None, TF32 off on both sides): relative error ≤ 1e-4 per tensor,
the f32 tolerance of every Fuse check (include/fuse/Support/Comparison.h;
docs/ARCHITECTURE.md says why): with TF32 off, only the order of summation
differs from eager DDP.
Needs two CUDA GPUs, torch 2.x and transformers: skipped, with the reason,
elsewhere.
"""

import importlib.util
import json

import pytest
import torch

from conftest import requires_torch2

pytestmark = [
    pytest.mark.gpu, requires_torch2,
    pytest.mark.skipif(torch.cuda.device_count() < 2,
                       reason=f"needs 2 CUDA GPUs of one host; this machine has {torch.cuda.device_count()}"),
    pytest.mark.skipif(importlib.util.find_spec("transformers") is None,
                       reason="needs HuggingFace transformers (on the GPU machine)"),
]

WORLD = 2
TOLERANCE = 1e-4


def _spawn(function, tmp_path, *args):
    import torch.multiprocessing as mp
    import distributed_workers
    mp.spawn(getattr(distributed_workers, function), args=(WORLD, str(tmp_path), *args), nprocs=WORLD)
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(WORLD)]


def _assert_within(errors, what):
    worst = max(errors, key=errors.get)
    assert errors[worst] <= TOLERANCE, f"{what}: {worst} differs from eager DDP by {errors[worst]:.3e}"


@pytest.fixture(scope="module")
def equivalence(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ddp")
    return _spawn("equivalence", folder, str(folder / "cache"))


def test_dynamo_ddp_with_the_fuse_backend_matches_eager_ddp(equivalence):
    for rank, result in enumerate(equivalence):
        assert abs(result["dynamo_loss"] - result["eager_loss"]) <= TOLERANCE * abs(result["eager_loss"])
        _assert_within(result["dynamo_errors"], f"rank {rank}, torch.compile(DDP, backend='fuse')")
        # DDP's small buckets split the model: more than one graph, all
        # compiled by Fuse.
        assert result["dynamo_graphs"] >= 2, result
        assert result["dynamo_compiled"] >= result["dynamo_graphs"], result


def test_compile_step_with_a_process_group_matches_eager_ddp(equivalence):
    for rank, result in enumerate(equivalence):
        assert abs(result["step_loss"] - result["eager_loss"]) <= TOLERANCE * abs(result["eager_loss"])
        _assert_within(result["step_errors"], f"rank {rank}, compile_step(process_group=...)")
        _assert_within(result["serial_errors"], f"rank {rank}, compile_step(overlap_grad_reduce=False, "
                                                "sparse_embedding_grads=False)")
        # The tied token embedding (512 rows, 2 x 64 looked up) is
        # exchanged as rows; the position embedding (64 rows) is not.
        assert result["sparse_embeddings"] == ["transformer.wte"], result
        assert result["buckets"] >= 2, result["bucket_description"]
        assert result["grads_in_buckets"], "param.grad must be a view of a bucket"


def test_adamw_steps_match_eager_ddp_on_every_rank(equivalence):
    for rank, result in enumerate(equivalence):
        _assert_within(result["adamw_errors"], f"rank {rank}, parameters after 3 AdamW steps")
        assert result["ranks_identical"]


@pytest.mark.parametrize("kind,message", [
    ("shape", "rank 1 has int64 [2, 16]"),
    ("failure", "this loss cannot be traced"),
])
def test_ranks_compiling_different_steps_all_raise(kind, message, tmp_path):
    for rank, result in enumerate(_spawn("mismatch", tmp_path, str(tmp_path / "cache"), kind)):
        assert result["raised"] and message in result["raised"], f"rank {rank}: {result}"
