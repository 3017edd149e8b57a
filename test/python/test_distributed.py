"""Data-parallel pieces that need no GPU: how gradients are put into
buckets, and the check that every rank compiles the same step (two CPU
processes over gloo)."""

import json

import pytest
import torch

from fuse.distributed import BUCKET_ALIGN_BYTES, plan_buckets, rank_summary

needs_distributed = pytest.mark.skipif(not torch.distributed.is_available(),
                                       reason=f"this torch ({torch.__version__}) has no torch.distributed")


def _grad(output, numel, last_use, dtype="f32"):
    return dict(output=output, name=f"grad.p{output}", dtype=dtype, itemsize={"f32": 4, "bf16": 2}[dtype],
                numel=numel, last_use=last_use)


def test_buckets_follow_the_order_gradients_become_final():
    # Outputs in signature order; the backward finishes them in reverse.
    grads = [_grad(0, 1000, 40), _grad(1, 1000, 30), _grad(2, 1000, 20), _grad(3, 1000, 10)]
    buckets = plan_buckets(grads, cap_bytes=8192)
    assert [b.outputs for b in buckets] == [[3, 2], [1, 0]]
    assert [b.ready_step for b in buckets] == [20, 40]
    # Each gradient starts on an aligned element offset.
    align = BUCKET_ALIGN_BYTES // 4
    assert buckets[0].offsets == [0, -(-1000 // align) * align]
    assert buckets[0].numel == buckets[0].offsets[1] + 1000
    assert buckets[0].bytes == buckets[0].numel * 4


def test_a_gradient_larger_than_the_cap_gets_its_own_bucket():
    buckets = plan_buckets([_grad(0, 100, 1), _grad(1, 10 ** 6, 2), _grad(2, 100, 3)], cap_bytes=4096)
    assert [b.outputs for b in buckets] == [[0], [1], [2]]


def test_dtypes_never_share_a_bucket():
    buckets = plan_buckets([_grad(0, 10, 1), _grad(1, 10, 2, "bf16"), _grad(2, 10, 3, "bf16")], cap_bytes=1 << 20)
    assert [(b.dtype, b.outputs) for b in buckets] == [("f32", [0]), ("bf16", [1, 2])]


def test_bucket_cap_must_be_positive():
    with pytest.raises(ValueError, match="bucket size must be positive"):
        plan_buckets([_grad(0, 10, 1)], cap_bytes=0)


def test_rank_summary_names_what_differs():
    batch = [torch.zeros(2, 32, dtype=torch.int64)]
    a = rank_summary("func.func @step", {"amp": "bf16"}, ["w"], batch)
    b = rank_summary("func.func @step", {"amp": None}, ["w"], batch)
    assert a["graph"] != b["graph"] and a["batch"] == "int64 [2, 32]"
    assert json.loads(a["options"]) == {"amp": "bf16"}
    assert rank_summary(None, {}, [], [], ValueError("bad"))["error"] == "ValueError: bad"


def _spawn_agreement(tmp_path, summaries):
    import torch.multiprocessing as mp
    import distributed_workers
    mp.spawn(distributed_workers.agreement, args=(len(summaries), str(tmp_path), summaries), nprocs=len(summaries))
    return [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(len(summaries))]


@needs_distributed
def test_ranks_that_agree_go_on(tmp_path):
    same = {"graph": "abc", "batch": "int64 [2, 32]"}
    assert [r["raised"] for r in _spawn_agreement(tmp_path, [same, same])] == [None, None]


@needs_distributed
def test_every_rank_hears_of_a_mismatch(tmp_path):
    results = _spawn_agreement(tmp_path, [{"graph": "abc", "batch": "int64 [2, 32]"},
                                          {"graph": "def", "batch": "int64 [2, 16]"}])
    for result in results:
        message = result["raised"]
        assert message and "would compile different steps" in message
        assert "batch: rank 0 has int64 [2, 32], rank 1 has int64 [2, 16]" in message


@needs_distributed
def test_every_rank_hears_of_a_failure_on_one(tmp_path):
    results = _spawn_agreement(tmp_path, [{"graph": "abc"}, {"error": "ExportError: aten.cumsum"}])
    for result in results:
        assert "compile_step failed on 1 of 2 ranks" in result["raised"]
        assert "rank 1: ExportError: aten.cumsum" in result["raised"]


@needs_distributed
def test_a_process_group_without_torch_distributed_is_a_clear_error():
    import fuse
    from fuse.errors import FuseError
    model = torch.nn.Linear(4, 2)
    with pytest.raises(FuseError, match=r"needs torch.distributed initialized"):
        fuse.compile_step(model, lambda y, t: ((y - t) ** 2).mean(), (torch.zeros(3, 4), torch.zeros(3, 2)),
                          process_group=object())  # a group from a process that never joined
