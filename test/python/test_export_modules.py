"""Exporting small modules (inference and training, with and without AdamW)
and checking each graph with fuse-opt and against PyTorch on the CPU
reference interpreter."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import AotGraphs, matches_torch, ops_in, requires_torch2, verify
from fuse.exporter._steps import Step, default_optimizer_state
from fuse.export import AdamW, export_graph, export_module, export_step


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 32)
        self.norm = nn.LayerNorm(32)
        self.out = nn.Linear(32, 5)

    def forward(self, x):
        return self.out(F.gelu(self.norm(self.fc(x)), approximate="tanh"))


class CausalSelfAttention(nn.Module):
    """Attention written out (matmul, masked_fill, softmax), as in models
    older than F.scaled_dot_product_attention."""

    def __init__(self, width=16, heads=2, seq=8):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm = nn.LayerNorm(width)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm(x)).split(c, dim=2)
        q, k, v = [y.view(b, t, self.heads, c // self.heads).transpose(1, 2) for y in (q, k, v)]
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        scores = scores.masked_fill(~self.mask[:t, :t], float("-inf"))
        y = (F.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, c)
        return x + self.proj(y)


class TokenClassifier(nn.Module):
    def __init__(self, vocab=50, width=12, classes=7):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.head = nn.Linear(width, classes)

    def forward(self, ids):
        return self.head(torch.tanh(self.embed(ids)))


def ce_loss(output, labels):
    return F.cross_entropy(output.reshape(-1, output.shape[-1]), labels.reshape(-1))


def test_mlp_inference_matches_torch(tmp_path):
    step = Step(MLP(), (torch.randn(3, 4, 8),))
    text = export_step(step)
    assert "fuse.layer_norm" in text and "fuse.gelu" in text and "approximate = tanh" in text
    # Linear weights are used with a transpose flag, not a separate transpose.
    assert "transpose_rhs" in text and "fuse.transpose" not in text
    matches_torch(step, text, tmp_path)


def test_mlp_training_step_gives_torch_loss_and_gradients(tmp_path):
    labels = torch.randint(0, 5, (3, 4))
    step = Step(MLP(), (torch.randn(3, 4, 8),), mode="train", loss_fn=ce_loss, targets={"labels": labels})
    text = export_step(step, index_bounds={"labels": 5})
    ops = ops_in(text)
    assert ops["fuse.cross_entropy"] == 1 and ops["fuse.cross_entropy_backward"] == 1
    assert '{fuse.name = "labels", fuse.index_bound = 5 : i64}' in text
    for name in ["loss", "grad.fc.weight", "grad.fc.bias", "grad.norm.weight", "grad.out.bias"]:
        assert f'{{fuse.name = "{name}"}}' in text
    output = matches_torch(step, text, tmp_path)
    assert "7 of 7 outputs match" in output


def test_attention_block_training_step(tmp_path):
    model = CausalSelfAttention()
    x = torch.randn(2, 8, 16)
    step = Step(model, (x,), mode="train", loss_fn=lambda y: (y * y).mean())
    text = export_step(step)
    ops = ops_in(text)
    assert ops["fuse.softmax"] == 1 and ops["fuse.matmul"] >= 6
    matches_torch(step, text, tmp_path)


def test_embedding_and_cross_entropy_with_ignored_labels(tmp_path):
    ids = torch.randint(0, 50, (4, 6))
    labels = torch.randint(0, 7, (4, 6))
    labels[0, :3] = -100
    step = Step(TokenClassifier(), {"ids": ids}, mode="train", loss_fn=ce_loss, targets={"labels": labels})
    text = export_step(step, index_bounds={"ids": 50})
    ops = ops_in(text)
    assert ops["fuse.gather"] == 1 and ops["fuse.scatter_add"] == 1
    matches_torch(step, text, tmp_path)


def test_nll_loss_of_other_log_probabilities_skips_an_in_range_ignore_index(tmp_path):
    ids = torch.randint(0, 50, (4, 6))
    labels = torch.randint(0, 7, (4, 6))
    labels[1, :4] = 0  # ignored, and also a real class

    def loss_fn(output, labels):
        log_probabilities = torch.log(torch.softmax(output, dim=-1))  # not the cross-entropy pattern
        return F.nll_loss(log_probabilities.reshape(-1, 7), labels.reshape(-1), ignore_index=0)

    step = Step(TokenClassifier(), {"ids": ids}, mode="train", loss_fn=loss_fn, targets={"labels": labels})
    text = export_step(step, index_bounds={"ids": 50})
    assert "fuse.cross_entropy" not in text
    matches_torch(step, text, tmp_path)


def test_every_op_carries_its_node_as_location(tmp_path):
    text = export_module(MLP(), (torch.randn(2, 8),))
    body = [line for line in text.splitlines() if line.startswith("  %")]
    assert body and all(" loc(#loc" in line for line in body)
    assert '#loc' in text and 'loc("addmm' in text
    # ...and the model's source line, not torch's or the exporter's.
    source = open(__file__).read().splitlines()
    forward_line = 1 + next(i for i, l in enumerate(source) if "return self.out(F.gelu(" in l)
    assert f'test_export_modules.py":{forward_line}:0' in text
    verify(text, tmp_path)


def test_dropout_draws_from_graph_rng_arguments(tmp_path):
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.25), nn.Linear(8, 2))
    text = export_module(model, (torch.randn(4, 8),), mode="train", loss_fn=lambda y: y.sum())
    assert '{fuse.name = "rng.seed"}' in text and '{fuse.name = "rng.offset"}' in text
    assert "fuse.random bernoulli" in text and "p = 0.75" in text
    verify(text, tmp_path)
    # In inference, dropout is the identity and the graph draws nothing.
    assert "fuse.random" not in export_module(model, (torch.randn(4, 8),))


def test_adamw_step_matches_torch_optim(tmp_path):
    torch.manual_seed(0)
    model = MLP()
    x, labels = torch.randn(6, 8), torch.randint(0, 5, (6,))
    optimizer = AdamW(betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    state = default_optimizer_state(model.parameters())
    step = Step(model, (x,), mode="train", loss_fn=F.cross_entropy, targets={"labels": labels},
                optimizer=optimizer, optimizer_state=state)
    text = export_step(step)
    path = verify(text, tmp_path)

    # The same update through torch.optim.AdamW, decaying only matrices.
    params = list(model.parameters())
    decay = [p for p in params if p.dim() >= 2]
    no_decay = [p for p in params if p.dim() < 2]
    torch_adamw = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                     {"params": no_decay, "weight_decay": 0.0}],
                                    lr=float(state["lr"]), betas=(0.9, 0.95), eps=1e-8)
    loss = F.cross_entropy(model(x), labels)
    loss.backward()
    for p, m, v in zip(params, state["exp_avg"], state["exp_avg_sq"]):
        torch_adamw.state[p] = {"step": state["step"].clone(), "exp_avg": m.clone(), "exp_avg_sq": v.clone()}
    torch_adamw.step()
    names = [n for n, _ in model.named_parameters()]
    expected = {"loss": loss.detach(), "step": state["step"] + 1}
    for name, p in zip(names, params):
        expected[name] = p.detach()
        expected[f"exp_avg.{name}"] = torch_adamw.state[p]["exp_avg"]
        expected[f"exp_avg_sq.{name}"] = torch_adamw.state[p]["exp_avg_sq"]

    import numpy as np
    import subprocess
    from conftest import BIN
    inputs = tmp_path / "inputs.npz"
    np.savez(inputs, **{k: v.numpy() for k, v in step.inputs_by_name().items()})
    expected_path = tmp_path / "expected.npz"
    np.savez(expected_path, **{k: v.detach().numpy() for k, v in expected.items()})
    result = subprocess.run([str(BIN / "fuse-run"), str(path), "--inputs", str(inputs),
                             "--expected", str(expected_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr
    assert f"{1 + 3 * len(names) + 1} of {1 + 3 * len(names) + 1} outputs match" in result.stdout


def test_make_fx_graph_exports_with_its_placeholder_names(tmp_path):
    from torch.fx.experimental.proxy_tensor import make_fx

    def f(x, w):
        return torch.softmax(x @ w, dim=-1).sum(0)

    x, w = torch.randn(4, 6), torch.randn(6, 3)
    graph = make_fx(f)(x, w)
    text = export_graph(graph, arg_names=["x", "w"], result_names=["probabilities"])
    assert '{fuse.name = "probabilities"}' in text and "fuse.softmax" in text
    verify(text, tmp_path)


def test_aot_autograd_forward_backward_and_joint_graphs(tmp_path):
    from functorch.compile import aot_function, default_partition
    graphs = AotGraphs()

    def partition(joint, joint_inputs, **kwargs):
        graphs["joint"] = (joint, None)
        return default_partition(joint, joint_inputs, **kwargs)

    model = MLP()

    def f(x, w1, b1, w2):
        return (F.gelu(F.linear(x, w1, b1)) @ w2.t()).sum()

    compiled = aot_function(f, fw_compiler=graphs.compiler("forward"), bw_compiler=graphs.compiler("backward"),
                            partition_fn=partition)
    args = [torch.randn(4, 8), torch.randn(16, 8, requires_grad=True), torch.randn(16, requires_grad=True),
            torch.randn(3, 16, requires_grad=True)]
    compiled(*args).backward()
    assert set(graphs) == {"forward", "backward", "joint"}
    for kind, (gm, example) in graphs.items():
        text = export_graph(gm, example if kind != "joint" else None, name=f"mlp_{kind}")
        verify(text, tmp_path, kind)
    del model


@requires_torch2
def test_scaled_dot_product_attention_maps_to_fuse_attention(tmp_path):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(16, 48)

        def forward(self, x):
            q, k, v = self.qkv(x).view(2, 8, 3, 2, 8).permute(2, 0, 3, 1, 4)
            return F.scaled_dot_product_attention(q, k, v, is_causal=True)

    step = Step(Block(), (torch.randn(2, 8, 16),), mode="train", loss_fn=lambda y: (y * y).sum())
    text = export_step(step)
    ops = ops_in(text)
    assert ops["fuse.scaled_dot_product_attention"] == 1
    assert ops["fuse.scaled_dot_product_attention_backward"] == 1
    assert " causal scale = " in text
    matches_torch(step, text, tmp_path)


@requires_torch2
def test_torch_export_program(tmp_path):
    model = MLP()
    program = torch.export.export(model, (torch.randn(3, 8),))
    text = export_graph(program, name="mlp")
    assert '{fuse.name = "fc.weight"}' in text
    verify(text, tmp_path)


def test_errors_in_the_exported_graph_point_at_the_model_source(tmp_path):
    import numpy as np
    import subprocess
    from conftest import BIN
    step = Step(TokenClassifier(), {"ids": torch.randint(0, 50, (2, 3))})
    path = verify(export_step(step), tmp_path)
    inputs = {k: v.numpy() for k, v in step.inputs_by_name().items()}
    inputs["ids"] = np.full((2, 3), 99, dtype=np.int64)  # past the 50-row embedding
    np.savez(tmp_path / "bad.npz", **inputs)
    result = subprocess.run([str(BIN / "fuse-run"), str(path), "--inputs", str(tmp_path / "bad.npz")],
                            capture_output=True, text=True)
    assert result.returncode == 1
    source = open(__file__).read().splitlines()
    line = 1 + next(i for i, l in enumerate(source) if "self.head(torch.tanh(self.embed(ids)))" in l)
    assert f"test_export_modules.py:{line}:0: error:" in result.stderr, result.stderr


class TiedLM(nn.Module):
    """An embedding shared with the output layer, looked up through a view
    of the ids (as HuggingFace's GPT-2 does)."""

    def __init__(self, vocab=64, width=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, ids):
        h = self.norm(self.embed(ids.view(-1, ids.shape[-1])))
        return h @ self.embed.weight.t()


def test_data_parallel_step_returns_an_embedding_gradient_as_rows(tmp_path):
    ids = torch.randint(0, 64, (2, 6))
    targets = {"targets": torch.randint(0, 64, (2, 6))}
    model = TiedLM()
    dense = Step(model, {"ids": ids}, mode="train", loss_fn=ce_loss, targets=targets).run_eager()
    step = Step(model, {"ids": ids}, mode="train", loss_fn=ce_loss, targets=targets,
                sparse_embeddings={"embed": 2})
    text = export_step(step, index_bounds={"ids": 64, "targets": 64})
    assert step.sparse_embedding_inputs == [("embed", 0)]
    assert '{fuse.name = "embedding_grad.embed"}' in text
    matches_torch(step, text, tmp_path)
    # The table's gradient without the lookup, plus the rows scattered at
    # the ids, is the whole gradient.
    results = step.run_eager()
    assert tuple(results["embedding_grad.embed"].shape) == (2, 6, 8)
    whole = results["grad.embed.weight"].clone()
    whole.index_put_((ids.reshape(-1),), results["embedding_grad.embed"].reshape(-1, 8), accumulate=True)
    assert torch.allclose(whole, dense["grad.embed.weight"], atol=1e-6)
    assert not torch.allclose(results["grad.embed.weight"], dense["grad.embed.weight"], atol=1e-6)
    # A table with fewer rows than twice what the ranks look up together
    # keeps its dense gradient.
    small = Step(model, {"ids": ids}, mode="train", loss_fn=ce_loss, targets=targets,
                 sparse_embeddings={"embed": 8})
    assert "embedding_grad.embed" not in small.run_eager() and small.sparse_embedding_inputs == []


def test_the_harness_nanogpt_is_model_code_and_the_exporter_is_not():
    import os

    import fuse
    from fuse.exporter import _source
    package = os.path.dirname(fuse.__file__)
    assert _source.is_user_frame(os.path.join(package, "harness", "nanogpt.py"))
    assert _source.is_user_frame(os.path.join(package, "models.py"))
    assert not _source.is_user_frame(os.path.join(package, "_fx_to_mlir.py"))
    assert not _source.is_user_frame(os.path.join(package, "harness", "systems.py"))
