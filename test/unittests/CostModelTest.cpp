//===- CostModelTest.cpp - FLOP, byte and kernel counts -------------------===//
//
// The formulas of CostFormulas.h on hand-worked values, the check that they
// add up to PaLM's MFU formula (6·N + 12·L·H·Q·T per token), and the cost
// model on parsed graphs: the C++ API that later passes and the runtime
// report use (fuse-print-cost's lit test covers every op kind).
//
//===----------------------------------------------------------------------===//

#include "fuse/Analysis/CostModel.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <limits>
#include <string>

using namespace mlir;
using ::fuse::OpCost;
namespace cost = ::fuse::cost;

namespace {

TEST(CostFormulas, BytesPerElementFollowTheDtype) {
  EXPECT_EQ(cost::tensorBytes(10, 32), 40); // f32, i32
  EXPECT_EQ(cost::tensorBytes(10, 16), 20); // bf16, f16
  EXPECT_EQ(cost::tensorBytes(10, 64), 80); // i64
  EXPECT_EQ(cost::tensorBytes(10, 1), 10);  // i1 is stored as a byte
  EXPECT_EQ(cost::tensorBytes(0, 32), 0);
}

TEST(CostFormulas, MatmulIsTwoFlopsPerMultiplyAdd) {
  EXPECT_EQ(cost::matmulFlops(1, 4, 5, 6), 2 * 4 * 5 * 6);
  EXPECT_EQ(cost::matmulFlops(3, 4, 5, 6), 3 * 2 * 4 * 5 * 6);
}

TEST(CostFormulas, AttentionCountsQKAndPV) {
  // 4·B·H·Tq·Tk·D when Dv = D.
  EXPECT_EQ(cost::attentionForwardFlops(2, 3, 5, 7, 8, 8),
            4 * 2 * 3 * 5 * 7 * 8);
  // QK^T contracts over D, PV over Tk producing Dv.
  EXPECT_EQ(cost::attentionForwardFlops(1, 1, 4, 6, 8, 16),
            2 * 4 * 6 * 8 + 2 * 4 * 16 * 6);
  EXPECT_EQ(cost::attentionBackwardFlops(2, 3, 5, 7, 8, 8),
            2 * cost::attentionForwardFlops(2, 3, 5, 7, 8, 8));
}

TEST(CostFormulas, NormsCountTheirAffineTerms) {
  EXPECT_EQ(cost::layerNormFlops(100, false, false), 500);
  EXPECT_EQ(cost::layerNormFlops(100, true, false), 600);
  EXPECT_EQ(cost::layerNormFlops(100, true, true), 700);
  EXPECT_EQ(cost::rmsNormFlops(100, false), 300);
  EXPECT_EQ(cost::rmsNormFlops(100, true), 400);
}

// A linear layer's forward, input gradient and weight gradient are 6 FLOPs
// per weight per token: the 6·N of PaLM's formula.
TEST(CostFormulas, LinearLayerTrainingIsSixFlopsPerWeightPerToken) {
  const int64_t tokens = 8192, in = 768, out = 3072;
  int64_t forward = cost::matmulFlops(1, tokens, out, in);
  int64_t gradInput = cost::matmulFlops(1, tokens, in, out);
  int64_t gradWeight = cost::matmulFlops(1, in, out, tokens);
  EXPECT_EQ(forward + gradInput + gradWeight, 6 * in * out * tokens);
}

// Causal attention is not halved, so the forward and backward of every layer
// add up to exactly PaLM's 12·L·H·Q·T per token (GPT-2 124M, B8 T1024).
TEST(CostFormulas, AttentionMatchesPalmPerToken) {
  const int64_t batch = 8, layers = 12, heads = 12, headDim = 64, seq = 1024;
  int64_t perLayer =
      cost::attentionForwardFlops(batch, heads, seq, seq, headDim, headDim) +
      cost::attentionBackwardFlops(batch, heads, seq, seq, headDim, headDim);
  int64_t perToken = layers * perLayer / (batch * seq);
  EXPECT_EQ(perToken, 12 * layers * heads * headDim * seq);
  EXPECT_EQ(cost::palmTrainFlopsPerToken(124'475'904, layers, heads, headDim,
                                         seq),
            6 * 124'475'904 + perToken);
}

TEST(CostFormulas, OpCostsAdd) {
  OpCost total{1, 2, 3, 1};
  total += OpCost{10, 20, 30, 0};
  EXPECT_EQ(total, (OpCost{11, 22, 33, 1}));
}

// Each tensor fits in int64 bytes, but a GEMM's 2·M·N·K need not: counts
// saturate at int64's maximum instead of wrapping (2^67 wrapped to 0, a
// larger product to -2^63), and sums of them stay there.
TEST(CostFormulas, CountsSaturateInsteadOfWrapping) {
  const int64_t most = std::numeric_limits<int64_t>::max();
  const int64_t n = int64_t(1) << 22;
  EXPECT_EQ(cost::matmulFlops(1, n, n, n), most);
  EXPECT_EQ(cost::matmulFlops(3, n, n, 1), 3 * 2 * n * n);
  EXPECT_EQ(cost::attentionBackwardFlops(n, n, n, n, 64, 64), most);
  EXPECT_EQ(cost::layerNormFlops(most / 2, true, true), most);
  OpCost total{most - 1, 0, 0, 1};
  total += OpCost{most, 1, 1, 1};
  EXPECT_EQ(total, (OpCost{most, 1, 1, 2}));
}

class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() {
    context.allowUnregisteredDialects();
    context.loadDialect<mlir::fuse::FuseDialect, func::FuncDialect>();
  }

  /// Parses `source`, one function, and returns it (null on a parse error).
  func::FuncOp parse(const std::string &source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    if (!module)
      return nullptr;
    return *module->getOps<func::FuncOp>().begin();
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CostModelTest, FunctionListsEachOpAndSumsThem) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<8x16xbf16>, %w: tensor<32x16xbf16>) -> tensor<256xf32> {
      %y = fuse.matmul %x, %w transpose_rhs : (tensor<8x16xbf16>, tensor<32x16xbf16>) -> tensor<8x32xbf16>
      %f = fuse.cast %y : tensor<8x32xbf16> to tensor<8x32xf32>
      %r = fuse.reshape %f : (tensor<8x32xf32>) -> tensor<256xf32>
      return %r : tensor<256xf32>
    })mlir");
  ASSERT_TRUE(func);
  FailureOr<mlir::fuse::FuncCost> cost = mlir::fuse::computeFuncCost(func);
  ASSERT_TRUE(succeeded(cost));
  // The return is not listed.
  ASSERT_EQ(cost->ops.size(), 3u);
  EXPECT_EQ(cost->ops[0].op->getName().getStringRef(), "fuse.matmul");
  // 2·8·32·16 FLOPs; bf16 x (256 B) and w (1024 B) read, y (512 B) written.
  EXPECT_EQ(cost->ops[0].cost, (OpCost{8192, 1280, 512, 1}));
  EXPECT_EQ(cost->ops[1].cost, (OpCost{256, 512, 1024, 1}));
  EXPECT_EQ(cost->ops[2].cost, (OpCost{0, 0, 0, 0}));
  EXPECT_EQ(cost->total, (OpCost{8448, 1792, 1536, 2}));
}

TEST_F(CostModelTest, FusionCountsItsBoundaryAndItsOpsFlops) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<4x8xf32>, %b: tensor<8xf32>) -> tensor<4x8xf32> {
      %y = fuse.fusion loop (%x, %b) : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32> {
      ^bb0(%a: tensor<4x8xf32>, %c: tensor<8xf32>):
        %cb = fuse.broadcast_in_dim %c, dims = [1] : (tensor<8xf32>) -> tensor<4x8xf32>
        %s = fuse.add %a, %cb : tensor<4x8xf32>
        %t = fuse.tanh %s : tensor<4x8xf32>
        fuse.yield %t : tensor<4x8xf32>
      }
      return %y : tensor<4x8xf32>
    })mlir");
  ASSERT_TRUE(func);
  Operation *fusion = &func.getBody().front().front();
  FailureOr<OpCost> cost = mlir::fuse::computeOpCost(fusion);
  ASSERT_TRUE(succeeded(cost));
  // add and tanh, 32 each; reads x and b (128 + 32 B), writes y (128 B).
  EXPECT_EQ(*cost, (OpCost{64, 160, 128, 1}));
}

TEST_F(CostModelTest, UnknownOpFailsWithADiagnostic) {
  func::FuncOp func = parse(R"mlir(
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %y = "test.opaque"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %y : tensor<4xf32>
    })mlir");
  ASSERT_TRUE(func);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  EXPECT_TRUE(failed(mlir::fuse::computeFuncCost(func)));
  EXPECT_EQ(message, "'test.opaque' op has no cost model");
}

} // namespace
