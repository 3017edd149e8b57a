"""Built-in models for `python -m fuse.export`: HuggingFace `transformers`
classes built from a config with random weights (nothing is downloaded).

    gpt2   GPT-2 124M: 12 layers, d=768, 12 heads, vocab 50304, batch 8, seq 1024
    bert   BERT-large for sequence classification: 24 layers, d=1024, 16 heads,
           batch 4 (or 32 with --batch 32), seq 512, 2 labels
    llama  Llama-style decoder, about 160M parameters: RMSNorm, rotary embeddings,
           SwiGLU, grouped-query attention (12 query / 4 key-value heads)

Each also has a `tiny` config (2 layers, small width, short sequence) for CI.
Dropout is 0 everywhere (as in GPT-2/Llama pre-training recipes), so a graph's
loss is a deterministic function of its inputs and can be checked against
PyTorch's. Causal LMs are trained nanoGPT-style: the batch holds input ids and
next-token targets, and the loss is the mean cross entropy over all positions.
"""

import dataclasses

import torch
import torch.nn.functional as F


@dataclasses.dataclass
class ModelSpec:
    module: torch.nn.Module
    inputs: dict
    targets: dict
    loss_fn: object
    index_bounds: dict
    description: str


def _causal_lm_loss(output, targets):
    logits = output.logits
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))


def _classification_loss(output, labels):
    return F.cross_entropy(output.logits, labels)


def _gpt2(config, batch):
    from transformers import GPT2Config, GPT2LMHeadModel
    sizes = dict(tiny=dict(n_layer=2, n_embd=64, n_head=4, vocab_size=512, n_positions=64),
                 full=dict(n_layer=12, n_embd=768, n_head=12, vocab_size=50304, n_positions=1024))[config]
    seq = 32 if config == "tiny" else 1024
    batch = batch or (2 if config == "tiny" else 8)
    hf = GPT2Config(**sizes, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0,
                    activation_function="gelu_pytorch_tanh")
    return GPT2LMHeadModel(hf), batch, seq, sizes["vocab_size"], "causal"


def _bert(config, batch):
    from transformers import BertConfig, BertForSequenceClassification
    sizes = dict(tiny=dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                           intermediate_size=256, vocab_size=512, max_position_embeddings=64),
                 full=dict(num_hidden_layers=24, hidden_size=1024, num_attention_heads=16,
                           intermediate_size=4096, vocab_size=30522, max_position_embeddings=512))[config]
    seq = 32 if config == "tiny" else 512
    batch = batch or (2 if config == "tiny" else 4)
    hf = BertConfig(**sizes, hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0, num_labels=2)
    return BertForSequenceClassification(hf), batch, seq, sizes["vocab_size"], "classify"


def _llama(config, batch):
    from transformers import LlamaConfig, LlamaForCausalLM
    sizes = dict(tiny=dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4,
                           num_key_value_heads=2, intermediate_size=172, vocab_size=512,
                           max_position_embeddings=64),
                 full=dict(num_hidden_layers=16, hidden_size=768, num_attention_heads=12,
                           num_key_value_heads=4, intermediate_size=2304, vocab_size=32000,
                           max_position_embeddings=1024))[config]
    seq = 32 if config == "tiny" else 1024
    batch = batch or (2 if config == "tiny" else 8)
    hf = LlamaConfig(**sizes, attention_dropout=0.0, tie_word_embeddings=False)
    return LlamaForCausalLM(hf), batch, seq, sizes["vocab_size"], "causal"


MODELS = {"gpt2": _gpt2, "bert": _bert, "llama": _llama}


def build(name, config="tiny", batch=None, seed=0):
    """The model `name` in `config` ('tiny' or 'full') with a random batch."""
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(sorted(MODELS))}")
    if config not in ("tiny", "full"):
        raise ValueError(f"config must be 'tiny' or 'full', not {config!r}")
    torch.manual_seed(seed)
    module, batch, seq, vocab, task = MODELS[name](config, batch)
    module = module.float()
    # SDPA is what a training run uses; the exporter maps it to fuse's
    # attention op.
    if hasattr(module.config, "_attn_implementation"):
        module.config._attn_implementation = "sdpa"
    generator = torch.Generator().manual_seed(seed + 1)
    input_ids = torch.randint(0, vocab, (batch, seq), generator=generator)
    if task == "causal":
        targets = {"targets": torch.randint(0, vocab, (batch, seq), generator=generator)}
        loss_fn, bounds = _causal_lm_loss, {"input_ids": vocab, "targets": vocab}
    else:
        targets = {"labels": torch.randint(0, 2, (batch,), generator=generator)}
        loss_fn, bounds = _classification_loss, {"input_ids": vocab, "labels": 2}
    params = sum(p.numel() for p in module.parameters())
    description = (f"{name} ({config}): {type(module).__name__}, {params / 1e6:.1f}M parameters, "
                   f"batch {batch}, sequence {seq}, float32")
    return ModelSpec(module, {"input_ids": input_ids}, targets, loss_fn, bounds, description)
