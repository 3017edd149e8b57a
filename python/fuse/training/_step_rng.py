"""Random bits for a compiled training step (dropout, attention dropout).

A graph with random ops takes two i64 scalars, `rng.seed` and `rng.offset`:
its random ops draw Philox4x32-10 blocks keyed by the seed at counters
`offset`, `offset + 1`, ... (kernels/philox.cuh), `counters` of them in all
(the exporter counts them). Each call of the step writes fresh values into
the step's own buffers for these two inputs, so the captured CUDA graph
replays with new bits and the seed is never a constant of the graph.

The values come from torch's default generator of the step's device, so
`torch.manual_seed(s)` makes a run reproducible and the step's bits never
overlap torch's own random ops:

  - CUDA: torch's generator is Philox too, with a seed and an offset counted
    in 32-bit draws per thread (a multiple of 4; one Philox block is 4
    draws). The step takes `seed` and `offset / 4` and advances the
    generator's offset by `4 * counters`, as a torch kernel that drew that
    many blocks per thread would.
  - CPU (the reference interpreter): torch's CPU generator is a Mersenne
    twister with no offset; each call draws a fresh 63-bit seed from it and
    uses offset 0.
"""

import torch

_MASK64 = (1 << 64) - 1


def as_int64(value):
    """An unsigned 64-bit value as the int64 with the same bits (a seed set
    by torch.seed() can exceed 2^63; the graph reads the bits as uint64)."""
    value &= _MASK64
    return value - (1 << 64) if value >= 1 << 63 else value


class StepRandomness:
    """Draws (seed, offset) for each call of a step that uses `counters`
    Philox counters, and writes them into the step's two 0-d i64 buffers."""

    def __init__(self, device, counters, seed_buffer, offset_buffer):
        self.device, self.counters = device, int(counters)
        self.seed_buffer, self.offset_buffer = seed_buffer, offset_buffer
        self.last = None  # (seed, offset) of the last call, as the graph read them

    def draw(self):
        if self.device.type == "cuda":
            seed, offset = advance_philox(cuda_generator(self.device), self.counters)
        else:
            seed, offset = int(torch.randint(0, 2 ** 63 - 1, (), dtype=torch.int64)), 0
        self.seed_buffer.fill_(as_int64(seed))
        self.offset_buffer.fill_(offset)
        self.last = (as_int64(seed), offset)
        return self.last


def cuda_generator(device):
    index = device.index if device.index is not None else torch.cuda.current_device()
    return torch.cuda.default_generators[index]


def advance_philox(generator, counters):
    """(seed, first counter) for `counters` Philox blocks from a CUDA
    generator, whose offset is then advanced past them."""
    if hasattr(generator, "get_offset"):  # torch >= 2.1
        seed, offset = generator.initial_seed(), generator.get_offset()
    else:  # the state is the seed (uint64) and the offset (int64), 16 bytes
        seed, offset = (int(v) for v in generator.get_state().view(torch.int64))
    start = -(-offset // 4)  # torch keeps the offset a multiple of 4; round up if not
    end = 4 * (start + int(counters))
    if hasattr(generator, "set_offset"):
        generator.set_offset(end)
    else:
        generator.set_state(torch.tensor([as_int64(seed), end], dtype=torch.int64).view(torch.uint8))
    return seed & _MASK64, start
