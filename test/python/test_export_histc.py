"""torch.histc (a mixture of experts counting the tokens routed to each
expert, on integer ids) through Fuse's own decomposition: comparisons and a
sum, traced without histc's kernel (the CPU one takes no integers), checked
against torch.histc and, exported, on the CPU reference interpreter."""

import pytest
import torch

from conftest import graph_matches_torch
from fuse.exporter._tracing import _histc, trace


@pytest.mark.parametrize("bins, low, high", [(10, -1.0, 1.0), (7, 0, 0), (4, 0.5, 0.5)])
def test_the_decomposition_is_histc(bins, low, high):
    torch.manual_seed(0)
    for x in (torch.randn(1000), torch.randint(0, 5, (40,)).float(), torch.full((6,), 3.0)):
        assert torch.equal(_histc(x, bins, low, high), torch.histc(x, bins, low, high))


def expert_counts(ids):
    return torch.histc(ids, bins=8, min=0, max=7)


def test_integer_expert_ids_trace_and_export(tmp_path):
    ids = torch.randint(0, 8, (64, 2), dtype=torch.int32)
    graph = trace(expert_counts, [ids])
    assert "aten.histc.default" not in {str(n.target) for n in graph.graph.nodes}
    counts = graph(ids)
    assert counts.dtype == torch.int32
    assert torch.equal(counts, torch.histc(ids.float(), bins=8, min=0, max=7).to(torch.int32))
    assert "1 of 1 outputs match" in graph_matches_torch(graph, [ids], tmp_path, retrace=False)
