//===- InterpreterTest.cpp - The CPU reference interpreter, op by op ------===//
//
// Each test parses a one-op graph, runs it on hand-made inputs and compares
// with values worked out by hand, including the edge cases the GPU kernels
// must reproduce (rows of -inf, zero variance, ignored labels, bf16 rounding).
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Interpreter/Interpreter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <cmath>
#include <limits>
#include <string>

using namespace mlir;
using ::fuse::DType;
using ::fuse::HostTensor;

namespace {

HostTensor makeTensor(DType dtype, std::vector<int64_t> shape,
                      const std::vector<double> &values) {
  HostTensor tensor(dtype, std::move(shape));
  for (size_t i = 0; i < values.size(); ++i)
    tensor.set(static_cast<int64_t>(i), values[i]);
  return tensor;
}

class InterpreterTest : public ::testing::Test {
protected:
  InterpreterTest() {
    context.loadDialect<mlir::fuse::FuseDialect, func::FuncDialect>();
  }

  /// Parses `source` (one function), runs it and returns its outputs; on a
  /// runtime error returns nothing and leaves the message in `diagnostics`.
  std::vector<HostTensor> run(const std::string &source,
                              std::vector<HostTensor> inputs) {
    diagnostics.clear();
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module) << diagnostics;
    if (!module)
      return {};
    auto func = *module->getOps<func::FuncOp>().begin();
    FailureOr<std::vector<HostTensor>> outputs = mlir::fuse::interpret(func, inputs);
    if (failed(outputs))
      return {};
    return *outputs;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::string diagnostics;
};

void expectValues(const HostTensor &tensor, const std::vector<double> &expected,
                  double tolerance = 1e-6) {
  ASSERT_EQ(tensor.numElements(), static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    double actual = tensor.get(static_cast<int64_t>(i));
    if (std::isnan(expected[i]))
      EXPECT_TRUE(std::isnan(actual)) << "element " << i << " is " << actual;
    else
      EXPECT_NEAR(actual, expected[i], tolerance) << "element " << i;
  }
}

TEST_F(InterpreterTest, AddRoundsBf16ToNearestEven) {
  // 1 + 2^-8 is exactly halfway between two bf16 values (1 and 1 + 2^-7):
  // round-to-nearest-even keeps 1. 1 + 3 * 2^-8 rounds up to 1 + 2^-6.
  auto outputs = run(R"(
    func.func @f(%a: tensor<2xbf16>, %b: tensor<2xbf16>) -> tensor<2xbf16> {
      %c = fuse.add %a, %b : tensor<2xbf16>
      return %c : tensor<2xbf16>
    })",
                     {makeTensor(DType::BF16, {2}, {1.0, 1.0}),
                      makeTensor(DType::BF16, {2}, {0.00390625, 0.01171875})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {1.0, 1.015625}, 0.0);
}

TEST_F(InterpreterTest, IntegerDivisionTruncatesAndRejectsZero) {
  std::string graph = R"(
    func.func @f(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
      %c = fuse.div %a, %b : tensor<3xi32>
      return %c : tensor<3xi32>
    })";
  auto outputs = run(graph, {makeTensor(DType::I32, {3}, {7, -7, 9}),
                             makeTensor(DType::I32, {3}, {2, 2, -4})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {3, -3, -2}, 0.0);

  outputs = run(graph, {makeTensor(DType::I32, {3}, {7, -7, 9}),
                        makeTensor(DType::I32, {3}, {2, 0, 1})});
  EXPECT_TRUE(outputs.empty());
  EXPECT_NE(diagnostics.find("integer division by zero"), std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, SoftmaxOfMinusInfinityRowIsNaN) {
  const double inf = std::numeric_limits<double>::infinity();
  auto outputs = run(R"(
    func.func @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %y = fuse.softmax %x, dim = 1 : tensor<2x3xf32>
      return %y : tensor<2x3xf32>
    })",
                     {makeTensor(DType::F32, {2, 3},
                                 {0.0, std::log(2.0), -inf, -inf, -inf, -inf})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {1.0 / 3, 2.0 / 3, 0.0, NAN, NAN, NAN});
}

TEST_F(InterpreterTest, LayerNormOfConstantRowIsBiasWithRstdFromEpsilon) {
  auto outputs = run(R"(
    func.func @f(%x: tensor<1x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>)
        -> (tensor<1x4xf32>, tensor<1x1xf32>, tensor<1x1xf32>) {
      %y, %mean, %rstd = fuse.layer_norm %x weight(%w) bias(%b) axis = 1 epsilon = 2.500000e-01 : (tensor<1x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<1x4xf32>, tensor<1x1xf32>, tensor<1x1xf32>)
      return %y, %mean, %rstd : tensor<1x4xf32>, tensor<1x1xf32>, tensor<1x1xf32>
    })",
                     {makeTensor(DType::F32, {1, 4}, {3, 3, 3, 3}),
                      makeTensor(DType::F32, {4}, {1, 2, 3, 4}),
                      makeTensor(DType::F32, {4}, {0.5, -0.5, 1, 0})});
  ASSERT_EQ(outputs.size(), 3u);
  expectValues(outputs[0], {0.5, -0.5, 1, 0}); // zero variance: x - mean = 0
  expectValues(outputs[1], {3.0});
  expectValues(outputs[2], {2.0}); // 1 / sqrt(0 + 0.25)
}

TEST_F(InterpreterTest, CrossEntropySkipsIgnoredLabelsInMean) {
  // Row 0: logits (0, ln 3) -> softmax (1/4, 3/4); label 1 -> -ln(3/4).
  // Row 1 is ignored, row 2: uniform logits, label 0 -> ln 2.
  std::string forward = R"(
    func.func @f(%logits: tensor<3x2xf32>, %labels: tensor<3xi64>) -> tensor<f32> {
      %loss = fuse.cross_entropy %logits, %labels ignore_index = -1 : (tensor<3x2xf32>, tensor<3xi64>) -> tensor<f32>
      return %loss : tensor<f32>
    })";
  HostTensor logits = makeTensor(DType::F32, {3, 2}, {0, std::log(3.0), 5, 7, 1, 1});
  auto outputs = run(forward, {logits, makeTensor(DType::I64, {3}, {1, -1, 0})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {(-std::log(0.75) + std::log(2.0)) / 2});

  // Every label ignored: 0 / 0, NaN as in PyTorch.
  outputs = run(forward, {logits, makeTensor(DType::I64, {3}, {-1, -1, -1})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {NAN});

  // A label that is no class is an error naming it and where it is.
  outputs = run(forward, {logits, makeTensor(DType::I64, {3}, {1, 2, 0})});
  EXPECT_TRUE(outputs.empty());
  EXPECT_NE(diagnostics.find("label 2 at labels[1] is neither a class in [0, 2)"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, CrossEntropyBackwardIsSoftmaxMinusOneHot) {
  auto outputs = run(R"(
    func.func @f(%g: tensor<f32>, %logits: tensor<2x2xf32>, %labels: tensor<2xi64>) -> tensor<2x2xf32> {
      %d = fuse.cross_entropy_backward %g, %logits, %labels : (tensor<f32>, tensor<2x2xf32>, tensor<2xi64>) -> tensor<2x2xf32>
      return %d : tensor<2x2xf32>
    })",
                     {makeTensor(DType::F32, {}, {2.0}),
                      makeTensor(DType::F32, {2, 2}, {0, std::log(3.0), 0, 0}),
                      makeTensor(DType::I64, {2}, {1, 0})});
  ASSERT_EQ(outputs.size(), 1u);
  // Mean over 2 counted rows: g / 2 = 1 per row.
  expectValues(outputs[0], {0.25, -0.25, -0.5, 0.5});
}

TEST_F(InterpreterTest, GatherTakesRowsAndRejectsOutOfRangeIndex) {
  std::string graph = R"(
    func.func @f(%table: tensor<3x2xf32>, %ids: tensor<2x2xi64>) -> tensor<2x2x2xf32> {
      %e = fuse.gather %table[%ids], dim = 0 : (tensor<3x2xf32>, tensor<2x2xi64>) -> tensor<2x2x2xf32>
      return %e : tensor<2x2x2xf32>
    })";
  HostTensor table = makeTensor(DType::F32, {3, 2}, {0, 1, 10, 11, 20, 21});
  auto outputs = run(graph, {table, makeTensor(DType::I64, {2, 2}, {2, 0, 1, 2})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {20, 21, 0, 1, 10, 11, 20, 21}, 0.0);

  outputs = run(graph, {table, makeTensor(DType::I64, {2, 2}, {2, 0, 3, 1})});
  EXPECT_TRUE(outputs.empty());
  EXPECT_NE(diagnostics.find("index 3 at indices[1, 0] is out of range [0, 3)"),
            std::string::npos)
      << diagnostics;
}

TEST_F(InterpreterTest, ScatterAddAccumulatesRepeatedIndices) {
  auto outputs = run(R"(
    func.func @f(%dest: tensor<3x2xf32>, %ids: tensor<3xi64>, %upd: tensor<3x2xf32>) -> tensor<3x2xf32> {
      %r = fuse.scatter_add %dest[%ids], %upd, dim = 0 : (tensor<3x2xf32>, tensor<3xi64>, tensor<3x2xf32>) -> tensor<3x2xf32>
      return %r : tensor<3x2xf32>
    })",
                     {makeTensor(DType::F32, {3, 2}, {1, 1, 1, 1, 1, 1}),
                      makeTensor(DType::I64, {3}, {2, 0, 2}),
                      makeTensor(DType::F32, {3, 2}, {1, 2, 3, 4, 5, 6})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {4, 5, 1, 1, 7, 9}, 0.0);
}

TEST_F(InterpreterTest, MatmulWithTransposedSharedWeight) {
  // y[b] = x[b] W^T with W = [[1, 0], [1, 1], [0, 2]] (3 outputs, 2 inputs).
  auto outputs = run(R"(
    func.func @f(%x: tensor<2x1x2xf32>, %w: tensor<3x2xf32>) -> tensor<2x1x3xf32> {
      %y = fuse.matmul %x, %w transpose_rhs : (tensor<2x1x2xf32>, tensor<3x2xf32>) -> tensor<2x1x3xf32>
      return %y : tensor<2x1x3xf32>
    })",
                     {makeTensor(DType::F32, {2, 1, 2}, {1, 2, 3, -1}),
                      makeTensor(DType::F32, {3, 2}, {1, 0, 1, 1, 0, 2})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {1, 3, 4, 3, 2, -2}, 0.0);
}

TEST_F(InterpreterTest, ReduceAndArgmaxFollowTorchOnNaNAndTies) {
  auto outputs = run(R"(
    func.func @f(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2x1xi64>) {
      %m = fuse.reduce max %x, dims = [1] : (tensor<2x3xf32>) -> tensor<2xf32>
      %a = fuse.reduce mean %x, dims = [1] : (tensor<2x3xf32>) -> tensor<2xf32>
      %i = fuse.argmax %x, dim = 1 keepdim : (tensor<2x3xf32>) -> tensor<2x1xi64>
      return %m, %a, %i : tensor<2xf32>, tensor<2xf32>, tensor<2x1xi64>
    })",
                     {makeTensor(DType::F32, {2, 3}, {1, 5, 5, 2, NAN, 9})});
  ASSERT_EQ(outputs.size(), 3u);
  expectValues(outputs[0], {5, NAN});
  expectValues(outputs[1], {11.0 / 3, NAN});
  expectValues(outputs[2], {1, 1}, 0.0); // first of the ties; the NaN
}

TEST_F(InterpreterTest, CausalAttentionFirstRowSeesOnlyItself) {
  // One head, T = 2, D = 1. Row 0 attends to key 0 only: output v0. Row 1
  // has scores (q1 k0, q1 k1) = (0, ln 3) -> weights (1/4, 3/4).
  auto outputs = run(R"(
    func.func @f(%q: tensor<1x1x2x1xf32>, %k: tensor<1x1x2x1xf32>, %v: tensor<1x1x2x1xf32>)
        -> (tensor<1x1x2x1xf32>, tensor<1x1x2xf32>) {
      %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v causal scale = 1.000000e+00 : (tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>, tensor<1x1x2x1xf32>) -> (tensor<1x1x2x1xf32>, tensor<1x1x2xf32>)
      return %o, %lse : tensor<1x1x2x1xf32>, tensor<1x1x2xf32>
    })",
                     {makeTensor(DType::F32, {1, 1, 2, 1}, {5, 1}),
                      makeTensor(DType::F32, {1, 1, 2, 1}, {0, std::log(3.0)}),
                      makeTensor(DType::F32, {1, 1, 2, 1}, {8, 4})});
  ASSERT_EQ(outputs.size(), 2u);
  expectValues(outputs[0], {8, 0.25 * 8 + 0.75 * 4}, 1e-5);
  expectValues(outputs[1], {0, std::log(4.0)}, 1e-6);
}

TEST_F(InterpreterTest, AttentionBackwardMatchesFiniteDifferences) {
  // d/dq of sum(out * g), checked against central differences on q.
  std::string forward = R"(
    func.func @f(%q: tensor<1x1x2x2xf32>, %k: tensor<1x1x3x2xf32>, %v: tensor<1x1x3x2xf32>)
        -> (tensor<1x1x2x2xf32>, tensor<1x1x2xf32>) {
      %o, %lse = fuse.scaled_dot_product_attention %q, %k, %v scale = 5.000000e-01 : (tensor<1x1x2x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x2xf32>)
      return %o, %lse : tensor<1x1x2x2xf32>, tensor<1x1x2xf32>
    })";
  std::string backward = R"(
    func.func @f(%g: tensor<1x1x2x2xf32>, %q: tensor<1x1x2x2xf32>, %k: tensor<1x1x3x2xf32>, %v: tensor<1x1x3x2xf32>, %o: tensor<1x1x2x2xf32>, %lse: tensor<1x1x2xf32>)
        -> (tensor<1x1x2x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) {
      %dq, %dk, %dv = fuse.scaled_dot_product_attention_backward %g, %q, %k, %v, %o, %lse scale = 5.000000e-01 : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x2x2xf32>, tensor<1x1x2xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>)
      return %dq, %dk, %dv : tensor<1x1x2x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>
    })";
  HostTensor q = makeTensor(DType::F32, {1, 1, 2, 2}, {0.3, -0.2, 0.8, 0.5});
  HostTensor k = makeTensor(DType::F32, {1, 1, 3, 2}, {0.1, 0.4, -0.6, 0.2, 0.9, -0.3});
  HostTensor v = makeTensor(DType::F32, {1, 1, 3, 2}, {1.0, -1.0, 0.5, 2.0, -0.7, 0.3});
  HostTensor g = makeTensor(DType::F32, {1, 1, 2, 2}, {0.2, -0.4, 1.1, 0.6});

  auto objective = [&](const HostTensor &query) {
    auto out = run(forward, {query, k, v});
    double total = 0;
    for (int64_t i = 0; i < 4; ++i)
      total += out[0].get(i) * g.get(i);
    return total;
  };
  auto fwd = run(forward, {q, k, v});
  ASSERT_EQ(fwd.size(), 2u);
  auto grads = run(backward, {g, q, k, v, fwd[0], fwd[1]});
  ASSERT_EQ(grads.size(), 3u);
  const double h = 1e-2;
  for (int64_t i = 0; i < 4; ++i) {
    HostTensor plus = q, minus = q;
    plus.set(i, q.get(i) + h);
    minus.set(i, q.get(i) - h);
    double numeric = (objective(plus) - objective(minus)) / (2 * h);
    EXPECT_NEAR(grads[0].get(i), numeric, 2e-3) << "dq element " << i;
  }
}

TEST_F(InterpreterTest, RandomIsReproducibleAndMovesWithOffset) {
  std::string graph = R"(
    func.func @f(%s: tensor<i64>, %o: tensor<i64>) -> (tensor<64xf32>, tensor<64xi1>) {
      %u = fuse.random uniform, %s, %o : tensor<64xf32>
      %b = fuse.random bernoulli, %s, %o, p = 5.000000e-01 : tensor<64xi1>
      return %u, %b : tensor<64xf32>, tensor<64xi1>
    })";
  auto first = run(graph, {makeTensor(DType::I64, {}, {42}), makeTensor(DType::I64, {}, {0})});
  auto again = run(graph, {makeTensor(DType::I64, {}, {42}), makeTensor(DType::I64, {}, {0})});
  auto shifted = run(graph, {makeTensor(DType::I64, {}, {42}), makeTensor(DType::I64, {}, {1})});
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(shifted.size(), 2u);
  EXPECT_EQ(first[0].floats(), again[0].floats());
  // Counter offset + i / 4: one more offset shifts the stream by 4 elements.
  for (int64_t i = 0; i + 4 < 64; ++i)
    EXPECT_EQ(first[0].floats()[i + 4], shifted[0].floats()[i]) << i;
  for (int64_t i = 0; i < 64; ++i) {
    EXPECT_GE(first[0].floats()[i], 0.0f);
    EXPECT_LT(first[0].floats()[i], 1.0f);
    // bernoulli(p) is uniform < p on the same counters.
    EXPECT_EQ(first[1].ints()[i], first[0].floats()[i] < 0.5f) << i;
  }
}

TEST_F(InterpreterTest, NarrowUniformStaysBelowOne) {
  // A 24-bit draw rounded to bf16 would reach 1.0 for 2^-9 of the mass; the
  // draw keeps only the bits the dtype holds instead.
  auto outputs = run(R"(
    func.func @f(%s: tensor<i64>, %o: tensor<i64>) -> (tensor<8192xbf16>, tensor<8192xf16>) {
      %b = fuse.random uniform, %s, %o : tensor<8192xbf16>
      %h = fuse.random uniform, %s, %o : tensor<8192xf16>
      return %b, %h : tensor<8192xbf16>, tensor<8192xf16>
    })",
                     {makeTensor(DType::I64, {}, {0}), makeTensor(DType::I64, {}, {0})});
  ASSERT_EQ(outputs.size(), 2u);
  for (const HostTensor &tensor : outputs) {
    float max = 0.0f;
    for (float value : tensor.floats()) {
      EXPECT_GE(value, 0.0f);
      max = std::max(max, value);
    }
    EXPECT_LT(max, 1.0f) << ::fuse::dtypeName(tensor.dtype());
    EXPECT_GT(max, 0.99f) << ::fuse::dtypeName(tensor.dtype());
  }
}

TEST_F(InterpreterTest, FusionRunsItsBody) {
  auto outputs = run(R"(
    func.func @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
      %r = fuse.fusion loop (%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32> {
      ^bb0(%a: tensor<3xf32>, %b: tensor<3xf32>):
        %s = fuse.sub %a, %b : tensor<3xf32>
        %t = fuse.relu %s : tensor<3xf32>
        fuse.yield %t : tensor<3xf32>
      }
      return %r : tensor<3xf32>
    })",
                     {makeTensor(DType::F32, {3}, {1, 2, 3}),
                      makeTensor(DType::F32, {3}, {2, 2, 1})});
  ASSERT_EQ(outputs.size(), 1u);
  expectValues(outputs[0], {0, 0, 2}, 0.0);
}

TEST_F(InterpreterTest, RejectsInputsOfTheWrongType) {
  auto outputs = run(R"(
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      return %x : tensor<3xf32>
    })",
                     {makeTensor(DType::F32, {4}, {1, 2, 3, 4})});
  EXPECT_TRUE(outputs.empty());
  EXPECT_NE(diagnostics.find("argument #0 is 3xf32 but the input is 4xf32"),
            std::string::npos)
      << diagnostics;
}

} // namespace
