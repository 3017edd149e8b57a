"""The benchmark harness: eager, Inductor (default and reduce-overhead) and
Fuse (torch.compile backend and compile_step) measured the same way on the
same step function, one process per row, results in one JSON schema.

    python -m fuse.compare MODEL[,MODEL...] [--modes train,infer] [--systems ...] [-o OUT.json]
    python3 bench/run.py            # every built-in model, both modes, all systems

A workload may declare a recipe (workloads.Recipe: optimizer, parameter
groups, clipping, micro-batches; bert-hf does): its training step is then a
whole optimizer step, built for each system as its user would write it.

Modules: workloads (the models and batches), systems (how each system
becomes a step), measure (what is measured, and how), runner (processes,
caches, judging, the schema), report (Markdown tables), cli (the command
line both entry points share), nanogpt (the plain nn.Module workload).
"""

from .runner import ROW_FIELDS, TOLERANCE_FACTOR  # noqa: F401
from .systems import COMPILERS, SYSTEMS  # noqa: F401
from .workloads import MODEL_NAMES  # noqa: F401
