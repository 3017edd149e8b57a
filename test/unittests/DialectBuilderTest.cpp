//===- DialectBuilderTest.cpp - Building fuse graphs from C++ -------------===//
//
// Builds graphs through the generated C++ builders (which infer result types
// where the dialect can) and checks that they verify, print and parse back,
// and that broken graphs fail verification with a precise diagnostic.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

#include <string>

using namespace mlir;
using namespace mlir::fuse;

namespace {

class DialectBuilderTest : public ::testing::Test {
protected:
  DialectBuilderTest() : builder(&context) {
    context.loadDialect<FuseDialect, func::FuncDialect>();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  /// Verifies the module, collecting diagnostics instead of printing them.
  LogicalResult verifyCollecting(std::string &diagnostics) {
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      diagnostics += diag.str() + "\n";
      return success();
    });
    return verify(*module);
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

// An MLP block, y = gelu(x W^T + b), then the mean of every row: the builders
// infer each result type, and the graph verifies and round-trips as text.
TEST_F(DialectBuilderTest, BuildsMlpBlockWithInferredTypes) {
  Location loc = builder.getUnknownLoc();
  auto funcType = builder.getFunctionType(
      {f32({8, 16, 64}), f32({256, 64}), f32({256})}, {f32({8, 16})});
  auto func = func::FuncOp::create(builder, loc, "mlp", funcType);
  func.setArgAttr(0, FuseDialect::kNameAttr, builder.getStringAttr("x"));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  Value x = body->getArgument(0), w = body->getArgument(1),
        b = body->getArgument(2);

  auto matmul = MatmulOp::create(builder, loc, x, w, /*transpose_lhs=*/false,
                                 /*transpose_rhs=*/true);
  EXPECT_EQ(matmul.getType(), f32({8, 16, 256}));

  auto bias = BroadcastInDimOp::create(builder, loc, f32({8, 16, 256}), b,
                                       builder.getDenseI64ArrayAttr({2}));
  auto sum = AddOp::create(builder, loc, matmul, bias);
  EXPECT_EQ(sum.getType(), f32({8, 16, 256}));
  auto gelu = GeluOp::create(builder, loc, sum, GeluApproximation::Tanh);
  auto mean = ReduceOp::create(builder, loc, ReduceKind::Mean, gelu,
                               builder.getDenseI64ArrayAttr({2}),
                               /*keepdim=*/false);
  EXPECT_EQ(mean.getType(), f32({8, 16}));
  auto mask = CompareOp::create(builder, loc, CompareDirection::GT, mean, mean);
  EXPECT_EQ(mask.getType(),
            RankedTensorType::get({8, 16}, builder.getI1Type()));
  func::ReturnOp::create(builder, loc, ValueRange{mean});

  std::string diagnostics;
  ASSERT_TRUE(succeeded(verifyCollecting(diagnostics))) << diagnostics;

  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  EXPECT_NE(text.find("fuse.matmul %arg0, %arg1 transpose_rhs"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("{fuse.name = \"x\"}"), std::string::npos) << text;

  OwningOpRef<ModuleOp> reparsed = parseSourceString<ModuleOp>(text, &context);
  ASSERT_TRUE(reparsed);
  std::string again;
  llvm::raw_string_ostream os2(again);
  reparsed->print(os2);
  EXPECT_EQ(text, again);
}

TEST_F(DialectBuilderTest, InfersAttentionAndLayerNormResults) {
  Location loc = builder.getUnknownLoc();
  auto bf16 = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getBF16Type());
  };
  auto func = func::FuncOp::create(
      builder, loc, "attn",
      builder.getFunctionType({bf16({2, 8, 128, 64}), bf16({2, 2, 128, 64}),
                               f32({2, 128, 512})},
                              {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  Value q = body->getArgument(0), kv = body->getArgument(1),
        h = body->getArgument(2);

  // Grouped-query attention: 8 query heads share 2 key/value heads.
  auto attention = AttentionOp::create(
      builder, loc, q, kv, kv, /*mask=*/Value(), /*seed=*/Value(),
      /*offset=*/Value(), /*causal=*/true, /*scale=*/llvm::APFloat(0.125),
      /*dropout_p=*/llvm::APFloat(0.0));
  EXPECT_EQ(attention.getOutput().getType(), bf16({2, 8, 128, 64}));
  EXPECT_EQ(attention.getLogsumexp().getType(), f32({2, 8, 128}));

  auto norm = LayerNormOp::create(builder, loc, h, /*weight=*/Value(),
                                  /*bias=*/Value(), /*axis=*/uint64_t{2},
                                  /*epsilon=*/llvm::APFloat(1e-5));
  EXPECT_EQ(norm.getOutput().getType(), f32({2, 128, 512}));
  EXPECT_EQ(norm.getMean().getType(), f32({2, 128, 1}));
  EXPECT_EQ(norm.getRstd().getType(), f32({2, 128, 1}));
  func::ReturnOp::create(builder, loc, ValueRange{});

  std::string diagnostics;
  EXPECT_TRUE(succeeded(verifyCollecting(diagnostics))) << diagnostics;
}

// A broadcast whose operand dimension can neither stay nor stretch must fail
// verification with a message that names the dimensions involved.
TEST_F(DialectBuilderTest, RejectsBadBroadcastWithPreciseDiagnostic) {
  Location loc = builder.getUnknownLoc();
  auto func = func::FuncOp::create(
      builder, loc, "bad", builder.getFunctionType({f32({3})}, {}));
  Block *body = func.addEntryBlock();
  builder.setInsertionPointToStart(body);
  BroadcastInDimOp::create(builder, loc, f32({4, 8}), body->getArgument(0),
                           builder.getDenseI64ArrayAttr({1}));
  func::ReturnOp::create(builder, loc, ValueRange{});

  std::string diagnostics;
  EXPECT_TRUE(failed(verifyCollecting(diagnostics)));
  EXPECT_NE(diagnostics.find("operand dimension 0 (size 3) cannot broadcast "
                             "to result dimension 1 (size 8)"),
            std::string::npos)
      << diagnostics;
}

// Type inference reports failure (and no type) for shapes that cannot meet.
TEST_F(DialectBuilderTest, MatmulInferenceRejectsContractionMismatch) {
  Location loc = builder.getUnknownLoc();
  auto func = func::FuncOp::create(
      builder, loc, "mm",
      builder.getFunctionType({f32({4, 8}), f32({7, 16})}, {}));
  Block *body = func.addEntryBlock();
  SmallVector<Type> inferred;
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    diagnostics += diag.str();
    return success();
  });
  MatmulOp::Properties properties;
  LogicalResult result = MatmulOp::inferReturnTypes(
      &context, loc, body->getArguments(), builder.getDictionaryAttr({}),
      &properties, {}, inferred);
  EXPECT_TRUE(failed(result));
  EXPECT_NE(diagnostics.find("contraction sizes differ"), std::string::npos)
      << diagnostics;
}

} // namespace
