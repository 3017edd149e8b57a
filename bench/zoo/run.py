"""The model zoo (bench/zoo/models.py: HuggingFace transformers models from
their configs, random weights) measured by the common harness: eager,
Inductor with CUDA graphs and Fuse's torch.compile backend by default, with
nothing falling back, training and inference.

    python3 bench/zoo/run.py [MODELS] [--modes train,infer] [--systems ...] [-o OUT.json] [--append]

MODELS: comma-separated zoo names (default all: see `--help`), or any
module:function as `python -m fuse.compare` takes it. Every option is the
harness's (python/fuse/harness/cli.py); the zoo's defaults: --systems
eager,inductor-reduce-overhead,fuse-compile and --fuse-fallback error (a
graph Fuse cannot compile fails its row with Fuse's error instead of
running eagerly, so a row's figures are Fuse's own). Results go to
bench/zoo/results/<gpu>-<date>.json, saved after every row, and a full
run's file is copied to bench/zoo/latest.json; --append continues a run,
measuring only missing or failed rows. `python3 bench/zoo/report.py
--readme` turns latest.json into the README's table.
"""

import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from fuse.harness import cli  # noqa: E402

RESULTS = os.path.join(HERE, "results")
LATEST = os.path.join(HERE, "latest.json")
DEFAULT_SYSTEMS = "eager,inductor-reduce-overhead,fuse-compile"
MODULE = "zoo_models"


def load_models():
    """bench/zoo/models.py as the module `zoo_models` (so a model's spec is
    zoo_models:NAME; the file's own name, models, would shadow others)."""
    if MODULE not in sys.modules:
        spec = importlib.util.spec_from_file_location(MODULE, os.path.join(HERE, "models.py"))
        module = importlib.util.module_from_spec(spec)
        sys.modules[MODULE] = module
        spec.loader.exec_module(module)
    return sys.modules[MODULE]


def default_output(results):
    gpu = (results["gpu"] or "cpu").replace(" ", "-")
    return os.path.join(RESULTS, f"{gpu}-{results['date']}.json")


def main(argv=None):
    models = load_models()
    aliases = {name: f"{MODULE}:{function}" for name, function in models.MODELS.items()}
    return cli.main(argv, prog="bench/zoo/run.py", description=__doc__.split("\n\n")[0],
                    default_models=",".join(aliases), default_output=default_output, latest=LATEST,
                    default_systems=DEFAULT_SYSTEMS, fuse_fallback="error", aliases=aliases)


if __name__ == "__main__":
    sys.exit(main())
