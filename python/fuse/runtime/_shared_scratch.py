"""One scratch memory per device (arena and workspaces, `_capi.Scratch`) for
graphs that run one at a time.

The torch.compile backend's graphs run in turn on the caller's stream (a
forward, then its backward; one piece of a model split by graph breaks
after another), so each needs its arena only while it runs, and all of
them can share one as large as the largest (GPT-2's forward and backward
arenas, 786 and 798 MiB, were held side by side). The runtime orders runs
across streams and threads (ScratchMemory.h).
"""

import threading

from . import _capi

__all__ = ["for_device", "device_bytes"]

_SCRATCH = {}
_LOCK = threading.Lock()


def for_device(index):
    """The shared scratch memory of device `index`, made on first use (the
    current device must be `index` then: a session is loaded there)."""
    with _LOCK:
        if index not in _SCRATCH:
            _SCRATCH[index] = _capi.Scratch.create()
        return _SCRATCH[index]


def device_bytes():
    """Device memory the shared scratch memories hold now, over all devices."""
    with _LOCK:
        return sum(scratch.device_bytes for scratch in _SCRATCH.values())
