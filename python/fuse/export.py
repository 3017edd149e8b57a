"""PyTorch -> `fuse` dialect exporter.

Python API
    export_module(module, inputs, mode="infer"|"train", ...)  any nn.Module
    export_graph(graph, ...)      a torch.fx GraphModule of ATen ops (make_fx,
                                  AOTAutograd forward/backward/joint) or a
                                  torch.export ExportedProgram
Command line (built-in models, see fuse.models)
    python -m fuse.export MODEL --config tiny|full --mode train|infer -o FILE.mlir

A training export is one function: parameters and batch in; the loss and every
parameter's gradient out (or, with an optimizer, the loss and the updated
parameters and optimizer state), so that later passes see the whole step.
Arguments and results carry their PyTorch names (`fuse.name`), every op the
model source line it came from (as its MLIR location), and all shapes are
static. Errors (unmapped ATen ops, data-dependent control flow, dynamic
shapes, in-place updates of inputs) raise ExportError naming what and where.
"""

import argparse
import sys
import time

import torch

from .exporter import _tracing
from .exporter._fx_to_mlir import ArgSpec, Converter
from .exporter._steps import Step
from .exporter._optimizers import AdamW
from .exporter._tracing import TracingError
from .exporter._values import ExportError

__all__ = ["export_module", "export_step", "export_graph", "ExportError", "AdamW"]


def _convert(graph_module, name, arg_specs, result_names, comment, info=None):
    converter = Converter(graph_module, name, arg_specs, result_names)
    text = converter.run().render(comment)
    if info is not None:
        # Philox counters the graph's random ops draw from `rng.offset` on.
        info["rng_counters"] = converter._rng_counter
    return text


def export_module(module, inputs, *, mode="infer", loss_fn=None, targets=None, optimizer=None,
                  optimizer_state=None, index_bounds=None, name=None, tracing_mode=None, comment=None,
                  donate_state=False):
    """Exports `module` called on `inputs` as fuse dialect text.

    mode="infer": arguments are the parameters and inputs; results are the
        module's output tensors (named by a ModelOutput's keys).
    mode="train": `loss_fn(output, *targets.values())` gives a scalar loss;
        results are `loss` and `grad.<parameter>` for every parameter. With
        `optimizer=AdamW(...)` the step also updates the parameters: extra
        arguments `exp_avg.<p>`, `exp_avg_sq.<p>`, `lr`, `step`, and results
        `loss`, the new `<p>`, `exp_avg.<p>`, `exp_avg_sq.<p>` and `step`.
    `inputs` and `targets` are dicts (name -> tensor) or tuples; integer
    inputs used as indices can get a bound with `index_bounds={name: N}`.
    `donate_state=True` (with an optimizer) marks the parameters and the
    optimizer's moments `fuse.donated`: the compiled step may update them
    in place, and the caller binds each updated result to its input's memory.
    """
    step = Step(module, inputs, mode, loss_fn, targets, optimizer, optimizer_state)
    return export_step(step, index_bounds=index_bounds, name=name, tracing_mode=tracing_mode,
                       comment=comment, donate_state=donate_state)


def _without_attention_fast_path():
    """nn.MultiheadAttention's and nn.TransformerEncoderLayer's inference
    fast paths off while tracing (torch 2.x has the switch): they call fused
    kernels, and pack padded batches into nested tensors that cannot be
    traced, where the ordinary path is the same math in ops Fuse takes."""
    import contextlib
    mha = getattr(torch.backends, "mha", None)
    if mha is None or not hasattr(mha, "set_fastpath_enabled"):
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def disabled():
        before = mha.get_fastpath_enabled()
        mha.set_fastpath_enabled(False)
        try:
            yield
        finally:
            mha.set_fastpath_enabled(before)
    return disabled()


def export_step(step, *, index_bounds=None, name=None, tracing_mode=None, comment=None,
                donate_state=False, info=None):
    """Exports a `fuse.exporter._steps.Step` (what export_module builds). A dict
    passed as `info` receives `rng_counters`: how many Philox counters the
    graph's random ops use from its `rng.offset` argument on."""
    was_training = step.module.training
    step.module.train(step.mode == "train")
    try:
        if step.mode == "infer":
            with torch.no_grad(), _without_attention_fast_path():
                graph = _trace(step.fn, step.example, tracing_mode)
        else:
            example = [t.detach().requires_grad_(True) if i < len(step.param_names) else t
                       for i, t in enumerate(step.example)]
            graph = _trace(step.fn, example, tracing_mode)
    finally:
        step.module.train(was_training)
    donated = set(step.state_names()) if donate_state else set()
    specs = [ArgSpec(n, (index_bounds or {}).get(n), n in donated) for n in step.arg_names]
    func_name = name or f"{type(step.module).__name__.lower()}_{step.mode}"
    return _convert(graph, func_name, specs, list(step.result_names), comment, info)


def _trace(fn, flat, tracing_mode):
    # Attention with a mask computed from an input (an encoder's padding
    # mask) is traced as the memory-efficient op, which Fuse maps to its
    # flash kernels, rather than in SDPA's math form.
    from .dynamo._masked_attention import routing
    try:
        with routing():
            return _tracing.trace(fn, flat, tracing_mode)
    except TracingError as error:
        if isinstance(error.original, ExportError):
            raise error.original from None
        raise ExportError(str(error)) from error.original


def export_graph(graph, example_inputs=None, *, arg_names=None, result_names=None, index_bounds=None,
                 name="forward", retrace=True, comment=None):
    """Exports a graph that PyTorch already traced.

    `graph` is a torch.fx GraphModule of ATen ops (make_fx; AOTAutograd's
    forward, backward or joint graph) or a torch.export ExportedProgram. A
    GraphModule is traced once more through make_fx with fuse's
    decompositions (on `example_inputs`, or tensors made from its
    placeholders' metadata) so that composites the dialect lacks become
    primitives; pass retrace=False to convert it as it is.
    """
    if hasattr(graph, "graph_signature") and hasattr(graph, "run_decompositions"):
        return _export_program(graph, arg_names, result_names, index_bounds, name, comment)
    if not isinstance(graph, torch.fx.GraphModule):
        raise TypeError(f"expected a torch.fx.GraphModule or ExportedProgram, not {type(graph).__name__}")
    placeholders = [n for n in graph.graph.nodes if n.op == "placeholder"]
    arg_names = arg_names or [str(n.target) for n in placeholders]
    if retrace:
        inputs = list(example_inputs) if example_inputs is not None else [_example_for(n) for n in placeholders]
        with torch.no_grad():
            # The Interpreter takes one value per placeholder whatever the
            # graph's own calling convention (AOTAutograd's joint graph takes
            # lists of primals and tangents).
            interpreter = torch.fx.Interpreter(graph)
            graph = _trace(lambda *args: interpreter.run(*args), inputs, None)
    specs = [ArgSpec(n, (index_bounds or {}).get(n)) for n in arg_names]
    return _convert(graph, name, specs, result_names, comment)


def _example_for(placeholder):
    meta = placeholder.meta.get("val", placeholder.meta.get("tensor_meta"))
    if meta is None or not hasattr(meta, "shape"):
        raise ExportError(f"graph input {placeholder.name} has no tensor metadata; pass example_inputs")
    shape = [int(d) for d in meta.shape]
    if meta.dtype.is_floating_point:
        return torch.randn(shape, dtype=meta.dtype)
    return torch.zeros(shape, dtype=meta.dtype)


def _export_program(program, arg_names, result_names, index_bounds, name, comment):
    program = program.run_decompositions(_tracing.decomposition_table())
    signature = program.graph_signature
    names = []
    for spec in signature.input_specs:
        kind = spec.kind.name
        if kind in ("PARAMETER", "BUFFER", "CONSTANT_TENSOR"):
            names.append(spec.target)
        else:
            names.append(getattr(spec.arg, "name", f"input{len(names)}"))
    mutated = [s for s in signature.output_specs if s.kind.name in ("BUFFER_MUTATION", "USER_INPUT_MUTATION")]
    if mutated:
        raise ExportError("the program updates inputs in place (" + ", ".join(str(s.target) for s in mutated)
                          + "), which a fuse graph cannot express; return the new values instead")
    outputs = [getattr(s.arg, "name", f"out{i}") for i, s in enumerate(signature.output_specs)]
    graph = program.graph_module
    # Parameters, buffers and constants are graph inputs of the program's
    # graph; they stay function arguments.
    specs = [ArgSpec(n, (index_bounds or {}).get(n)) for n in (arg_names or names)]
    return _convert(graph, name, specs, result_names or outputs, comment)


# -- command line -----------------------------------------------------------------

def main(argv=None):
    from . import models
    parser = argparse.ArgumentParser(
        prog="python -m fuse.export",
        description="Export a built-in model (HuggingFace transformers classes, random weights, "
                    "nothing downloaded) as a fuse dialect graph.")
    parser.add_argument("model", choices=sorted(models.MODELS), help="which model")
    parser.add_argument("--config", choices=["tiny", "full"], default="tiny",
                        help="tiny: 2 layers, small width, short sequence (CI); full: the real size "
                             "(default: tiny)")
    parser.add_argument("--mode", choices=["train", "infer"], default="train",
                        help="train: loss and gradients of every parameter in one graph; infer: "
                             "forward to logits (default: train)")
    parser.add_argument("--batch", type=int, help="batch size (default: the model's own)")
    parser.add_argument("--with-optimizer", action="store_true",
                        help="train mode: include the AdamW update (results are then the new "
                             "parameters and optimizer state)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random weights and batch")
    parser.add_argument("--save-io", metavar="PREFIX",
                        help="also run the step in PyTorch (CPU, float32) and write PREFIX.inputs.npz "
                             "and PREFIX.expected.npz, named as the graph's arguments and results, "
                             "for `fuse-run GRAPH --inputs PREFIX.inputs.npz --expected "
                             "PREFIX.expected.npz`")
    parser.add_argument("-o", "--output", required=True, metavar="FILE.mlir",
                        help="where to write the graph ('-' for stdout)")
    args = parser.parse_args(argv)
    if args.with_optimizer and args.mode != "train":
        parser.error("--with-optimizer needs --mode train")

    started = time.time()
    try:
        spec = models.build(args.model, args.config, batch=args.batch, seed=args.seed)
        print(f"fuse.export: {spec.description}; tracing ({args.mode})...", file=sys.stderr)
        optimizer = AdamW() if args.with_optimizer else None
        step = Step(spec.module, spec.inputs, args.mode,
                    spec.loss_fn if args.mode == "train" else None,
                    spec.targets if args.mode == "train" else None, optimizer)
        text = export_step(step, index_bounds=spec.index_bounds, name=f"{args.model}_{args.mode}",
                           comment=_provenance(args, spec))
    except ExportError as error:
        print(f"fuse.export: error: {error}", file=sys.stderr)
        return 1
    except ImportError as error:
        print(f"fuse.export: error: the built-in models are HuggingFace transformers classes, and "
              f"transformers is not importable here ({error}); export your own module with "
              f"fuse.export.export_module instead", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    ops = sum(1 for line in text.splitlines() if line.startswith("  %") or line.startswith("  fuse."))
    print(f"fuse.export: wrote {args.output}: {ops} ops in {time.time() - started:.1f} s", file=sys.stderr)
    if args.save_io:
        from . import reference
        paths = reference.save_io(step, args.save_io)
        print(f"fuse.export: wrote {paths[0]} and {paths[1]} (PyTorch's inputs and outputs)",
              file=sys.stderr)
    return 0


def _provenance(args, spec):
    command = f"python -m fuse.export {args.model} --config {args.config} --mode {args.mode}"
    if args.batch:
        command += f" --batch {args.batch}"
    if args.with_optimizer:
        command += " --with-optimizer"
    if args.seed:
        command += f" --seed {args.seed}"
    return (f"{spec.description}\nExported by: {command}\n"
            f"torch {torch.__version__}")


if __name__ == "__main__":
    sys.exit(main())
