"""The lifetimes a training loop gives the torch.compile backend's graphs,
on the GPU: steps in a loop (outputs reused once nothing holds them, so the
runtime replays its CUDA graph), two micro-batches' forwards before their
backwards (gradients accumulating in param.grad as torch's do), a backward
that never comes, retain_graph=True, the forward under no_grad, and an
exception between forward and backward. Each against eager.

Tolerances: relative error <= 1e-4 on the f32 path (amp=None, TF32 off),
<= 2e-2 with bf16 mixed precision (include/fuse/Support/Comparison.h).
Needs torch 2.x and a CUDA GPU: skipped, with the reason, elsewhere.
"""

import pytest
import torch

from conftest import relative_error, requires_cuda, requires_torch2

from fuse import backend

pytestmark = [pytest.mark.gpu, requires_torch2, requires_cuda, pytest.mark.usefixtures("exact_f32")]

TOLERANCE = {None: 1e-4, "bf16": 2e-2}


def _model_and_batches(count):
    from fuse.harness.nanogpt import SIZES, NanoGPT
    torch.manual_seed(0)
    model = NanoGPT(SIZES["tiny"]).cuda()
    vocab = SIZES["tiny"].vocab_size
    batches = [(torch.randint(0, vocab, (2, 64), device="cuda"), torch.randint(0, vocab, (2, 64), device="cuda"))
               for _ in range(count)]
    return model, batches


def _grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters()}


def _accumulated_grads(model, batches):
    """Eager's gradients of `batches` as micro-batches, one backward each."""
    model.zero_grad(set_to_none=True)
    for idx, targets in batches:
        model(idx, targets).backward()
    return _grads(model)


def _assert_grads(model, expected, amp):
    for name, p in model.named_parameters():
        assert relative_error(p.grad, expected[name]) <= TOLERANCE[amp], name


def _compiled(model, amp, cache):
    return torch.compile(model, backend="fuse", options={"amp": amp, "fallback": "error", "cache_dir": cache})


@pytest.mark.parametrize("amp", [None, "bf16"])
def test_a_loop_of_steps_reuses_its_memory_and_matches_eager(amp, cache):
    model, batches = _model_and_batches(4)
    compiled = _compiled(model, amp, cache)
    allocated = []
    for idx, targets in batches:
        model.zero_grad(set_to_none=True)
        expected = model(idx, targets)
        expected.backward()
        expected_grads = _grads(model)
        model.zero_grad(set_to_none=True)
        loss = compiled(idx, targets)
        loss.backward()
        assert relative_error(loss, expected) <= TOLERANCE[amp]
        _assert_grads(model, expected_grads, amp)
        allocated.append(backend.stats["io"]["allocated"])
    # Every output of the third and fourth steps went into memory the
    # earlier steps had used and released (the same pointers: a replay).
    assert allocated[3] == allocated[1], allocated
    assert backend.stats["io"]["reused"] > 0


def test_two_micro_batches_forward_before_backward_accumulate(cache):
    model, batches = _model_and_batches(2)
    expected = _accumulated_grads(model, batches)
    compiled = _compiled(model, None, cache)
    for _ in range(2):  # the second time, with memory from the first to reuse
        model.zero_grad(set_to_none=True)
        losses = [compiled(idx, targets) for idx, targets in batches]  # both forwards first
        for loss in reversed(losses):
            loss.backward()
        _assert_grads(model, expected, None)


def test_a_backward_that_never_comes_and_retain_graph(cache):
    model, batches = _model_and_batches(1)
    idx, targets = batches[0]
    model.zero_grad(set_to_none=True)
    loss = model(idx, targets)
    loss.backward(retain_graph=True)
    loss.backward()
    expected = _grads(model)
    compiled = _compiled(model, None, cache)
    for _ in range(2):
        compiled(idx, targets)  # dropped: autograd frees what it saved
    with pytest.raises(ValueError):
        compiled(idx, targets)
        raise ValueError("between forward and backward")
    model.zero_grad(set_to_none=True)
    loss = compiled(idx, targets)
    loss.backward(retain_graph=True)
    loss.backward()
    _assert_grads(model, expected, None)


def test_the_forward_under_no_grad_matches_eager(cache):
    model, batches = _model_and_batches(1)
    idx, targets = batches[0]
    compiled = _compiled(model, None, cache)
    with torch.no_grad():
        expected = model(idx, targets)
        for _ in range(3):
            assert relative_error(compiled(idx, targets), expected) <= TOLERANCE[None]


def test_the_graphs_share_their_workspaces_and_train_in_the_slab(cache):
    # The forward and backward hold no arena or workspace of their own: the
    # workspaces are the backend's scratch memory, and the arena of each is
    # the forward call's slab (the forward leaves its saved values there,
    # the backward runs over them), given per run.
    model, batches = _model_and_batches(1)
    expected_model, _ = _model_and_batches(0)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        expected_model(*batches[0]).backward()
    compiled = _compiled(model, "bf16", cache)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        compiled(*batches[0]).backward()
    _assert_grads(model, _grads(expected_model), "bf16")
    graphs = [g for g in list(backend._COMPILED) if g.session_report is not None]
    assert len(graphs) >= 2
    assert sum(g.arena_per_run for g in graphs) >= 2  # the forward and its backward
    from fuse.runtime import _capi
    for graph in graphs:
        # What each holds itself: all but its workspaces (and its arena,
        # unless given per run), which the same executable loaded on its
        # own allocates.
        signature = graph.signature
        with _capi.Session.create(graph.executable, cache_dir=cache, arena_per_run=graph.arena_per_run) as alone:
            apart = alone.compile_report()["device_bytes"]
        own_arena = 0 if graph.arena_per_run else signature["arena_bytes"]
        shared = own_arena + signature["workspace_bytes"] + (32 << 20 if signature["gemms"] else 0)
        assert apart - graph.session_report["device_bytes"] == shared, graph.name
    assert backend.scratch_bytes() >= max((g.signature["arena_bytes"] for g in graphs if not g.arena_per_run),
                                          default=0)
    # The slab is as large as the larger arena of the two.
    assert backend.saved_bytes() >= max(g.signature["arena_bytes"] for g in graphs if g.arena_per_run)
    # Where the compile time went includes AOTAutograd's tracing and partition.
    assert backend.stats["seconds"]["aotautograd"] > 0


def test_gradients_live_in_the_slab_and_move_out_for_the_next_micro_batch(cache):
    # Two micro-batches a step: the first backward's gradients become
    # param.grad on the slab's memory; the second forward needs the slab,
    # so they move into memory of their own (param.grad a new tensor, the
    # same values) and the slab is reused, not a second one taken.
    model, batches = _model_and_batches(2)
    expected = _accumulated_grads(model, batches)
    earlier = set(backend._SLAB_POOLS)  # other tests' graphs
    compiled = _compiled(model, None, cache)
    slabs = []
    for set_to_none in (True, True, True, False, False):
        model.zero_grad(set_to_none=set_to_none)
        for idx, targets in batches:
            compiled(idx, targets).backward()
        _assert_grads(model, expected, None)
        ours = [pool for pool in list(backend._SLAB_POOLS) if pool not in earlier]
        slabs.append(sum(len(pool.free) + len(pool.retired) for pool in ours))
    assert slabs[1:] == [1, 1, 1, 1], slabs
    # One micro-batch: the gradients stay on the slab they were left in,
    # with no memory of their own.
    model.zero_grad(set_to_none=True)
    compiled(*batches[0]).backward()
    in_slab = [n for n, p in model.named_parameters()
               if p.grad.untyped_storage().nbytes() > p.grad.numel() * p.grad.element_size()]
    assert len(in_slab) == len(list(model.parameters())), in_slab
