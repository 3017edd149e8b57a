"""aten.convolution and aten.convolution_backward (ViT's patch embedding,
Whisper's 1-D front end, 3x3, strided, dilated, grouped and depthwise
convolutions) exported as im2col + GEMM and checked against PyTorch on the
CPU reference interpreter: the forward output, and the gradients of the
input, the weight and the bias.

Performance note: outside the non-overlapping case (stride >= kernel, which
is reshapes and one GEMM) the columns are materialised, KH*KW times the
input for a stride-1 convolution, and grad_input is a scatter_add."""

import numpy as np
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from conftest import AotGraphs, BIN, _run, graph_matches_torch, matches_torch, ops_in, real_like, verify
from fuse.exporter._steps import Step
from fuse.export import ExportError, export_graph, export_module, export_step


class ConvOfParameter(nn.Module):
    """A convolution of a learnt image, so that a training step returns the
    convolution's input gradient (as grad.image) beside its weight and bias
    gradients; the loss <conv(image), dy> makes dy the output gradient."""

    def __init__(self, conv, image_shape):
        super().__init__()
        self.image = nn.Parameter(torch.randn(image_shape))
        self.conv = conv

    def forward(self, dy):
        return (self.conv(self.image) * dy).sum()


def check_conv(conv, image_shape, tmp_path):
    """Forward (inference) and input/weight/bias gradients (training) of
    `conv` against PyTorch; returns both exports' text."""
    torch.manual_seed(0)
    model = ConvOfParameter(conv, image_shape)
    with torch.no_grad():
        out_shape = conv(model.image).shape
    infer = Step(conv, (model.image.detach().clone(),))
    infer_text = export_step(infer)
    assert "1 of 1 outputs match" in matches_torch(infer, infer_text, tmp_path, "infer")
    dy = torch.randn(out_shape)
    train = Step(model, (dy,), mode="train", loss_fn=lambda loss: loss)
    train_text = export_step(train)
    results = 2 + len(list(conv.parameters()))
    assert f"{results} of {results} outputs match" in matches_torch(train, train_text, tmp_path, "train")
    for name in ["grad.image", "grad.conv.weight"] + (["grad.conv.bias"] if conv.bias is not None else []):
        assert f'{{fuse.name = "{name}"}}' in train_text
    return infer_text, train_text


def test_vit_patch_embedding_is_one_gemm(tmp_path):
    conv = nn.Conv2d(3, 24, kernel_size=16, stride=16)
    infer, train = check_conv(conv, (2, 3, 32, 32), tmp_path)
    ops = ops_in(infer)
    # Reshapes and a transpose around one GEMM, the bias added to its
    # [N*L, O] result as a linear layer's.
    assert ops["fuse.matmul"] == 1 and "fuse.gather" not in ops and "fuse.concat" not in ops
    assert "transpose_rhs : (tensor<8x768xf32>, tensor<24x768xf32>) -> tensor<8x24xf32>" in infer
    assert "fuse.broadcast_in_dim %bias, dims = [1] : (tensor<24xf32>) -> tensor<8x24xf32>" in infer
    ops = ops_in(train)
    # Forward, grad_weight and grad_input: three GEMMs, and col2im is the
    # inverse reshape and transpose.
    assert ops["fuse.matmul"] == 3
    assert not {"fuse.gather", "fuse.scatter_add", "fuse.concat"} & set(ops)


def test_patch_embedding_with_a_remainder_and_no_bias(tmp_path):
    # 30 = 3 * 8 + 6: the last 6 rows and columns are in no patch (zero
    # gradient).
    _, train = check_conv(nn.Conv2d(3, 10, kernel_size=8, stride=8, bias=False), (2, 3, 30, 28), tmp_path)
    assert "fuse.gather" not in train and "fuse.scatter_add" not in train


def test_vit_patch_embedding_module_training_step(tmp_path):
    class PatchEmbed(nn.Module):
        def __init__(self):
            super().__init__()
            self.proj = nn.Conv2d(3, 24, 16, 16)
            self.norm = nn.LayerNorm(24)
            self.head = nn.Linear(24, 5)

        def forward(self, pixels):
            tokens = self.proj(pixels).flatten(2).transpose(1, 2)  # [B, L, C]
            return self.head(self.norm(tokens)).mean(1)

    labels = torch.tensor([1, 4])
    step = Step(PatchEmbed(), (torch.randn(2, 3, 32, 32),), mode="train",
                loss_fn=lambda y, t: F.cross_entropy(y, t), targets={"labels": labels})
    text = export_step(step, index_bounds={"labels": 5})
    assert "fuse.gather" not in text
    assert "7 of 7 outputs match" in matches_torch(step, text, tmp_path)


def test_3x3_stride_1_padding_1(tmp_path):
    infer, train = check_conv(nn.Conv2d(4, 6, 3, padding=1), (2, 4, 9, 9), tmp_path)
    ops = ops_in(infer)
    # Zero padding by concat, a gather per spatial axis, one GEMM.
    assert ops["fuse.gather"] == 2 and ops["fuse.matmul"] == 1 and ops["fuse.concat"] == 2
    assert "transpose_rhs : (tensor<162x36xf32>, tensor<6x36xf32>) -> tensor<162x6xf32>" in infer
    assert ops_in(train)["fuse.scatter_add"] == 2


def test_strided_dilated_convolution(tmp_path):
    conv = nn.Conv2d(3, 5, (3, 2), stride=(2, 3), padding=(2, 1), dilation=(2, 3))
    check_conv(conv, (2, 3, 11, 13), tmp_path)


def test_grouped_convolution(tmp_path):
    infer, _ = check_conv(nn.Conv2d(4, 6, 3, stride=2, padding=1, groups=2), (2, 4, 8, 7), tmp_path)
    # Groups as the GEMM's batch dimension, the weight as [G, O/G, C/G*KH*KW].
    assert "tensor<6x2x3x3xf32>) -> tensor<2x3x18xf32>" in infer
    assert "(tensor<2x32x18xf32>, tensor<2x3x18xf32>) -> tensor<2x32x3xf32>" in infer


def test_depthwise_convolution(tmp_path):
    check_conv(nn.Conv2d(4, 8, 3, padding=1, groups=4), (2, 4, 6, 6), tmp_path)


def test_depthwise_convolution_without_bias(tmp_path):
    check_conv(nn.Conv2d(5, 5, 5, padding=2, groups=5, bias=False), (1, 5, 7, 7), tmp_path)


def test_whisper_style_1d_convolutions(tmp_path):
    # Whisper's audio front end: kernel 3 padding 1, then stride 2.
    infer, _ = check_conv(nn.Conv1d(8, 12, 3, padding=1), (2, 8, 20), tmp_path)
    assert ops_in(infer)["fuse.gather"] == 1  # only the length axis
    check_conv(nn.Conv1d(8, 12, 3, stride=2, padding=1), (2, 8, 20), tmp_path)


def test_1d_patch_convolution_and_1x1_convolutions(tmp_path):
    for conv, shape in [(nn.Conv1d(4, 6, 4, stride=4), (2, 4, 18)),
                        (nn.Conv2d(6, 3, 1), (2, 6, 5, 4)),
                        (nn.Conv1d(6, 3, 1, stride=2), (2, 6, 9)),
                        (nn.Conv2d(3, 4, 2, stride=3), (2, 3, 8, 10)),
                        (nn.Conv2d(3, 4, 2, stride=2, padding=1), (2, 3, 7, 6))]:
        infer, train = check_conv(conv, shape, tmp_path)
        assert "fuse.gather" not in infer and "fuse.scatter_add" not in train, conv


def test_same_padding_with_an_even_kernel(tmp_path):
    # padding='same' pads the odd element after the input.
    check_conv(nn.Conv2d(3, 4, (4, 3), padding="same", dilation=(1, 2)), (2, 3, 7, 8), tmp_path)
    check_conv(nn.Conv1d(3, 4, 2, padding="same"), (2, 3, 9), tmp_path)


def test_unbatched_input(tmp_path):
    check_conv(nn.Conv2d(3, 4, 3, padding=1), (3, 6, 5), tmp_path)


def test_convolution_graphs_go_through_the_pipeline_and_code_generator(tmp_path):
    """The compiler's passes keep the interpreter's answer, and the plan has
    the GEMMs (the patch embedding's as one m=N*L, n=O, k=C*16*16 GEMM)."""
    for name, conv, shape in [("patch", nn.Conv2d(3, 24, 16, 16), (2, 3, 32, 32)),
                              ("conv3x3", nn.Conv2d(4, 6, 3, padding=1, groups=2), (2, 4, 9, 9))]:
        with torch.no_grad():
            dy = torch.randn(conv(torch.randn(shape)).shape)
        text = export_step(Step(ConvOfParameter(conv, shape), (dy,), mode="train", loss_fn=lambda loss: loss))
        path = verify(text, tmp_path, name)
        for pipeline in ["fuse-pipeline", "fuse-pipeline{amp=none}"]:
            result = _run([BIN / "fuse-run", path, "--device=cpu", f"--check-pipeline={pipeline}"])
            assert result.returncode == 0 and "check-pipeline: PASS (4 of 4 outputs match)" in result.stdout, \
                result.stdout + result.stderr
        plan = _run([BIN / "fuse-translate", path, "--emit-plan"])
        assert plan.returncode == 0, plan.stderr
        gemms = [line for line in plan.stdout.splitlines() if " gemm " in line]
        assert len(gemms) == 3, plan.stdout
        if name == "patch":
            assert any("m=8 n=24 k=768 batch=1 transB" in line for line in gemms), gemms
            assert "scatter_add" not in plan.stdout
        else:
            assert all("batch=2" in line for line in gemms) and "launch fuse_scatter_add" in plan.stdout


def test_bf16_convolution_training_step_verifies(tmp_path):
    conv = nn.Conv2d(4, 6, 3, padding=1, groups=2).to(torch.bfloat16)
    step = Step(conv, (torch.randn(2, 4, 8, 8, dtype=torch.bfloat16),), mode="train",
                loss_fn=lambda y: y.float().square().mean())
    text = export_step(step)
    verify(text, tmp_path)
    assert "(tensor<2x128x18xbf16>, tensor<2x3x18xbf16>) -> tensor<2x128x3xbf16>" in text
    assert ops_in(text)["fuse.matmul"] == 2  # the image needs no gradient


def test_aot_autograd_graphs_with_convolution(tmp_path):
    """AOTAutograd's backward graph calls convolution_backward with the mask
    of the gradients it needs: here all three (the input requires grad)."""
    from functorch.compile import aot_function
    graphs = AotGraphs()

    def f(x, w, b):
        return torch.tanh(F.conv2d(x, w, b, stride=2, padding=1, dilation=1, groups=2)).sum()

    args = [torch.randn(2, 4, 9, 9, requires_grad=True), torch.randn(6, 2, 3, 3, requires_grad=True),
            torch.randn(6, requires_grad=True)]
    compiled = aot_function(f, fw_compiler=graphs.compiler("forward"), bw_compiler=graphs.compiler("backward"))
    compiled(*args).backward()
    assert "aten.convolution_backward.default" in str(graphs["backward"][0].graph)
    for kind, (gm, example) in graphs.items():
        # The compiler's example inputs are fake tensors on torch 2: the
        # graph runs, in PyTorch and on the interpreter, on real ones of
        # their shapes; it is exported retraced on the example, as given.
        graph_matches_torch(gm, real_like(example), tmp_path, f"conv_{kind}", example=example)
    assert ops_in(export_graph(*graphs["backward"], name="b"))["fuse.scatter_add"] == 2


def test_convolution_without_an_input_gradient_skips_col2im():
    # The image is data: the backward asks for the weight and bias only.
    step = Step(nn.Conv2d(3, 4, 3, padding=1), (torch.randn(1, 3, 6, 6),), mode="train",
                loss_fn=lambda y: y.square().mean())
    text = export_step(step)
    assert "fuse.scatter_add" not in text and ops_in(text)["fuse.matmul"] == 2


def test_aten_conv2d_and_conv1d_overloads(tmp_path):
    """aten.conv1d/conv2d (as torch.export's pre-dispatch graphs keep them)
    map like aten.convolution, padding strings included."""
    from torch.fx.passes.shape_prop import ShapeProp
    aten = torch.ops.aten

    def f(x, w, b, x1, w1):
        y = aten.conv2d.default(x, w, b, [2, 1], [1, 0], [1, 2], 1)
        z = aten.conv1d.padding(x1, w1, None, [1], "same", [1], 1)
        return y, z

    example = [torch.randn(2, 3, 7, 8), torch.randn(4, 3, 3, 3), torch.randn(4), torch.randn(2, 2, 9),
               torch.randn(4, 2, 4)]
    gm = torch.fx.symbolic_trace(f)
    ShapeProp(gm).propagate(*example)
    names = ["x", "w", "b", "x1", "w1"]
    text = export_graph(gm, arg_names=names, retrace=False)
    path = verify(text, tmp_path)
    expected = f(*example)
    np.savez(tmp_path / "in.npz", **{n: t.numpy() for n, t in zip(names, example)})
    np.savez(tmp_path / "out.npz", out0=expected[0].numpy(), out1=expected[1].numpy())
    result = _run([BIN / "fuse-run", path, "--inputs", tmp_path / "in.npz", "--expected", tmp_path / "out.npz"])
    assert result.returncode == 0 and "expected: PASS" in result.stdout, result.stdout + result.stderr


@pytest.mark.parametrize("module, shape, message", [
    (nn.ConvTranspose2d(3, 4, 3), (1, 3, 6, 6),
     "aten.convolution.default: transposed convolution (ConvTranspose) is not supported"),
    (nn.ConvTranspose1d(3, 4, 3), (1, 3, 6),
     "aten.convolution.default: transposed convolution (ConvTranspose) is not supported"),
    (nn.Conv3d(3, 4, 3), (1, 3, 5, 5, 5),
     "aten.convolution.default: 3-D convolution is not supported (1-D and 2-D are)"),
])
def test_unsupported_convolutions_name_the_op(module, shape, message):
    with pytest.raises(ExportError) as error:
        export_module(module, (torch.randn(shape),))
    assert message in str(error.value)
    assert "test_export_conv.py" not in message


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_padding_modes_other_than_zeros(mode, tmp_path):
    """padding_mode reflect and replicate reach ATen as padding ops of their
    own (reflection_pad2d, replication_pad2d: a gather per padded dimension
    at positions computed from an iota, and a scatter_add back), or, where
    torch's decompositions take them (torch 2.x), as index ops. Either way
    the forward and the gradients are PyTorch's."""
    check_conv(nn.Conv2d(3, 4, 3, padding=(1, 2), padding_mode=mode), (2, 3, 6, 7), tmp_path)
    check_conv(nn.Conv1d(3, 4, 5, padding=2, padding_mode=mode), (2, 3, 9), tmp_path)


def test_convolution_with_dynamic_shapes_is_rejected():
    from torch.fx.experimental.proxy_tensor import make_fx
    graph = make_fx(lambda x, w: F.conv2d(x, w, padding=1), tracing_mode="symbolic")(
        torch.randn(1, 3, 6, 6), torch.randn(4, 3, 3, 3))
    with pytest.raises(ExportError) as error:
        export_graph(graph, retrace=False)
    assert "dynamic shape" in str(error.value)
