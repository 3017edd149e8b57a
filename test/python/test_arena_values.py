"""Saved values that stay in the arena between a forward and its backward
(fuse.in_arena, fuse.arena_offset), on the CPU: the exporter writes the
attributes, the memory plan chooses and records the forward's offsets, the
backward is planned around the values at those offsets, and the compiled
signature says where each is. The GPU runs are in test_backend_lifetimes_gpu.py."""

import torch

import fuse
from fuse.dynamo import _graph_rng
from fuse.exporter._tracing import trace


def forward(x):
    saved = torch.exp(x)
    return (saved * x).sum(), saved


def backward(saved, grad):
    return saved * grad


def test_the_forward_leaves_what_it_saves_in_its_arena_where_its_plan_chose(tmp_path):
    x = torch.randn(64, 64)
    text, _ = _graph_rng.export(trace(forward, [x]), ["x"], "forward", results_in_arena={1})
    assert "fuse.in_arena" in text
    compiled = fuse.compile(text, arch="sm_90a", cache_dir=tmp_path, amp="none")
    loss, saved = compiled.outputs
    assert loss.arena_offset is None and saved.arena_offset is not None
    assert saved.arena_offset % 256 == 0
    assert saved.arena_offset + saved.bytes <= compiled.arena_bytes
    assert compiled.arena_per_run
    assert f"(in the arena at byte {saved.arena_offset})" in compiled.plan
    assert "copy to result 1" not in compiled.plan


def test_the_backward_finds_saved_values_at_their_offsets_and_reuses_the_bytes(tmp_path):
    saved, grad = torch.randn(64, 64), torch.randn(64, 64)
    text, _ = _graph_rng.export(trace(backward, [saved, grad]), ["saved", "grad"], "backward",
                                arena_offsets={"saved": 4096})
    assert 'fuse.arena_offset = 4096 : i64' in text
    compiled = fuse.compile(text, arch="sm_90a", cache_dir=tmp_path, amp="none")
    assert compiled.inputs[0].arena_offset == 4096 and compiled.inputs[1].arena_offset is None
    # The arena reaches past the value it was given; nothing else is needed.
    assert compiled.arena_bytes == 4096 + 64 * 64 * 4
    assert "arena+4096" in compiled.plan


def test_a_graph_without_values_in_the_arena_keeps_an_arena_of_its_own(tmp_path):
    x = torch.randn(8, 8)
    text, _ = _graph_rng.export(trace(forward, [x]), ["x"], "plain")
    compiled = fuse.compile(text, arch="sm_90a", cache_dir=tmp_path, amp="none")
    assert not compiled.arena_per_run
    assert all(spec.arena_offset is None for spec in compiled.inputs + compiled.outputs)


def test_an_input_returned_as_it_is_is_never_marked_for_the_arena():
    # Only a value the graph computes can be left in its arena.
    x = torch.randn(8, 8)
    text, _ = _graph_rng.export(trace(lambda x: (x.exp(), x), [x]), ["x"], "returns_input",
                                results_in_arena={0, 1})
    results = text.split("->", 1)[1].split("{\n", 1)[0]
    assert results.count("fuse.in_arena") == 1
