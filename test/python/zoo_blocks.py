"""Small plain-PyTorch blocks with the ops that set each transformer family
apart, written after the HuggingFace implementations (no transformers
needed): what an unseen model brings to the exporter. Each block takes
token ids (or pixels, or features) and returns logits; the tests train and
infer them through the exporter on the CPU reference interpreter.

  roberta     position ids from the padding mask (cumsum), an additive
              mask from padding, post-LN, erf GELU
  distilbert  masked_fill of the scores with finfo.min where padded
  t5          relative position buckets (log, where, min), RMSNorm without
              mean or bias, unscaled attention with a float bias, ReLU,
              an encoder-decoder with cross attention
  gemma       embedding scaled by sqrt(d), RMSNorm with (1 + weight),
              one key-value head, GeGLU (tanh GELU), rotary
  neox        fused QKV split by view, partial rotary (a quarter of the
              head), parallel residual
  vit         a patch-embedding convolution, a class token concatenated,
              learnt position embeddings, pre-LN
  whisper     a 1-D convolution front end with GELU, sinusoidal positions
  bloom       ALiBi: per-head slopes times key positions added to the
              scores (baddbmm), an embedding layer norm
  mistral     a sliding-window causal mask, grouped-query attention,
              biases on Q, K and V (Qwen2)
  deberta     disentangled attention: content-to-position scores gathered
              (torch.gather) at clamped relative positions
  gptj        rotary on interleaved pairs (x[..., ::2], x[..., 1::2],
              stacked and flattened back)
  clip        quick GELU (x * sigmoid(1.702 x)), F.normalize, a learnt
              logit scale, the contrastive loss over in-batch pairs
  convnext    a depthwise 7x7 convolution, LayerNorm channels-last through
              permutes, layer scale, stochastic depth (drop_path=True: its
              bits are Fuse's own Philox, so it is not compared with torch)
  swin        a cyclic shift (torch.roll) and window partition reshapes
  wav2vec2    a grouped convolution with weight normalisation as the
              position embedding
  falcon      multi-query attention from one fused projection split by
              view (all query heads, then one key and one value head),
              key/value expanded, parallel attention and MLP
  bart        learned positions offset by 2, scaled embeddings, an
              embedding layer norm, post-LN encoder-decoder with cross
              attention
  moe         a top-2 router over experts (topk, through Fuse's own
              decomposition; its backward a scatter)
  moe-sorted  the router's tokens also ranked with a sort (as grouped
              expert matmuls order them): no fuse op for sort, so the
              exporter must name it (the backend then runs it in torch,
              dynamo/_partition.py)
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

VOCAB, D, HEADS, T, B = 64, 32, 4, 12, 2
PAD = 1


def _attention_by_hand(q, k, v, attn_mask=None, is_causal=False):
    """F.scaled_dot_product_attention's math, for torch 1.13 (which lacks it)."""
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if is_causal:
        t, s = scores.shape[-2:]
        scores = scores.masked_fill(torch.ones(t, s, dtype=torch.bool).triu(1), float("-inf"))
    if attn_mask is not None:
        scores = scores + attn_mask
    return torch.softmax(scores, dim=-1) @ v


sdpa = getattr(F, "scaled_dot_product_attention", _attention_by_hand)


def token_batch(seed=0, padded=True):
    """Token ids [B, T] (right-padded rows of varied length) and targets."""
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(2, VOCAB, (B, T), generator=generator)
    if padded:
        ids[0, T - 4:] = PAD
        ids[1, T - 1:] = PAD
    targets = torch.randint(0, VOCAB, (B, T), generator=generator)
    return ids, targets


def split_heads(x, heads):
    b, t, d = x.shape
    return x.view(b, t, heads, d // heads).transpose(1, 2)


def merge_heads(x):
    b, h, t, d = x.shape
    return x.transpose(1, 2).reshape(b, t, h * d)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rotary(positions, dim, base=10000.0):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    freqs = positions.float()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class RobertaBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.positions = nn.Embedding(T + PAD + 1, D, padding_idx=PAD)
        self.norm0 = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.out = nn.Linear(D, D)
        self.norm1 = nn.LayerNorm(D)
        self.up, self.down = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)
        self.norm2 = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):
        mask = ids.ne(PAD).int()
        positions = (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + PAD
        x = self.norm0(self.tokens(ids) + self.positions(positions))
        additive = (1.0 - mask[:, None, None, :].float()) * torch.finfo(torch.float32).min
        q, k, v = (split_heads(p, HEADS) for p in self.qkv(x).chunk(3, dim=-1))
        a = sdpa(q, k, v, attn_mask=additive)
        x = self.norm1(x + self.out(merge_heads(a)))
        x = self.norm2(x + self.down(F.gelu(self.up(x))))
        return self.head(x)


class DistilBertBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.positions = nn.Embedding(T, D)
        self.norm0 = nn.LayerNorm(D, eps=1e-12)
        self.q, self.k, self.v, self.o = (nn.Linear(D, D) for _ in range(4))
        self.norm1 = nn.LayerNorm(D, eps=1e-12)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):
        mask = ids.ne(PAD)
        x = self.norm0(self.tokens(ids) + self.positions(torch.arange(ids.shape[1])))
        q = split_heads(self.q(x), HEADS) / math.sqrt(D // HEADS)
        k, v = split_heads(self.k(x), HEADS), split_heads(self.v(x), HEADS)
        scores = q @ k.transpose(-1, -2)
        scores = scores.masked_fill((mask == 0)[:, None, None, :], torch.finfo(scores.dtype).min)
        a = torch.softmax(scores, dim=-1) @ v
        x = self.norm1(x + self.o(merge_heads(a)))
        return self.head(x)


def t5_buckets(query_length, key_length, bidirectional, buckets=8, max_distance=16):
    context = torch.arange(query_length)[:, None]
    memory = torch.arange(key_length)[None, :]
    relative = memory - context
    result = torch.zeros_like(relative)
    if bidirectional:
        buckets //= 2
        result += (relative > 0).long() * buckets
        relative = torch.abs(relative)
    else:
        relative = -torch.min(relative, torch.zeros_like(relative))
    exact = buckets // 2
    small = relative < exact
    large = exact + (torch.log(relative.float() / exact) / math.log(max_distance / exact)
                     * (buckets - exact)).long()
    large = torch.min(large, torch.full_like(large, buckets - 1))
    return result + torch.where(small, relative, large)


class T5Norm(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(D) + 0.1 * torch.randn(D))

    def forward(self, x):
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + 1e-6))


class T5Attention(nn.Module):
    def __init__(self, bias):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(D, D, bias=False) for _ in range(4))
        self.bias = nn.Embedding(8, HEADS) if bias else None

    def forward(self, x, memory, bidirectional, position_bias=None, mask=None):
        q, k, v = split_heads(self.q(x), HEADS), split_heads(self.k(memory), HEADS), split_heads(self.v(memory), HEADS)
        if position_bias is None:
            buckets = t5_buckets(x.shape[1], memory.shape[1], bidirectional)
            position_bias = self.bias(buckets).permute(2, 0, 1)[None]
            if mask is not None:
                position_bias = position_bias + mask
        scores = q @ k.transpose(-1, -2) + position_bias  # T5 does not scale
        return self.o(merge_heads(torch.softmax(scores.float(), dim=-1).type_as(scores) @ v)), position_bias


class T5Block(nn.Module):
    """One encoder layer and one decoder layer (self and cross attention)."""

    def __init__(self):
        super().__init__()
        self.shared = nn.Embedding(VOCAB, D)
        self.enc_norm, self.enc_attn = T5Norm(), T5Attention(bias=True)
        self.enc_ff_norm, self.enc_wi, self.enc_wo = T5Norm(), nn.Linear(D, 2 * D, bias=False), nn.Linear(2 * D, D, bias=False)
        self.enc_final = T5Norm()
        self.dec_norm, self.dec_attn = T5Norm(), T5Attention(bias=True)
        self.cross_norm, self.cross_attn = T5Norm(), T5Attention(bias=False)
        self.dec_final = T5Norm()
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids, decoder_ids):
        x = self.shared(ids)
        a, _ = self.enc_attn(self.enc_norm(x), self.enc_norm(x), True)
        x = x + a
        x = x + self.enc_wo(F.relu(self.enc_wi(self.enc_ff_norm(x))))
        memory = self.enc_final(x)
        y = self.shared(decoder_ids)
        t = decoder_ids.shape[1]
        causal = torch.triu(torch.full((t, t), torch.finfo(torch.float32).min), diagonal=1)
        a, _ = self.dec_attn(self.dec_norm(y), self.dec_norm(y), False, mask=causal)
        y = y + a
        zero_bias = torch.zeros(1, HEADS, t, memory.shape[1])
        c, _ = self.cross_attn(self.cross_norm(y), memory, True, position_bias=zero_bias)
        y = self.dec_final(y + c)
        return self.head(y * D ** -0.5)


class GemmaBlock(nn.Module):
    KV_HEADS, HEAD_DIM = 1, 16

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.norm_weight = nn.Parameter(0.1 * torch.randn(D))
        self.q = nn.Linear(D, HEADS * self.HEAD_DIM, bias=False)
        self.kv = nn.Linear(D, 2 * self.KV_HEADS * self.HEAD_DIM, bias=False)
        self.o = nn.Linear(HEADS * self.HEAD_DIM, D, bias=False)
        self.gate, self.up = nn.Linear(D, 2 * D, bias=False), nn.Linear(D, 2 * D, bias=False)
        self.down = nn.Linear(2 * D, D, bias=False)

    def norm(self, x):
        x32 = x.float()
        y = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + 1e-6)
        return (y * (1.0 + self.norm_weight.float())).type_as(x)

    def forward(self, ids):
        x = self.tokens(ids) * torch.tensor(D ** 0.5, dtype=torch.float32)
        h = self.norm(x)
        b, t, _ = h.shape
        q = self.q(h).view(b, t, HEADS, self.HEAD_DIM).transpose(1, 2)
        k, v = self.kv(h).view(b, t, 2, self.KV_HEADS, self.HEAD_DIM).permute(2, 0, 3, 1, 4)
        cos, sin = rotary(torch.arange(t), self.HEAD_DIM)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k = k[:, :, None].expand(b, self.KV_HEADS, HEADS // self.KV_HEADS, t, self.HEAD_DIM).reshape(b, HEADS, t, -1)
        v = v[:, :, None].expand(b, self.KV_HEADS, HEADS // self.KV_HEADS, t, self.HEAD_DIM).reshape(b, HEADS, t, -1)
        a = sdpa(q, k, v, is_causal=True)
        x = x + self.o(merge_heads(a))
        h = self.norm(x)
        x = x + self.down(F.gelu(self.gate(h), approximate="tanh") * self.up(h))
        return self.norm(x) @ self.tokens.weight.t()


class NeoXBlock(nn.Module):
    ROTARY = 2  # of the head's 8 dimensions

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.ln_attn, self.ln_mlp, self.ln_final = nn.LayerNorm(D), nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv = nn.Linear(D, 3 * D)
        self.dense = nn.Linear(D, D)
        self.up, self.down = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        x = self.tokens(ids)
        b, t, _ = x.shape
        qkv = self.qkv(self.ln_attn(x)).view(b, t, HEADS, 3 * (D // HEADS)).permute(0, 2, 1, 3)
        q, k, v = qkv.chunk(3, dim=-1)
        cos, sin = rotary(torch.arange(t), self.ROTARY)
        q_rot, q_pass = q[..., :self.ROTARY], q[..., self.ROTARY:]
        k_rot, k_pass = k[..., :self.ROTARY], k[..., self.ROTARY:]
        q = torch.cat((q_rot * cos + rotate_half(q_rot) * sin, q_pass), dim=-1)
        k = torch.cat((k_rot * cos + rotate_half(k_rot) * sin, k_pass), dim=-1)
        a = sdpa(q, k, v, is_causal=True)
        # Parallel residual: attention and MLP both read x.
        x = x + self.dense(merge_heads(a)) + self.down(F.gelu(self.up(self.ln_mlp(x))))
        return self.head(self.ln_final(x))


class ViTBlock(nn.Module):
    PATCH, IMAGE, CLASSES = 4, 8, 10

    def __init__(self):
        super().__init__()
        self.patches = nn.Conv2d(3, D, kernel_size=self.PATCH, stride=self.PATCH)
        count = (self.IMAGE // self.PATCH) ** 2
        self.cls = nn.Parameter(0.02 * torch.randn(1, 1, D))
        self.positions = nn.Parameter(0.02 * torch.randn(1, count + 1, D))
        self.norm1, self.norm2, self.norm3 = nn.LayerNorm(D, eps=1e-12), nn.LayerNorm(D, eps=1e-12), nn.LayerNorm(D)
        self.qkv, self.o = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.up, self.down = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)
        self.head = nn.Linear(D, self.CLASSES)

    def forward(self, pixels):
        x = self.patches(pixels).flatten(2).transpose(1, 2)
        x = torch.cat((self.cls.expand(x.shape[0], -1, -1), x), dim=1) + self.positions
        q, k, v = (split_heads(p, HEADS) for p in self.qkv(self.norm1(x)).chunk(3, dim=-1))
        x = x + self.o(merge_heads(sdpa(q, k, v)))
        x = x + self.down(F.gelu(self.up(self.norm2(x))))
        return self.head(self.norm3(x)[:, 0])


class WhisperEncoderBlock(nn.Module):
    MELS, FRAMES, CLASSES = 8, 24, 10

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv1d(self.MELS, D, kernel_size=3, padding=1)
        self.conv2 = nn.Conv1d(D, D, kernel_size=3, stride=2, padding=1)
        frames = self.FRAMES // 2
        inv = torch.exp(-math.log(10000) / (D // 2 - 1) * torch.arange(D // 2))
        scaled = torch.arange(frames)[:, None] * inv[None, :]
        self.register_buffer("positions", torch.cat([scaled.sin(), scaled.cos()], dim=1))
        self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D)
        self.q, self.k, self.v, self.o = nn.Linear(D, D), nn.Linear(D, D, bias=False), nn.Linear(D, D), nn.Linear(D, D)
        self.head = nn.Linear(D, self.CLASSES)

    def forward(self, features):
        x = F.gelu(self.conv2(F.gelu(self.conv1(features)))).permute(0, 2, 1) + self.positions
        h = self.norm1(x)
        q, k, v = split_heads(self.q(h), HEADS), split_heads(self.k(h), HEADS), split_heads(self.v(h), HEADS)
        x = x + self.o(merge_heads(sdpa(q, k, v)))
        return self.head(self.norm2(x).mean(dim=1))


class BloomBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.embed_norm, self.norm1, self.norm2 = nn.LayerNorm(D), nn.LayerNorm(D), nn.LayerNorm(D)
        self.qkv, self.dense = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.up, self.down = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        slopes = torch.tensor([2 ** (-8 * (i + 1) / HEADS) for i in range(HEADS)])
        self.register_buffer("slopes", slopes)

    def forward(self, ids):
        x = self.embed_norm(self.tokens(ids))
        b, t, _ = x.shape
        alibi = (self.slopes[:, None, None] * torch.arange(t)[None, None, :]).repeat(b, 1, 1)  # [B*H, 1, T]
        alibi = alibi.reshape(b * HEADS, 1, t)
        q, k, v = (split_heads(p, HEADS).reshape(b * HEADS, t, -1) for p in self.qkv(self.norm1(x)).chunk(3, dim=-1))
        scores = torch.baddbmm(alibi, q, k.transpose(1, 2), beta=1.0, alpha=(D // HEADS) ** -0.5)
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        scores = scores.masked_fill(causal, torch.finfo(scores.dtype).min)
        a = torch.bmm(torch.softmax(scores, dim=-1), v).view(b, HEADS, t, -1)
        x = x + self.dense(merge_heads(a))
        x = x + self.down(F.gelu(self.up(self.norm2(x)), approximate="tanh"))
        return x @ self.tokens.weight.t()


class MistralBlock(nn.Module):
    KV_HEADS, WINDOW = 2, 4

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.norm = nn.Parameter(1.0 + 0.1 * torch.randn(D))
        self.q = nn.Linear(D, D)
        self.k, self.v = nn.Linear(D, D // 2), nn.Linear(D, D // 2)
        self.o = nn.Linear(D, D, bias=False)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        x = self.tokens(ids)
        h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.norm
        b, t, _ = h.shape
        q, k, v = split_heads(self.q(h), HEADS), split_heads(self.k(h), self.KV_HEADS), split_heads(self.v(h), self.KV_HEADS)
        k = torch.repeat_interleave(k, HEADS // self.KV_HEADS, dim=1)
        v = torch.repeat_interleave(v, HEADS // self.KV_HEADS, dim=1)
        i, j = torch.arange(t)[:, None], torch.arange(t)[None, :]
        allowed = (j <= i) & (i - j < self.WINDOW)
        mask = torch.zeros(t, t).masked_fill(~allowed, float("-inf"))
        a = sdpa(q, k, v, attn_mask=mask)
        return self.head(x + self.o(merge_heads(a)))


class DebertaBlock(nn.Module):
    SPAN = 4

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.relative = nn.Embedding(2 * self.SPAN, D)
        self.q, self.k, self.v, self.pos_k = (nn.Linear(D, D) for _ in range(4))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):
        x = self.tokens(ids)
        b, t, _ = x.shape
        q, k, v = split_heads(self.q(x), HEADS), split_heads(self.k(x), HEADS), split_heads(self.v(x), HEADS)
        pos_k = split_heads(self.pos_k(self.relative.weight)[None], HEADS)  # [1, H, 2S, d]
        relative = torch.arange(t)[None, :] - torch.arange(t)[:, None]
        index = torch.clamp(relative + self.SPAN, 0, 2 * self.SPAN - 1)
        c2p = q @ pos_k.transpose(-1, -2)  # [B, H, T, 2S]
        c2p = torch.gather(c2p, dim=-1, index=index[None, None].expand(b, HEADS, t, t))
        scores = (q @ k.transpose(-1, -2) + c2p) / math.sqrt(2 * (D // HEADS))
        a = torch.softmax(scores, dim=-1) @ v
        return self.head(self.norm(x + merge_heads(a)))


class MoeBlock(nn.Module):
    EXPERTS, TOP = 4, 2

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.router = nn.Linear(D, self.EXPERTS, bias=False)
        self.experts = nn.ModuleList(nn.Linear(D, D) for _ in range(self.EXPERTS))
        self.head = nn.Linear(D, VOCAB)

    def forward(self, ids):
        x = self.tokens(ids)
        weights = torch.softmax(self.router(x), dim=-1)
        top, chosen = torch.topk(weights, self.TOP, dim=-1)
        picked = (chosen[..., None] == torch.arange(self.EXPERTS)).float()  # one-hot, without F.one_hot's check
        gate = (picked * (top / top.sum(-1, keepdim=True))[..., None]).sum(-2)
        mixed = sum(gate[..., e:e + 1] * expert(x) for e, expert in enumerate(self.experts))
        return self.head(x + mixed)


class SortedMoeBlock(MoeBlock):
    def forward(self, ids):
        ranked, _ = torch.sort(torch.softmax(self.router(self.tokens(ids)), dim=-1), dim=-1)
        return super().forward(ids) + ranked[..., -1:]


class GPTJBlock(nn.Module):
    ROTARY = 4

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.norm = nn.LayerNorm(D)
        self.q, self.k, self.v = (nn.Linear(D, D, bias=False) for _ in range(3))
        self.o = nn.Linear(D, D, bias=False)
        self.up, self.down = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.head = nn.Linear(D, VOCAB)

    @staticmethod
    def rotate_every_two(x):
        x1, x2 = x[..., ::2], x[..., 1::2]
        return torch.stack((-x2, x1), dim=-1).flatten(-2)

    def rotate(self, x, sin, cos):
        rot, rest = x[..., :self.ROTARY], x[..., self.ROTARY:]
        return torch.cat((rot * cos + self.rotate_every_two(rot) * sin, rest), dim=-1)

    def forward(self, ids):
        x = self.tokens(ids)
        h = self.norm(x)
        t = ids.shape[1]
        inv = 1.0 / (10000 ** (torch.arange(0, self.ROTARY, 2).float() / self.ROTARY))
        angles = torch.arange(t).float()[:, None] * inv[None, :]
        sin = torch.repeat_interleave(angles.sin(), 2, dim=-1)
        cos = torch.repeat_interleave(angles.cos(), 2, dim=-1)
        q = self.rotate(split_heads(self.q(h), HEADS), sin, cos)
        k = self.rotate(split_heads(self.k(h), HEADS), sin, cos)
        a = sdpa(q, k, split_heads(self.v(h), HEADS), is_causal=True)
        x = x + self.o(merge_heads(a)) + self.down(F.gelu(self.up(h), approximate="tanh"))
        return self.head(x)


class CLIPBlock(nn.Module):
    """A text tower and an image tower of one layer each, and CLIP's
    contrastive loss over the batch."""

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.text_norm, self.text_fc1, self.text_fc2 = nn.LayerNorm(D), nn.Linear(D, 2 * D), nn.Linear(2 * D, D)
        self.text_proj = nn.Linear(D, D, bias=False)
        self.image = nn.Linear(3 * 16, D)
        self.image_norm, self.image_proj = nn.LayerNorm(D), nn.Linear(D, D, bias=False)
        self.logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))

    def forward(self, ids, pixels):
        x = self.tokens(ids)
        h = self.text_fc1(self.text_norm(x))
        x = x + self.text_fc2(h * torch.sigmoid(1.702 * h))
        text = self.text_proj(x[torch.arange(x.shape[0]), ids.argmax(dim=-1)])
        patches = pixels.reshape(pixels.shape[0], 3, 4, 4, 4, 4).permute(0, 2, 4, 1, 3, 5).flatten(3).flatten(1, 2)
        image = self.image_proj(self.image_norm(self.image(patches)).mean(dim=1))
        text, image = F.normalize(text, dim=-1), F.normalize(image, dim=-1)
        return self.logit_scale.exp() * text @ image.t()


def clip_loss(logits):
    labels = torch.arange(logits.shape[0])
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2


class ConvNeXtBlock(nn.Module):
    CLASSES = 10

    def __init__(self, drop_path=False):
        super().__init__()
        self.drop_path = drop_path
        self.stem = nn.Conv2d(3, D, kernel_size=2, stride=2)
        self.depthwise = nn.Conv2d(D, D, kernel_size=7, padding=3, groups=D)
        self.norm = nn.LayerNorm(D, eps=1e-6)
        self.up, self.down = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)
        self.gamma = nn.Parameter(1e-1 * torch.ones(D))
        self.head = nn.Linear(D, self.CLASSES)

    def forward(self, pixels):
        x = self.stem(pixels)
        h = self.depthwise(x).permute(0, 2, 3, 1)  # channels last
        h = self.gamma * self.down(F.gelu(self.up(self.norm(h))))
        h = h.permute(0, 3, 1, 2)
        if self.training and self.drop_path:  # stochastic depth, one draw a sample
            keep = torch.rand(h.shape[0], 1, 1, 1).add(0.9).floor()
            h = h / 0.9 * keep
        x = x + h
        return self.head(x.mean(dim=(2, 3)))


class SwinBlock(nn.Module):
    WINDOW, SHIFT, SIDE, CLASSES = 2, 1, 4, 10

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, D)
        self.norm = nn.LayerNorm(D)
        self.qkv, self.o = nn.Linear(D, 3 * D), nn.Linear(D, D)
        self.head = nn.Linear(D, self.CLASSES)

    def forward(self, pixels):
        b = pixels.shape[0]
        x = self.embed(pixels.permute(0, 2, 3, 1))  # [B, S, S, D]
        h = torch.roll(self.norm(x), shifts=(-self.SHIFT, -self.SHIFT), dims=(1, 2))
        w, n = self.WINDOW, self.SIDE // self.WINDOW
        windows = h.view(b, n, w, n, w, D).permute(0, 1, 3, 2, 4, 5).reshape(b * n * n, w * w, D)
        q, k, v = (split_heads(p, HEADS) for p in self.qkv(windows).chunk(3, dim=-1))
        a = self.o(merge_heads(sdpa(q, k, v)))
        a = a.view(b, n, n, w, w, D).permute(0, 1, 3, 2, 4, 5).reshape(b, self.SIDE, self.SIDE, D)
        x = x + torch.roll(a, shifts=(self.SHIFT, self.SHIFT), dims=(1, 2))
        return self.head(x.mean(dim=(1, 2)))


class Wav2Vec2Block(nn.Module):
    FRAMES, CLASSES = 16, 10

    def __init__(self):
        super().__init__()
        self.features = nn.Conv1d(1, D, kernel_size=4, stride=4)
        self.position = nn.utils.weight_norm(nn.Conv1d(D, D, kernel_size=3, padding=1, groups=4), name="weight", dim=2)
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, self.CLASSES)

    def forward(self, audio):
        x = F.gelu(self.features(audio[:, None]))  # [B, D, T]
        x = x + F.gelu(self.position(x))
        return self.head(self.norm(x.transpose(1, 2)).mean(dim=1))


class FalconBlock(nn.Module):
    HEAD = D // HEADS

    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(VOCAB, D)
        self.norm = nn.LayerNorm(D)
        self.qkv = nn.Linear(D, D + 2 * self.HEAD, bias=False)
        self.dense = nn.Linear(D, D, bias=False)
        self.up, self.down = nn.Linear(D, 4 * D, bias=False), nn.Linear(4 * D, D, bias=False)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, ids):
        x = self.tokens(ids)
        h = self.norm(x)
        b, t, _ = h.shape
        fused = self.qkv(h).view(b, t, HEADS + 2, self.HEAD)
        q = fused[:, :, :-2].transpose(1, 2)
        k = fused[:, :, [-2]].transpose(1, 2).expand(b, HEADS, t, self.HEAD)
        v = fused[:, :, [-1]].transpose(1, 2).expand(b, HEADS, t, self.HEAD)
        a = sdpa(q, k, v, is_causal=True)
        x = x + self.dense(merge_heads(a)) + self.down(F.gelu(self.up(h)))
        return self.head(x)


class BartBlock(nn.Module):
    OFFSET = 2

    def __init__(self):
        super().__init__()
        self.shared = nn.Embedding(VOCAB, D, padding_idx=PAD)
        self.enc_positions = nn.Embedding(T + self.OFFSET, D)
        self.dec_positions = nn.Embedding(T + self.OFFSET, D)
        self.enc_embed_norm, self.dec_embed_norm = nn.LayerNorm(D), nn.LayerNorm(D)
        self.enc_attn, self.dec_attn, self.cross = (nn.MultiheadAttention(D, HEADS, batch_first=True)
                                                    for _ in range(3))
        self.enc_norm, self.dec_norm1, self.dec_norm2 = nn.LayerNorm(D), nn.LayerNorm(D), nn.LayerNorm(D)
        self.fc1, self.fc2 = nn.Linear(D, 2 * D), nn.Linear(2 * D, D)
        self.dec_norm3 = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def embed(self, ids, positions, norm):
        scale = math.sqrt(D)
        where = torch.arange(ids.shape[1]) + self.OFFSET
        return norm(self.shared(ids) * scale + positions(where))

    def forward(self, ids, decoder_ids):
        x = self.embed(ids, self.enc_positions, self.enc_embed_norm)
        padding = ids.eq(PAD)
        x = self.enc_norm(x + self.enc_attn(x, x, x, key_padding_mask=padding, need_weights=False)[0])
        y = self.embed(decoder_ids, self.dec_positions, self.dec_embed_norm)
        t = decoder_ids.shape[1]
        causal = torch.ones(t, t, dtype=torch.bool).triu(1)
        y = self.dec_norm1(y + self.dec_attn(y, y, y, attn_mask=causal, need_weights=False)[0])
        y = self.dec_norm2(y + self.cross(y, x, x, key_padding_mask=padding, need_weights=False)[0])
        y = self.dec_norm3(y + self.fc2(F.gelu(self.fc1(y))))
        return self.head(y)


def batch_for(name, seed=0):
    """(inputs tuple, targets tensor, loss function) for block `name`."""
    generator = torch.Generator().manual_seed(seed)
    if name == "vit":
        pixels = torch.randn(B, 3, ViTBlock.IMAGE, ViTBlock.IMAGE, generator=generator)
        return (pixels,), torch.randint(0, ViTBlock.CLASSES, (B,), generator=generator), F.cross_entropy
    if name in ("convnext", "swin"):
        side = 8 if name == "convnext" else SwinBlock.SIDE
        pixels = torch.randn(B, 3, side, side, generator=generator)
        return (pixels,), torch.randint(0, 10, (B,), generator=generator), F.cross_entropy
    if name == "wav2vec2":
        audio = torch.randn(B, 4 * Wav2Vec2Block.FRAMES, generator=generator)
        return (audio,), torch.randint(0, 10, (B,), generator=generator), F.cross_entropy
    if name == "clip":
        ids, _ = token_batch(seed, padded=False)
        pixels = torch.randn(B, 3, 16, 16, generator=generator)
        return (ids, pixels), None, clip_loss
    if name == "whisper":
        features = torch.randn(B, WhisperEncoderBlock.MELS, WhisperEncoderBlock.FRAMES, generator=generator)
        targets = torch.randint(0, WhisperEncoderBlock.CLASSES, (B,), generator=generator)
        return (features,), targets, F.cross_entropy
    ids, targets = token_batch(seed, padded=name in ("roberta", "distilbert", "t5", "bart"))

    def lm_loss(logits, targets):
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
    if name in ("t5", "bart"):
        decoder_ids = torch.randint(2, VOCAB, (B, T // 2), generator=generator)
        return (ids, decoder_ids), targets[:, :T // 2], lm_loss
    return (ids,), targets, lm_loss


BLOCKS = {"roberta": RobertaBlock, "distilbert": DistilBertBlock, "t5": T5Block, "gemma": GemmaBlock,
          "neox": NeoXBlock, "vit": ViTBlock, "whisper": WhisperEncoderBlock, "bloom": BloomBlock,
          "mistral": MistralBlock, "deberta": DebertaBlock, "gptj": GPTJBlock, "clip": CLIPBlock,
          "convnext": ConvNeXtBlock, "swin": SwinBlock, "wav2vec2": Wav2Vec2Block, "falcon": FalconBlock,
          "bart": BartBlock, "moe": MoeBlock}
# Blocks with an op the exporter has no mapping for: {name: (block, the op)}.
UNMAPPED = {"moe-sorted": (SortedMoeBlock, "aten.sort")}
