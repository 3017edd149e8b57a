"""Random numbers in the graphs the torch.compile backend compiles (dropout).

AOTAutograd hands dropout over as `aten.native_dropout` (its mask a result
of the forward graph, saved for the backward's `native_dropout_backward`),
as its decomposition (`rand_like(x) > p`, then a select and a scale), or,
traced on the CPU, as `bernoulli_` on an empty tensor. The exporter maps
all three to `fuse.random` ops that draw from two graph inputs, `rng.seed`
and `rng.offset` (Philox4x32-10 keyed by the seed, counters from the
offset on), and counts the counters the graph draws.

Every call of such a graph gets fresh values in two 0-d i64 buffers of its
own (fixed addresses, so Fuse's captured CUDA graph replays with the new
values), drawn from torch's default generator of the device and advancing
it past those counters (`_step_rng.StepRandomness`, as compile_step does):
calls draw different masks, Fuse's bits never overlap torch's, and
`torch.manual_seed(s)` makes a run reproducible. The backward uses the
mask the forward returned, so both agree.

Attention dropout: Fuse's attention backward draws its mask again from the
forward's Philox state. The forward graph returns that state as the CUDA
attention op's RNG-state results (seed and offset, as i64), AOTAutograd
saves them for the backward graph, and the backward's attention takes them
as its `rng` operands (`_aten_nn.attention_backward`).
`rngprims.philox_rand` (AOTAutograd's functionalized RNG, off by default)
has no mapping: such ops run in torch (the per-op fallback).
"""


import torch

from ..exporter._fx_to_mlir import ArgSpec, Converter
from ..training._step_rng import StepRandomness

__all__ = ["RNG_INPUTS", "export", "bind", "GraphRandomness"]

RNG_INPUTS = ("rng.seed", "rng.offset")


def export(traced, arg_names, name, arena_offsets=None, results_in_arena=()):
    """(text, counters): `traced` in the fuse dialect, as
    `export_graph(traced, retrace=False, arg_names=..., name=...)` writes it,
    and the number of Philox counters its random ops draw.
    `arena_offsets` {argument name: byte offset} and `results_in_arena`
    (result indices): values found and left in the graph's arena."""
    offsets = arena_offsets or {}
    converter = Converter(traced, name, [ArgSpec(n, arena_offset=offsets.get(n)) for n in arg_names],
                          results_in_arena=results_in_arena)
    text = converter.run().render()
    counters = int(converter._rng_counter)
    return text, counters


def bind(compiled, counters):
    """GraphRandomness for a compiled graph that takes `rng.seed` and
    `rng.offset`, else None."""
    if not all(name in compiled.input_names for name in RNG_INPUTS):
        return None
    return GraphRandomness([compiled.input_names.index(name) for name in RNG_INPUTS], counters)


class GraphRandomness:
    """Puts the two RNG buffers, with fresh values, among a call's inputs."""

    def __init__(self, positions, counters):
        self.positions, self.counters = positions, int(counters)
        self.state = None

    @property
    def last(self):
        """(seed, offset) the last call drew, or None."""
        return self.state.last if self.state is not None else None

    def inputs(self, tensors, device):
        """`tensors` (the graph's other inputs, in order) with the seed and
        offset buffers inserted where the graph takes them, after drawing
        fresh values into them."""
        if self.state is None or self.state.device != device:
            seed = torch.zeros((), dtype=torch.int64, device=device)
            offset = torch.zeros((), dtype=torch.int64, device=device)
            self.state = StepRandomness(device, self.counters, seed, offset)
        self.state.draw()
        full = list(tensors)
        for position, buffer in sorted(zip(self.positions, (self.state.seed_buffer, self.state.offset_buffer)),
                                       key=lambda pair: pair[0]):
            full.insert(position, buffer)
        return full
