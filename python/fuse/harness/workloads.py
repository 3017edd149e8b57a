"""What the harness measures: a model, its batch and its loss, built the
same way in every process.

A workload is built from a seed on the CPU (so every process that builds it
holds the same weights and batch, whatever GPU it runs on) and then moved to
the device. Built-in workloads:

    gpt2      GPT-2 124M (HuggingFace GPT2LMHeadModel), B8 T1024
    bert-b4   BERT-large sequence classification, B4 T512
    bert-b32  the same, B32 T512
    llama     a Llama-style decoder of about 160M parameters, B8 T1024
    nanogpt   a plain nanoGPT-style nn.Module (harness/nanogpt.py) of GPT-2
              124M shapes, B8 T1024, cross entropy inside forward

each with a `tiny` config (2 layers, small width) for tests. Any other
model comes as `module:function` (see `custom`).
"""

import dataclasses
import importlib
import inspect

MODEL_NAMES = ("gpt2", "bert-b4", "bert-b32", "llama", "nanogpt")
# name: (fuse.models model, full batch, full sequence); tiny configs are B2 T32.
_HF_WORKLOADS = {"gpt2": ("gpt2", 8, 1024), "bert-b4": ("bert", 4, 512), "bert-b32": ("bert", 32, 512),
                 "llama": ("llama", 8, 1024)}


@dataclasses.dataclass
class Built:
    """A workload's model and batch, on one device.

    train_inputs / train_targets: what fuse.compile_step takes as its batch
    (inputs for the model: tensor, tuple or dict; targets passed to loss_fn
    after the output: tuple or dict, possibly empty); infer_inputs: what the
    model takes in inference. loss_fn(output, *targets) is the scalar loss;
    logits(output) picks the tensor an inference step returns. stochastic:
    the training step draws random numbers (dropout), so no two systems'
    steps agree with the f32 reference's and their errors are recorded but
    not judged (runner.judge)."""
    model: object
    train_inputs: object
    train_targets: object
    infer_inputs: object
    loss_fn: object
    logits: object
    train_flops_per_token: float
    infer_flops_per_token: float
    tokens: int
    description: str
    stochastic: bool = False


@dataclasses.dataclass
class Workload:
    name: str
    config: str
    batch: int
    seq: int
    builder: object  # (seed) -> Built, on the CPU
    preload: object = None  # () -> None: imports the builder needs (see `preload`)

    def build(self, seed=0, device="cpu"):
        built = self.builder(seed)
        if device != "cpu":
            built.model = built.model.to(device)
            built.train_inputs = to_device(built.train_inputs, device)
            built.train_targets = to_device(built.train_targets, device)
            built.infer_inputs = to_device(built.infer_inputs, device)
        return built


def to_device(value, device):
    import torch
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {k: to_device(v, device) for k, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(to_device(v, device) for v in value)
    return value


def call_arguments(inputs):
    """(positional, keyword) arguments of the model for an inputs part."""
    import torch
    if isinstance(inputs, dict):
        return (), inputs
    if isinstance(inputs, torch.Tensor):
        return (inputs,), {}
    return tuple(inputs), {}


def target_arguments(targets):
    """The positional arguments loss_fn takes after the output."""
    import torch
    if targets is None:
        return ()
    if isinstance(targets, dict):
        return tuple(targets.values())
    if isinstance(targets, torch.Tensor):
        return (targets,)
    return tuple(targets)


def matmul_parameters(model):
    """Parameters that take part in matrix products: all (each shared tensor
    once), less embedding tables that no linear layer shares (those are only
    gathered)."""
    import torch
    linear = {m.weight.data_ptr() for m in model.modules() if isinstance(m, torch.nn.Linear)}
    gathered = sum(m.weight.numel() for m in model.modules()
                   if isinstance(m, torch.nn.Embedding) and m.weight.data_ptr() not in linear)
    seen, total = set(), 0
    for p in model.parameters():
        if p.data_ptr() not in seen:
            seen.add(p.data_ptr())
            total += p.numel()
    return total - gathered


def transformer_flops_per_token(model, layers, heads, head_dim, seq):
    """(training, inference) FLOPs per token, PaLM's convention:
    6·N + 12·L·H·Q·T and 2·N + 4·L·H·Q·T, N the matmul parameters."""
    n = matmul_parameters(model)
    attention = layers * heads * head_dim * seq
    return 6 * n + 12 * attention, 2 * n + 4 * attention


def output_logits(output):
    import torch
    if isinstance(output, torch.Tensor):
        return output
    return output.logits if hasattr(output, "logits") else output[0]


def _output_is_loss(output, *targets):
    return output if hasattr(output, "dim") else output.loss


def _hf_builder(model_name, config, batch):
    def build(seed):
        from .. import models
        spec = models.build(model_name, config, batch=batch, seed=seed)
        hf = spec.module.config
        layers, heads = hf.num_hidden_layers, hf.num_attention_heads
        width = hf.hidden_size
        batch_size, seq = spec.inputs["input_ids"].shape
        train, infer = transformer_flops_per_token(spec.module, layers, heads, width // heads, seq)
        return Built(spec.module, dict(spec.inputs), dict(spec.targets), dict(spec.inputs), spec.loss_fn,
                     output_logits, train, infer, batch_size * seq, spec.description)
    return build


def _nanogpt_builder(config, batch):
    def build(seed):
        import torch
        from .nanogpt import SIZES, NanoGPT
        sizes = SIZES[config]
        torch.manual_seed(seed)
        model = NanoGPT(sizes).float()
        seq = sizes.block_size
        generator = torch.Generator().manual_seed(seed + 1)
        idx = torch.randint(0, sizes.vocab_size, (batch, seq), generator=generator)
        targets = torch.randint(0, sizes.vocab_size, (batch, seq), generator=generator)
        train, infer = transformer_flops_per_token(model, sizes.n_layer, sizes.n_head,
                                                   sizes.n_embd // sizes.n_head, seq)
        params = sum(p.numel() for p in model.parameters())
        return Built(model, (idx, targets), (), (idx,), _output_is_loss, output_logits, train, infer,
                     batch * seq, f"nanogpt ({config}): a plain nn.Module, {params / 1e6:.1f}M parameters, "
                                  f"batch {batch}, sequence {seq}, loss inside forward")
    return build


_HF_CLASSES = {"gpt2": ("GPT2Config", "GPT2LMHeadModel"), "bert": ("BertConfig", "BertForSequenceClassification"),
               "llama": ("LlamaConfig", "LlamaForCausalLM")}


def preload(chosen):
    """Imports what building `chosen` workloads needs (transformers and its
    model classes: seconds), so that the runner pays it once instead of in
    every forked measurement. Call it with PYTORCH_NVML_BASED_CUDA_CHECK=1
    set: an import that asks torch whether CUDA is available must not
    initialise the driver in the process the measurements fork from."""
    names = {_HF_WORKLOADS[w.name][0] for w in chosen if w.name in _HF_WORKLOADS and w.preload is None}
    for hook in {w.preload for w in chosen if w.preload is not None}:
        hook()
    if names:
        import transformers
        for name in names:
            for cls in _HF_CLASSES[name]:
                getattr(transformers, cls)


def builtin(name, config="full"):
    """The built-in workload `name` (MODEL_NAMES) in `config` ('full' or 'tiny')."""
    if config not in ("full", "tiny"):
        raise ValueError(f"config must be 'full' or 'tiny', not {config!r}")
    if name == "nanogpt":
        batch = 8 if config == "full" else 2
        seq = 1024 if config == "full" else 64
        return Workload(name, config, batch, seq, _nanogpt_builder(config, batch))
    if name not in _HF_WORKLOADS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODEL_NAMES)} or module:function")
    model_name, batch, seq = _HF_WORKLOADS[name]
    if config == "tiny":
        batch, seq = 2, 32
    return Workload(name, config, batch, seq, _hf_builder(model_name, config, batch))


def custom(spec, config="full", name=None):
    """A workload from `module:function`. The function is called with those
    of the keyword arguments `config` it accepts and returns a dict with
    `model` (an nn.Module in float32, on the CPU), `batch` ((inputs,
    targets) as fuse.compile_step takes it) and optionally `loss_fn`
    (default: the model's output is the loss, a scalar or an object with
    .loss), `infer_inputs` (default: the batch's inputs),
    `flops_per_token` (training FLOPs; default 6·N, no attention term;
    inference counts a third of it), `description` (a line for the rows)
    and `stochastic` (true when the training step draws random numbers,
    dropout: see Built). It is called once per process with the seed set by
    torch.manual_seed, and must build the same model and batch every time.

    The function may declare its shapes without building anything: an
    attribute `shapes`, {config: (batch, seq)}, labels the rows with them
    and sets the tokens a step counts (batch·seq, what flops_per_token is
    per); without it the tokens are the first input's first two sizes and
    the rows have no batch or seq. The module may define `preload()`,
    which imports what the function needs once in the runner (see
    `preload`). `name` names the rows (default: `spec`)."""
    module_name, _, function_name = spec.partition(":")
    if not module_name or not function_name:
        raise ValueError(f"a custom model is module:function, not {spec!r}")
    module = importlib.import_module(module_name)
    function = getattr(module, function_name)
    accepted = inspect.signature(function).parameters
    shape = getattr(function, "shapes", {}).get(config)
    batch, seq = shape if shape else (None, None)

    def build(seed):
        import torch
        torch.manual_seed(seed)
        result = function(**({"config": config} if "config" in accepted else {}))
        if not isinstance(result, dict) or "model" not in result or "batch" not in result:
            raise TypeError(f"{spec} must return a dict with 'model' and 'batch'")
        model = result["model"]
        inputs, targets = result["batch"]
        if shape:
            tokens = batch * seq
        else:
            args, kwargs = call_arguments(inputs)
            first = (args + tuple(kwargs.values()))[0]
            tokens = first.shape[0] * (first.shape[1] if first.dim() > 1 else 1)
        n = matmul_parameters(model)
        train = result.get("flops_per_token") or 6 * n
        description = result.get("description") or (
            f"{type(model).__name__}, {n / 1e6:.1f}M matmul parameters, {tokens} tokens")
        return Built(model, inputs, targets if targets is not None else (), result.get("infer_inputs", inputs),
                     result.get("loss_fn") or _output_is_loss, output_logits, train, train / 3, tokens,
                     f"{spec}: {description}", bool(result.get("stochastic")))

    return Workload(name or spec, config, batch, seq, build, getattr(module, "preload", None))


def resolve(name, config="full"):
    """A built-in workload by name, or a custom one as module:function."""
    return custom(name, config) if ":" in name else builtin(name, config)
