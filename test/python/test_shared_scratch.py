"""The per-device registry of shared scratch memory (fuse/runtime/_shared_scratch.py),
on the CPU with a stand-in for the C API's Scratch: one per device, made
once, its bytes summed; and the backend hands it to every graph it
compiles. The memory itself is tested on the GPU (FuseRuntimeGpuTests'
SharedScratchServesExecutorsInTurn, test_backend_lifetimes_gpu.py)."""

from fuse import backend
from fuse.runtime import _capi, _shared_scratch


class _FakeScratch:
    made = 0

    def __init__(self):
        _FakeScratch.made += 1
        self.device_bytes = 1000 * _FakeScratch.made


def test_one_scratch_per_device_made_once_and_its_bytes_summed(monkeypatch):
    monkeypatch.setattr(_shared_scratch, "_SCRATCH", {})
    monkeypatch.setattr(_capi.Scratch, "create", classmethod(lambda cls: _FakeScratch()))
    first = _shared_scratch.for_device(0)
    assert _shared_scratch.for_device(0) is first
    second = _shared_scratch.for_device(1)
    assert second is not first
    assert _shared_scratch.device_bytes() == first.device_bytes + second.device_bytes
    assert backend.scratch_bytes() == _shared_scratch.device_bytes()
    assert backend._shared_scratch is _shared_scratch.for_device
