"""The model zoo: HuggingFace transformers models built from their config
classes with random weights (nothing is downloaded, no tokenizer), each a
workload of the benchmark harness (`fuse.harness.workloads.custom`).

Every function here takes `config` ("full" or "tiny") and returns the dict
custom() expects: `model` (float32, on the CPU), `batch` ((inputs, ()):
the inputs hold the labels, and the loss is the model's own `.loss`),
`infer_inputs` (the same without labels; decoder input ids for the
encoder-decoders), `flops_per_token` and `description`. Its `shapes`
attribute, {config: (batch, seq)}, labels the harness's rows and counts
the tokens the FLOPs are per (seq: the encoder's length for the
encoder-decoders, the patches and the class token for ViT). bench/zoo/run.py
loads this file as the module `zoo_models`, so the spec of a model is
`zoo_models:NAME`.

    name        class                                shapes                                batch
    gpt2        GPT2LMHeadModel                      GPT-2 124M                            B8 T1024
    bert        BertForSequenceClassification        BERT-base, 2 labels                   B32 T128, right-padded
    roberta     RobertaForMaskedLM                   RoBERTa-base, 15% of tokens masked    B32 T128, right-padded
    distilbert  DistilBertForSequenceClassification  DistilBERT-base, 2 labels             B32 T128, right-padded
    vit         ViTForImageClassification            ViT-B/16, 224x224, 1000 classes       B32 (197 tokens)
    t5          T5ForConditionalGeneration           T5-small                              B8, 512 -> 128 labels
    llama       LlamaForCausalLM                     8 layers, d1024, 16 heads             B4 T1024
    mistral     MistralForCausalLM                   8 layers, d1024, GQA 16/8             B4 T1024
    qwen2       Qwen2ForCausalLM                     Qwen2-0.5B: 24 layers, d896, 14/2     B4 T1024
    gemma       GemmaForCausalLM                     8 layers, d1024, 8 heads of 128, 1 kv B4 T1024
    gpt-neox    GPTNeoXForCausalLM                   Pythia-160M                           B8 T1024
    bart        BartForConditionalGeneration         BART-base                             B8, 256 (padded) -> 64
    whisper     WhisperForConditionalGeneration      Whisper-base, 80 mel x 3000 frames    B8, 1500 -> 128 labels
    mixtral     MixtralForCausalLM                   4 layers, d512, 8 experts, top 2      B4 T1024

Dropout is each config's default (BERT's 0.1, GPT-2's 0.1, T5's 0.1, ...),
as a fine-tuning run from these configs would have it; such a model's
training rows are `stochastic` (each system draws its own masks, so their
errors against the f32 step are recorded, not judged). Attention is SDPA
where the model class supports it (`attn_implementation="sdpa"`), the
class's default otherwise; the description of each row says which. `tiny`
configs (2 layers, widths of 64, vocabularies of 512, B2 and short
sequences) are for tests.

FLOPs per token follow the harness's convention (PaLM's 6·N + 12·L·H·Q·T
for training, a third of it for inference), N the matrix-product
parameters (`fuse.harness.workloads.matmul_parameters`; a mixture of
experts counts its experts at top_k/experts), T the attention's key length:
for the encoder-decoders the encoder's and the decoder's parts are added
(the cross-attention over the encoder's length) and divided by the encoder
tokens.
"""

import dataclasses
import inspect

import torch

TINY_VOCAB = 512

# name: (config class, model class), all in transformers' top-level namespace.
CLASSES = {
    "gpt2": ("GPT2Config", "GPT2LMHeadModel"),
    "bert": ("BertConfig", "BertForSequenceClassification"),
    "roberta": ("RobertaConfig", "RobertaForMaskedLM"),
    "distilbert": ("DistilBertConfig", "DistilBertForSequenceClassification"),
    "vit": ("ViTConfig", "ViTForImageClassification"),
    "t5": ("T5Config", "T5ForConditionalGeneration"),
    "llama": ("LlamaConfig", "LlamaForCausalLM"),
    "mistral": ("MistralConfig", "MistralForCausalLM"),
    "qwen2": ("Qwen2Config", "Qwen2ForCausalLM"),
    "gemma": ("GemmaConfig", "GemmaForCausalLM"),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXForCausalLM"),
    "bart": ("BartConfig", "BartForConditionalGeneration"),
    "whisper": ("WhisperConfig", "WhisperForConditionalGeneration"),
    "mixtral": ("MixtralConfig", "MixtralForCausalLM"),
}
# The zoo's names (bench/zoo/run.py's) and their functions here.
MODELS = {name.replace("_", "-"): name for name in CLASSES}

# Keyword arguments every config class takes (PretrainedConfig's own), which
# some versions' subclasses do not list.
_COMMON_FIELDS = {"num_labels", "problem_type", "pad_token_id", "bos_token_id", "eos_token_id",
                  "decoder_start_token_id", "tie_word_embeddings", "attn_implementation"}


def preload():
    """Imports transformers and every zoo class: the harness calls this
    once in its runner, so that the processes it forks per row do not."""
    import transformers
    for names in CLASSES.values():
        for name in names:
            getattr(transformers, name)


# ---------------------------------------------------------------- helpers

def _shapes(full, tiny):
    """Declares a function's (batch, seq) per config, for the harness."""
    def declare(function):
        function.shapes = {"full": full, "tiny": tiny}
        return function
    return declare


def _pick(config, full, tiny):
    if config not in ("full", "tiny"):
        raise ValueError(f"config must be 'full' or 'tiny', not {config!r}")
    return full if config == "full" else tiny


def _named(config, family):
    """How a row's description names the model: the family, or a tiny one."""
    return family if config == "full" else f"tiny {family}"


def _generator():
    """The batch's own generator, seeded from the seed the harness set, so
    that the batch does not depend on how many numbers the model's
    initialisation drew."""
    return torch.Generator().manual_seed(torch.initial_seed() + 1)


def _model(name, **fields):
    """CLASSES[name]'s model from a config with `fields` (every other field
    the class's default), random weights, float32 on the CPU; SDPA attention
    where the class has it. A field the config class does not have is an
    error here rather than an attribute the model never reads."""
    import transformers
    config_class, model_class = (getattr(transformers, n) for n in CLASSES[name])
    if dataclasses.is_dataclass(config_class):  # transformers 5: configs are dataclasses
        known = {f.name for f in dataclasses.fields(config_class)}
    else:
        known = set(inspect.signature(config_class.__init__).parameters)
    known |= set(getattr(config_class, "attribute_map", {})) | _COMMON_FIELDS
    unknown = sorted(set(fields) - known)
    if unknown:
        raise TypeError(f"{config_class.__name__} has no field {', '.join(unknown)} in transformers "
                        f"{transformers.__version__}")
    if getattr(model_class, "_supports_sdpa", False):
        fields["attn_implementation"] = "sdpa"
    return model_class(config_class(**fields)).float()


def _matmul_parameters(module):
    """Matrix-product parameters of `module` that one token meets: experts
    at their share (top_k of them)."""
    from fuse.harness.workloads import matmul_parameters
    n = matmul_parameters(module)
    config = getattr(module, "config", None)
    experts, top_k = getattr(config, "num_local_experts", None), getattr(config, "num_experts_per_tok", None)
    if experts and top_k:
        routed = sum(p.numel() for name, p in module.named_parameters() if ".experts." in name)
        n -= routed * (1 - top_k / experts)
    return n


def _flops(model, layers, width, seq):
    """Training FLOPs per token of a one-stack model: 6·N + 12·L·(H·Q)·T."""
    return 6 * _matmul_parameters(model) + 12 * layers * width * seq


def _seq2seq_flops(model, encoder_layers, decoder_layers, width, encoder_len, decoder_len):
    """Training FLOPs of an encoder-decoder per encoder token: both stacks'
    6·N·tokens, self-attention over each stack's length and the decoder's
    cross-attention over the encoder's."""
    encoder = _matmul_parameters(model.get_encoder())
    decoder = _matmul_parameters(model) - encoder  # the decoder and the LM head
    total = (6 * (encoder * encoder_len + decoder * decoder_len)
             + 12 * width * (encoder_layers * encoder_len ** 2
                             + decoder_layers * (decoder_len ** 2 + decoder_len * encoder_len)))
    return total / encoder_len


def _dropout(model):
    """The largest dropout probability a training step of `model` uses: its
    nn.Dropout modules' and the config's dropout, layer-drop and router
    jitter fields' (attention dropout and BART's are functional), less
    those of heads the model does not have (GPT-NeoX's classifier_dropout
    in a causal LM)."""
    modules = [m.p for m in model.modules() if isinstance(m, torch.nn.Dropout)]
    fields = [value for name, value in vars(model.config).items()
              if any(word in name for word in ("dropout", "pdrop", "layerdrop", "jitter")) and isinstance(value, float)
              and not any(head in name for head in ("classifier", "classif_", "qa_", "summary"))]
    return max(modules + fields, default=0.0)


def _workload(model, inputs, infer_inputs, flops, what):
    params = sum(p.numel() for p in model.parameters())
    attention = getattr(model.config, "_attn_implementation", None) or "default"
    dropout = _dropout(model)
    return {"model": model, "batch": (inputs, ()), "infer_inputs": infer_inputs, "flops_per_token": flops,
            "stochastic": dropout > 0,
            "description": f"{type(model).__name__}, {params / 1e6:.1f}M parameters, {what}, "
                           f"attention {attention}, dropout {dropout:g} (the config's)"}


def _causal_lm(name, shape, what, **fields):
    """A decoder-only LM on random tokens; labels are the inputs (the model
    shifts them), the loss the model's."""
    model = _model(name, **fields)
    batch, seq = shape
    hf = model.config
    ids = torch.randint(0, hf.vocab_size, (batch, seq), generator=_generator())
    width = hf.num_attention_heads * (getattr(hf, "head_dim", None) or hf.hidden_size // hf.num_attention_heads)
    return _workload(model, {"input_ids": ids, "labels": ids}, {"input_ids": ids},
                     _flops(model, hf.num_hidden_layers, width, seq), f"{what}, B{batch} T{seq}")


def _padded(batch, seq, vocab, pad, generator):
    """Right-padded token ids and their attention mask: each row a length
    from seq/2 to seq (the first row full), ids from 3 up (clear of the
    usual special tokens), `pad` after the length."""
    lengths = torch.randint(seq // 2, seq + 1, (batch,), generator=generator)
    lengths[0] = seq
    mask = (torch.arange(seq)[None, :] < lengths[:, None]).long()
    ids = torch.randint(3, vocab, (batch, seq), generator=generator).masked_fill(mask == 0, pad)
    return ids, mask


def _padded_encoder(name, shape, what, task, **fields):
    """An encoder on a right-padded batch with its attention mask. task:
    "classify" (a label per sequence, the config's num_labels) or "mlm"
    (15% of the real tokens replaced by the last id, the mask token of
    RoBERTa's vocabulary, and predicted; -100 elsewhere)."""
    model = _model(name, **fields)
    batch, seq = shape
    hf = model.config
    generator = _generator()
    ids, mask = _padded(batch, seq, hf.vocab_size, hf.pad_token_id, generator)
    if task == "classify":
        labels = torch.randint(0, hf.num_labels, (batch,), generator=generator)
    else:
        chosen = (torch.rand(batch, seq, generator=generator) < 0.15) & mask.bool()
        chosen[0, 1] = True
        labels = ids.masked_fill(~chosen, -100)
        ids = ids.masked_fill(chosen, hf.vocab_size - 1)
    inputs = {"input_ids": ids, "attention_mask": mask}
    return _workload(model, dict(inputs, labels=labels), inputs,
                     _flops(model, hf.num_hidden_layers, hf.hidden_size, seq),
                     f"{what}, B{batch} T{seq} right-padded (lengths {seq // 2} to {seq})")


def _seq2seq(model, encoder_inputs, encoder_len, decoder_len, layers, width, what, generator):
    """An encoder-decoder trained on random labels (the model shifts them
    right into its decoder inputs); inference takes those decoder inputs.
    layers: (encoder layers, decoder layers)."""
    hf = model.config
    batch = next(iter(encoder_inputs.values())).shape[0]
    labels = torch.randint(3, hf.vocab_size, (batch, decoder_len), generator=generator)
    start = torch.full((batch, 1), hf.decoder_start_token_id, dtype=labels.dtype)
    decoder_input_ids = torch.cat([start, labels[:, :-1]], dim=1)
    return _workload(model, dict(encoder_inputs, labels=labels),
                     dict(encoder_inputs, decoder_input_ids=decoder_input_ids),
                     _seq2seq_flops(model, *layers, width, encoder_len, decoder_len),
                     f"{what}, B{batch}, encoder {encoder_len} -> decoder {decoder_len}")


# ---------------------------------------------------------------- models

@_shapes(full=(8, 1024), tiny=(2, 32))
def gpt2(config="full"):
    fields = _pick(config, dict(n_layer=12, n_embd=768, n_head=12, vocab_size=50257, n_positions=1024),
                   dict(n_layer=2, n_embd=64, n_head=4, vocab_size=TINY_VOCAB, n_positions=64))
    return _causal_lm("gpt2", gpt2.shapes[config], _named(config, "GPT-2 124M"), **fields)


@_shapes(full=(32, 128), tiny=(2, 16))
def bert(config="full"):
    fields = _pick(config, dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                                intermediate_size=3072, vocab_size=30522, max_position_embeddings=512),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                        vocab_size=TINY_VOCAB, max_position_embeddings=64))
    return _padded_encoder("bert", bert.shapes[config], _named(config, "BERT-base"), "classify",
                           num_labels=2, problem_type="single_label_classification", **fields)


@_shapes(full=(32, 128), tiny=(2, 16))
def roberta(config="full"):
    # Positions count from pad + 1 (RoBERTa's padding positions): 514 for 512 tokens.
    fields = _pick(config, dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                                intermediate_size=3072, vocab_size=50265, max_position_embeddings=514),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                        vocab_size=TINY_VOCAB, max_position_embeddings=66))
    return _padded_encoder("roberta", roberta.shapes[config], _named(config, "RoBERTa-base") + ", masked LM",
                           "mlm", type_vocab_size=1, pad_token_id=1, bos_token_id=0, eos_token_id=2, **fields)


@_shapes(full=(32, 128), tiny=(2, 16))
def distilbert(config="full"):
    fields = _pick(config, dict(n_layers=6, dim=768, n_heads=12, hidden_dim=3072, vocab_size=30522,
                                max_position_embeddings=512),
                   dict(n_layers=2, dim=64, n_heads=4, hidden_dim=256, vocab_size=TINY_VOCAB,
                        max_position_embeddings=64))
    return _padded_encoder("distilbert", distilbert.shapes[config], _named(config, "DistilBERT-base"), "classify",
                           num_labels=2, problem_type="single_label_classification", **fields)


@_shapes(full=(32, 197), tiny=(2, 17))
def vit(config="full"):
    # seq: the patches and the class token, (224 / 16)² + 1.
    fields = _pick(config, dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                                intermediate_size=3072, image_size=224, patch_size=16, num_labels=1000),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                        image_size=32, patch_size=8, num_labels=10))
    model = _model("vit", problem_type="single_label_classification", **fields)
    batch, seq = vit.shapes[config]
    hf = model.config
    generator = _generator()
    pixels = torch.randn(batch, hf.num_channels, hf.image_size, hf.image_size, generator=generator)
    labels = torch.randint(0, hf.num_labels, (batch,), generator=generator)
    return _workload(model, {"pixel_values": pixels, "labels": labels}, {"pixel_values": pixels},
                     _flops(model, hf.num_hidden_layers, hf.hidden_size, seq),
                     f"{_named(config, 'ViT-B/16')}, B{batch} {hf.image_size}x{hf.image_size} ({seq} tokens), "
                     f"{hf.num_labels} classes")


@_shapes(full=(8, 512), tiny=(2, 32))
def t5(config="full"):
    # decoder_start_token_id: T5's is its pad id, 0; transformers 5's T5Config no longer sets it.
    fields = _pick(config, dict(num_layers=6, num_decoder_layers=6, d_model=512, d_kv=64, num_heads=8, d_ff=2048,
                                vocab_size=32128),
                   dict(num_layers=2, num_decoder_layers=2, d_model=64, d_kv=16, num_heads=4, d_ff=128,
                        vocab_size=TINY_VOCAB))
    model = _model("t5", feed_forward_proj="relu", decoder_start_token_id=0, **fields)
    batch, seq = t5.shapes[config]
    hf = model.config
    generator = _generator()
    ids = torch.randint(3, hf.vocab_size, (batch, seq), generator=generator)
    return _seq2seq(model, {"input_ids": ids}, seq, _pick(config, 128, 16), (hf.num_layers, hf.num_decoder_layers),
                    hf.num_heads * hf.d_kv, _named(config, "T5-small") + ", relative position buckets", generator)


@_shapes(full=(4, 1024), tiny=(2, 32))
def llama(config="full"):
    fields = _pick(config, dict(num_hidden_layers=8, hidden_size=1024, num_attention_heads=16,
                                num_key_value_heads=16, intermediate_size=2816, vocab_size=32000),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=4,
                        intermediate_size=176, vocab_size=TINY_VOCAB))
    return _causal_lm("llama", llama.shapes[config], _named(config, "Llama-style"), **fields)


@_shapes(full=(4, 1024), tiny=(2, 32))
def mistral(config="full"):
    fields = _pick(config, dict(num_hidden_layers=8, hidden_size=1024, num_attention_heads=16,
                                num_key_value_heads=8, intermediate_size=3584, vocab_size=32000),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                        intermediate_size=224, vocab_size=TINY_VOCAB))
    return _causal_lm("mistral", mistral.shapes[config], _named(config, "Mistral-style") + ", grouped-query attention",
                      **fields)


@_shapes(full=(4, 1024), tiny=(2, 32))
def qwen2(config="full"):
    fields = _pick(config, dict(num_hidden_layers=24, hidden_size=896, num_attention_heads=14,
                                num_key_value_heads=2, intermediate_size=4864, vocab_size=151936),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                        intermediate_size=128, vocab_size=TINY_VOCAB))
    return _causal_lm("qwen2", qwen2.shapes[config], _named(config, "Qwen2-0.5B") + ", tied embeddings",
                      tie_word_embeddings=True, **fields)


@_shapes(full=(4, 1024), tiny=(2, 32))
def gemma(config="full"):
    fields = _pick(config, dict(num_hidden_layers=8, hidden_size=1024, num_attention_heads=8,
                                num_key_value_heads=1, head_dim=128, intermediate_size=8192, vocab_size=256000),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=1,
                        head_dim=16, intermediate_size=256, vocab_size=TINY_VOCAB))
    return _causal_lm("gemma", gemma.shapes[config], _named(config, "Gemma-style") + ", multi-query attention",
                      **fields)


@_shapes(full=(8, 1024), tiny=(2, 32))
def gpt_neox(config="full"):
    # Partial rotary (a quarter of each head) and parallel residuals are the config's defaults, as in Pythia.
    fields = _pick(config, dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                                intermediate_size=3072, vocab_size=50304, max_position_embeddings=2048),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, intermediate_size=256,
                        vocab_size=TINY_VOCAB, max_position_embeddings=64))
    return _causal_lm("gpt_neox", gpt_neox.shapes[config], _named(config, "Pythia-160M"), **fields)


@_shapes(full=(8, 256), tiny=(2, 32))
def bart(config="full"):
    layers, heads, ffn, width, vocab, positions = _pick(config, (6, 12, 3072, 768, 50265, 1024),
                                                        (2, 4, 128, 64, TINY_VOCAB, 64))
    model = _model("bart", encoder_layers=layers, decoder_layers=layers, encoder_attention_heads=heads,
                   decoder_attention_heads=heads, encoder_ffn_dim=ffn, decoder_ffn_dim=ffn, d_model=width,
                   vocab_size=vocab, max_position_embeddings=positions, decoder_start_token_id=2)
    batch, seq = bart.shapes[config]
    hf = model.config
    generator = _generator()
    ids, mask = _padded(batch, seq, hf.vocab_size, hf.pad_token_id, generator)
    return _seq2seq(model, {"input_ids": ids, "attention_mask": mask}, seq, _pick(config, 64, 16),
                    (hf.encoder_layers, hf.decoder_layers), hf.d_model,
                    _named(config, "BART-base") + f", encoder right-padded (lengths {seq // 2} to {seq})", generator)


@_shapes(full=(8, 1500), tiny=(2, 16))
def whisper(config="full"):
    # seq: the encoder's positions; it takes exactly twice as many frames
    # (two convolutions, the second of stride 2). The tiny vocabulary needs
    # its special tokens inside it.
    batch, seq = whisper.shapes[config]
    fields = _pick(config, dict(d_model=512, encoder_layers=6, decoder_layers=6, encoder_attention_heads=8,
                                decoder_attention_heads=8, encoder_ffn_dim=2048, decoder_ffn_dim=2048,
                                num_mel_bins=80, vocab_size=51865, max_target_positions=448),
                   dict(d_model=64, encoder_layers=2, decoder_layers=2, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=16,
                        vocab_size=TINY_VOCAB, max_target_positions=32, pad_token_id=TINY_VOCAB - 2,
                        bos_token_id=TINY_VOCAB - 1, eos_token_id=TINY_VOCAB - 2,
                        decoder_start_token_id=TINY_VOCAB - 1))
    model = _model("whisper", max_source_positions=seq, **fields)
    hf = model.config
    generator = _generator()
    features = torch.randn(batch, hf.num_mel_bins, 2 * seq, generator=generator)
    return _seq2seq(model, {"input_features": features}, seq, _pick(config, 128, 8),
                    (hf.encoder_layers, hf.decoder_layers), hf.d_model,
                    _named(config, "Whisper-base") + f", {hf.num_mel_bins} mel bins x {2 * seq} frames", generator)


@_shapes(full=(4, 1024), tiny=(2, 32))
def mixtral(config="full"):
    fields = _pick(config, dict(num_hidden_layers=4, hidden_size=512, num_attention_heads=8,
                                num_key_value_heads=2, intermediate_size=1792, vocab_size=32000),
                   dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                        intermediate_size=128, vocab_size=TINY_VOCAB))
    return _causal_lm("mixtral", mixtral.shapes[config], _named(config, "Mixtral-style") + ", 8 experts, top 2",
                      num_local_experts=8, num_experts_per_tok=2, **fields)
