"""Eager vs Inductor (default and reduce-overhead) vs Fuse (torch.compile
backend and compile_step) on the built-in models, training and inference,
by the common harness (python/fuse/harness; `python -m fuse.compare` is
the same code for any model).

    python3 bench/run.py [MODELS] [--modes train,infer] [--systems ...] [-o OUT.json] [--append]

Default: gpt2, bert-b4, bert-b32, llama, nanogpt and bert-hf (BERT-large
trained with HuggingFace's defaults: dropout 0.1, a padded batch with its
attention mask, and a whole optimizer step of 4 micro-batches, clipping
and AdamW with decay groups; training only), both modes, all five
systems, written to bench/results/<gpu>-<date>.json and copied to
bench/results/latest.json. The JSON is saved after every row, so a run cut
short keeps what it measured; --append continues it in a later call
(a device whose calls stop at 10 minutes), measuring only missing or failed
rows. Exit code 1 when a compiled row's error exceeds twice eager
autocast's (the row says so in its "error").
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from fuse.harness import MODEL_NAMES, cli  # noqa: E402

RESULTS = os.path.join(HERE, "results")


def default_output(results):
    gpu = (results["gpu"] or "cpu").replace(" ", "-")
    return os.path.join(RESULTS, f"{gpu}-{results['date']}.json")


if __name__ == "__main__":
    sys.exit(cli.main(prog="bench/run.py", description=__doc__.split("\n\n")[0],
                      default_models=",".join(MODEL_NAMES), default_output=default_output,
                      latest=os.path.join(RESULTS, "latest.json")))
