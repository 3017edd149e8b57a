"""Eager vs Inductor vs Fuse on the same step, measured by the common
harness (fuse.harness; bench/run.py runs the same code over every
built-in model).

    python -m fuse.compare gpt2[,bert-b4,...] [--modes train,infer] [--systems SYSTEMS]
                           [--config full|tiny] [-o OUT.json] [--append]
    python -m fuse.compare my_pkg.my_module:make_workload ...

Systems: eager (bf16 autocast), inductor, inductor-reduce-overhead,
fuse-compile (torch.compile(backend="fuse")), fuse-step (fuse.compile_step;
inference: fuse.compile of the exported graph). Every row is measured in a
process of its own with empty compile caches, and judged against f32: the
exit code is 1 when a compiled system's error exceeds twice eager
autocast's. See fuse/harness/measure.py for what each figure means.
"""

import sys

from .harness import cli


def main(argv=None):
    return cli.main(argv, prog="python -m fuse.compare",
                    description="Eager vs Inductor vs Fuse on one model's training and inference steps.")


if __name__ == "__main__":
    sys.exit(main())
