//===- DecomposeActivations.cpp - gelu and silu into primitives -----------===//
//
// Both compute in f32, as the ops define (and the interpreter evaluates)
// them: f16 and bf16 operands are cast up and the result cast back once.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::decompose;

namespace {

/// erf: 0.5·x·(1 + erf(x·(1/√2)));
/// tanh: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
struct DecomposeGelu : DecomposePattern<GeluOp> {
  DecomposeGelu(MLIRContext *context)
      : DecomposePattern(context, "DecomposeGelu") {}

  LogicalResult matchAndRewrite(GeluOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value x = castToF32(b, op.getOperand());
    Value inner;
    if (op.getApproximate() == GeluApproximation::Erf) {
      Value scaled = MulOp::create(b, x, splatLike(b, x, M_SQRT1_2));
      inner = ErfOp::create(b, scaled);
    } else {
      // (0.044715·x)·x·x, in the order the interpreter rounds it.
      Value cubic = MulOp::create(b, splatLike(b, x, 0.044715), x);
      cubic = MulOp::create(b, MulOp::create(b, cubic, x), x);
      Value sum = AddOp::create(b, x, cubic);
      const double sqrtTwoOverPi = M_2_SQRTPI * M_SQRT1_2; // √(2/π)
      inner = TanhOp::create(
          b, MulOp::create(b, sum, splatLike(b, x, sqrtTwoOverPi)));
    }
    Value onePlus = AddOp::create(b, inner, splatLike(b, x, 1.0));
    Value half = MulOp::create(b, x, splatLike(b, x, 0.5));
    Value y = MulOp::create(b, half, onePlus);
    rewriter.replaceOp(op, castTo(b, y, op.getType().getElementType()));
    return success();
  }
};

/// x·sigmoid(x).
struct DecomposeSilu : DecomposePattern<SiluOp> {
  DecomposeSilu(MLIRContext *context)
      : DecomposePattern(context, "DecomposeSilu") {}

  LogicalResult matchAndRewrite(SiluOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value x = castToF32(b, op.getOperand());
    Value y = MulOp::create(b, x, SigmoidOp::create(b, x));
    rewriter.replaceOp(op, castTo(b, y, op.getType().getElementType()));
    return success();
  }
};

} // namespace

void mlir::fuse::populateDecomposeActivationPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeGelu, DecomposeSilu>(patterns.getContext());
}
