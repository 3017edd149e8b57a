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
    bert-hf   BERT-large sequence classification trained with HuggingFace's
              defaults (training only): the config's dropout (0.1), right-
              padded sequences of varied lengths with their attention mask,
              and a whole optimizer step as its step (HF_RECIPE: AdamW,
              no weight decay on biases and LayerNorm weights, 0.01
              elsewhere, clipping at 1.0, 4 micro-batches of B4 T512)

each with a `tiny` config (2 layers, small width) for tests. Any other
model comes as `module:function` (see `custom`).

A workload's training step is forward, loss and backward with the
gradients left in `param.grad`, unless it declares a `Recipe`: then its
step is a whole optimizer step, as a training loop runs it (the recipe's
micro-batches, each `(loss / N).backward()`, gradient clipping,
`optimizer.step()`, `zero_grad`), and every system builds that step
(systems.py).
"""

import dataclasses
import importlib
import inspect

MODEL_NAMES = ("gpt2", "bert-b4", "bert-b32", "llama", "nanogpt", "bert-hf")
# name: (fuse.models model, full batch, full sequence); tiny configs are B2 T32.
_HF_WORKLOADS = {"gpt2": ("gpt2", 8, 1024), "bert-b4": ("bert", 4, 512), "bert-b32": ("bert", 32, 512),
                 "llama": ("llama", 8, 1024)}

# Optimizers a Recipe names: torch.optim class names.
OPTIMIZERS = {"adamw": "AdamW", "adam": "Adam", "sgd": "SGD"}


@dataclasses.dataclass
class Recipe:
    """A training step that is a whole optimizer step: what a workload
    declares when its step is more than forward and backward.

    optimizer           "adamw", "adam" or "sgd" (torch.optim's class)
    lr                  the learning rate (constant: no schedule)
    weight_decay        the decay of the parameters that decay
    no_decay            True: biases and the weights of normalisation layers
                        (nn.LayerNorm, GroupNorm, batch norms, any module
                        whose class name ends in "Norm", e.g. RMSNorm) get
                        no weight decay, in a second parameter group, as
                        HuggingFace's Trainer groups them
    max_grad_norm       clip the gradients to this global 2-norm before the
                        update (torch.nn.utils.clip_grad_norm_), or None
    accumulation_steps  micro-batches per update: each `(loss / N)
                        .backward()`, the gradients summed
    options             other keyword arguments of the optimizer's class
                        (betas, eps, momentum, ...)
    fused               pass fused=True where the class takes it and every
                        parameter is on a CUDA device (HF Trainer's default
                        optimizer, adamw_torch_fused; compile_step runs it
                        in its graph all the same)

One step of such a workload runs `accumulation_steps` micro-batches and
updates the parameters once (systems.py builds it for every system)."""
    optimizer: str = "adamw"
    lr: float = 1e-3
    weight_decay: float = 0.0
    no_decay: bool = False
    max_grad_norm: float = None
    accumulation_steps: int = 1
    options: dict = dataclasses.field(default_factory=dict)
    fused: bool = True

    def __post_init__(self):
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"a recipe's optimizer is one of {', '.join(OPTIMIZERS)}, not {self.optimizer!r}")
        for name in ("lr", "weight_decay"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (
                    name == "lr" and value == 0):
                raise ValueError(f"a recipe's {name} must be a {'positive' if name == 'lr' else 'non-negative'} "
                                 f"number, not {value!r}")
        if self.max_grad_norm is not None and (isinstance(self.max_grad_norm, bool) or not isinstance(
                self.max_grad_norm, (int, float)) or self.max_grad_norm <= 0):
            raise ValueError(f"a recipe's max_grad_norm must be a positive number or None, not "
                             f"{self.max_grad_norm!r}")
        if isinstance(self.accumulation_steps, bool) or not isinstance(self.accumulation_steps, int) \
                or self.accumulation_steps < 1:
            raise ValueError(f"a recipe's accumulation_steps must be a positive integer, not "
                             f"{self.accumulation_steps!r}")
        taken = {"params", "lr", "weight_decay", "fused"} & set(self.options)
        if taken:
            raise ValueError(f"a recipe's options may not set {', '.join(sorted(taken))} (the recipe's own fields "
                             "do)")
        self.options = dict(self.options)

    @classmethod
    def of(cls, value):
        """A Recipe from a Recipe, a dict of its fields or None (None)."""
        if value is None or isinstance(value, cls):
            return value
        if isinstance(value, dict):
            return cls(**value)
        raise TypeError(f"a recipe is a fuse.harness.workloads.Recipe or a dict of its fields, not "
                        f"{type(value).__name__}")

    def as_dict(self):
        """The recipe as JSON takes it (the rows record it)."""
        result = dataclasses.asdict(self)
        result["options"] = {k: list(v) if isinstance(v, tuple) else v for k, v in self.options.items()}
        return result

    @staticmethod
    def no_decay_names(model):
        """Names of `model`'s parameters that no_decay exempts: biases and
        the parameters of normalisation layers."""
        import torch
        norms = (torch.nn.LayerNorm, torch.nn.GroupNorm, torch.nn.modules.batchnorm._NormBase)
        exempt = set()
        for module_name, module in model.named_modules():
            if isinstance(module, norms) or type(module).__name__.endswith("Norm"):
                exempt.update(f"{module_name}.{n}" if module_name else n
                              for n, _ in module.named_parameters(recurse=False))
        names = {n for n, _ in model.named_parameters()}
        exempt &= names
        exempt.update(n for n in names if n.rsplit(".", 1)[-1] == "bias" or n.endswith("_bias"))
        return exempt

    def param_groups(self, model):
        """The optimizer's parameter groups over `model`'s trainable
        parameters: one, or with no_decay the decaying ones then the rest
        (weight decay 0); an empty group is left out."""
        named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        if not self.no_decay:
            return [{"params": [p for _, p in named], "weight_decay": self.weight_decay}]
        exempt = self.no_decay_names(model)
        groups = [{"params": [p for n, p in named if n not in exempt], "weight_decay": self.weight_decay},
                  {"params": [p for n, p in named if n in exempt], "weight_decay": 0.0}]
        return [g for g in groups if g["params"]]

    def build_optimizer(self, model):
        """A fresh torch optimizer of this recipe over `model` (no state:
        its first step is step 1)."""
        import torch
        cls = getattr(torch.optim, OPTIMIZERS[self.optimizer])
        options = dict(self.options)
        params = [p for p in model.parameters() if p.requires_grad]
        if self.fused and "fused" in inspect.signature(cls.__init__).parameters and params \
                and all(p.is_cuda for p in params):
            options["fused"] = True
        return cls(self.param_groups(model), lr=self.lr, **options)

    def applied_gradients(self, optimizer, model):
        """{name: the gradient the optimizer's first update used (after the
        micro-batches' sum and the clipping), f32} read back from its state
        after that update: AdamW's and Adam's first moment is then
        (1 − β1)·g, SGD's momentum buffer g (for Adam and SGD with weight
        decay, g includes the decay term). Every system keeps this state
        (compile_step updates the torch optimizer's own tensors), so it is
        what their gradients are compared by. None where the optimizer
        keeps no such state (SGD without momentum)."""
        names = {id(p): n for n, p in model.named_parameters()}
        result = {}
        for group in optimizer.param_groups:
            for p in group["params"]:
                state = optimizer.state.get(p) or {}
                if self.optimizer in ("adamw", "adam") and state.get("exp_avg") is not None:
                    gradient = state["exp_avg"].detach().float() / (1.0 - float(group["betas"][0]))
                elif self.optimizer == "sgd" and state.get("momentum_buffer") is not None:
                    gradient = state["momentum_buffer"].detach().float()
                else:
                    continue
                result[names[id(p)]] = gradient
        return result or None

    def describe(self):
        """The recipe in a line (the rows' descriptions)."""
        name = OPTIMIZERS[self.optimizer]
        options = "".join(f", {k} {tuple(v) if isinstance(v, list) else v}" for k, v in self.options.items())
        decay = f"weight decay {self.weight_decay:g}"
        if self.no_decay:
            decay += " (none on biases and norm weights)"
        clip = f", clip at {self.max_grad_norm:g}" if self.max_grad_norm is not None else ""
        fused = ", fused where torch has it" if self.fused else ""
        return (f"{name} lr {self.lr:g}{options}, {decay}{clip}{fused}; {self.accumulation_steps} "
                f"micro-batch{'es' if self.accumulation_steps != 1 else ''} per update")


# HuggingFace Trainer's defaults for fine-tuning BERT (TrainingArguments:
# learning_rate 5e-5, adam betas (0.9, 0.999), epsilon 1e-8,
# max_grad_norm 1.0, the fused torch AdamW), with the weight decay of
# 0.01 that fine-tuning scripts set and 4 micro-batches per update.
HF_RECIPE = Recipe(optimizer="adamw", lr=5e-5, weight_decay=0.01, no_decay=True, max_grad_norm=1.0,
                   accumulation_steps=4, options={"betas": (0.9, 0.999), "eps": 1e-8})


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
    not judged (runner.judge). recipe: a Recipe, when a training step is a
    whole optimizer step; micro_batches: its micro-batches, a list of
    (inputs, targets) of one structure and shape (train_inputs and
    train_targets are the first; None: that one batch, every time).
    tokens: the tokens of one (micro-)batch."""
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
    recipe: object = None
    micro_batches: list = None

    @property
    def accumulation_steps(self):
        """Micro-batches in one training step (1 without a recipe)."""
        return self.recipe.accumulation_steps if self.recipe is not None else 1

    def training_batches(self):
        """The (inputs, targets) of each micro-batch of one training step."""
        if self.micro_batches is not None:
            return list(self.micro_batches)
        return [(self.train_inputs, self.train_targets)] * self.accumulation_steps

    def check(self):
        """Refuses micro-batches that the recipe cannot take: another number
        than its accumulation_steps, or another structure, dtype or shape
        than the first (every system runs one step compiled for them)."""
        if self.micro_batches is None:
            return self
        if self.recipe is None:
            raise ValueError("micro_batches need a recipe (its accumulation_steps says how many a step runs)")
        batches = self.micro_batches
        if len(batches) != self.recipe.accumulation_steps:
            raise ValueError(f"{len(batches)} micro-batches for a recipe of {self.recipe.accumulation_steps} "
                             "accumulation steps")
        first = _batch_layout(*batches[0])
        for index, batch in enumerate(batches[1:], 1):
            layout = _batch_layout(*batch)
            if layout != first:
                raise ValueError(f"micro-batch {index} is {layout}, micro-batch 0 {first}: every micro-batch "
                                 "must have the first one's structure, dtypes and shapes")
        self.train_inputs, self.train_targets = batches[0]
        return self


@dataclasses.dataclass
class Workload:
    name: str
    config: str
    batch: int
    seq: int
    builder: object  # (seed) -> Built, on the CPU
    preload: object = None  # () -> None: imports the builder needs (see `preload`)
    modes: tuple = ("train", "infer")  # the modes it has rows for (bert-hf: training only)

    def build(self, seed=0, device="cpu"):
        built = self.builder(seed).check()
        if device != "cpu":
            built.model = built.model.to(device)
            built.train_inputs = to_device(built.train_inputs, device)
            built.train_targets = to_device(built.train_targets, device)
            built.infer_inputs = to_device(built.infer_inputs, device)
            if built.micro_batches is not None:
                built.micro_batches = [to_device(tuple(batch), device) for batch in built.micro_batches]
                built.train_inputs, built.train_targets = built.micro_batches[0]
        return built


def _batch_layout(inputs, targets):
    """What a micro-batch's tensors are: [(where, dtype, shape)]."""
    import torch
    args, kwargs = call_arguments(inputs)
    parts = [(f"input {i}", t) for i, t in enumerate(args)] + [(f"input {k}", t) for k, t in kwargs.items()]
    parts += [(f"target {i}", t) for i, t in enumerate(target_arguments(targets))]
    return [(where, str(t.dtype).replace("torch.", ""), list(t.shape)) if isinstance(t, torch.Tensor)
            else (where, type(t).__name__, None) for where, t in parts]


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


# bert-hf's sizes: BERT-large, or a tiny BERT for tests.
_BERT_HF_SIZES = {
    "full": dict(num_hidden_layers=24, hidden_size=1024, num_attention_heads=16, intermediate_size=4096,
                 vocab_size=30522, max_position_embeddings=512),
    "tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                 vocab_size=512, max_position_embeddings=64),
}


def padded_tokens(batch, seq, vocab, pad, generator):
    """Right-padded token ids and their attention mask, as a collator that
    pads to the longest sequence of a batch makes them: the first row is
    `seq` long, the others from seq/2 to seq − 1 (so every batch of two or
    more rows has padding); ids from 3 up (clear of the usual special
    tokens), `pad` after each length."""
    import torch
    lengths = torch.randint(seq // 2, seq, (batch,), generator=generator)
    lengths[0] = seq
    mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
    ids = torch.randint(3, vocab, (batch, seq), generator=generator).masked_fill(mask == 0, pad)
    return ids, mask


def _classification_loss(output, labels):
    """Cross entropy on the logits: what BertForSequenceClassification
    computes from its labels for a single-label task."""
    import torch.nn.functional as F
    return F.cross_entropy(output.logits, labels)


def _preload_bert_hf():
    import transformers
    transformers.BertConfig, transformers.BertForSequenceClassification  # noqa: B018


def _bert_hf_builder(config, batch, seq, recipe):
    def build(seed):
        import torch
        from transformers import BertConfig, BertForSequenceClassification
        torch.manual_seed(seed)
        # Every other field is the config's default: dropout 0.1 in the
        # hidden states, the attention probabilities and the classifier.
        hf = BertConfig(**_BERT_HF_SIZES[config], num_labels=2, attn_implementation="sdpa")
        model = BertForSequenceClassification(hf).float()
        generator = torch.Generator().manual_seed(seed + 1)
        micro_batches = []
        for _ in range(recipe.accumulation_steps):
            ids, mask = padded_tokens(batch, seq, hf.vocab_size, hf.pad_token_id, generator)
            labels = torch.randint(0, hf.num_labels, (batch,), generator=generator)
            micro_batches.append(({"input_ids": ids, "attention_mask": mask}, {"labels": labels}))
        train, infer = transformer_flops_per_token(model, hf.num_hidden_layers, hf.num_attention_heads,
                                                   hf.hidden_size // hf.num_attention_heads, seq)
        params = sum(p.numel() for p in model.parameters())
        dropout = max([m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)]
                      + [float(hf.attention_probs_dropout_prob)])
        attention = getattr(model.config, "_attn_implementation", None) or "default"
        description = (f"bert-hf ({config}): {type(model).__name__}, {params / 1e6:.1f}M parameters, "
                       f"micro-batch {batch}x{seq} right-padded (lengths {seq // 2} to {seq}) with its attention "
                       f"mask, {hf.num_labels} labels, dropout {dropout:g} (the config's), attention {attention}; "
                       f"a step: {recipe.describe()}")
        inputs, targets = micro_batches[0]
        return Built(model, inputs, targets, inputs, _classification_loss, output_logits, train, infer,
                     batch * seq, description, stochastic=dropout > 0, recipe=recipe, micro_batches=micro_batches)
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
    if name == "bert-hf":
        batch, seq = (4, 512) if config == "full" else (2, 32)
        return Workload(name, config, batch, seq, _bert_hf_builder(config, batch, seq, HF_RECIPE),
                        preload=_preload_bert_hf, modes=("train",))
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
    inference counts a third of it), `description` (a line for the rows),
    `stochastic` (true when the training step draws random numbers,
    dropout: see Built), `recipe` (a Recipe or a dict of its fields: the
    training step is then a whole optimizer step) and `micro_batches` (with
    a recipe, its accumulation_steps batches, each (inputs, targets) of the
    batch's structure and shapes; default: the batch every time). It is
    called once per process with the seed set by torch.manual_seed, and
    must build the same model and batch every time.

    The function may declare its shapes without building anything: an
    attribute `shapes`, {config: (batch, seq)}, labels the rows with them
    and sets the tokens a (micro-)batch counts (batch·seq, what
    flops_per_token is per; a recipe's step counts those of each of its
    micro-batches); without it the tokens are the first input's first two
    sizes and
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
        recipe = Recipe.of(result.get("recipe"))
        micro_batches = result.get("micro_batches")
        if micro_batches is not None:
            micro_batches = [(i, t if t is not None else ()) for i, t in micro_batches]
        if recipe is not None:
            description += f"; a step: {recipe.describe()}"
        return Built(model, inputs, targets if targets is not None else (), result.get("infer_inputs", inputs),
                     result.get("loss_fn") or _output_is_loss, output_logits, train, train / 3, tokens,
                     f"{spec}: {description}", bool(result.get("stochastic")), recipe, micro_batches)

    return Workload(name or spec, config, batch, seq, build, getattr(module, "preload", None))


def resolve(name, config="full"):
    """A built-in workload by name, or a custom one as module:function."""
    return custom(name, config) if ":" in name else builtin(name, config)
