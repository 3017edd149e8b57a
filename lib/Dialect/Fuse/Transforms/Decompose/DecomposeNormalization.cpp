//===- DecomposeNormalization.cpp - softmax and the norms into primitives -===//
//
// Statistics are f32, as the ops define them: f16 and bf16 inputs (and
// weights and biases) are cast up, everything runs in f32 and the output is
// cast back once. Reductions keep the reduced dimensions with size 1, which
// is the shape of layer_norm's mean and rstd, and broadcast back from there.
// The variance is two-pass (mean, then the mean of centred squares), as the
// reference interpreter computes it.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::decompose;

namespace {

/// softmax: exp(x - max) / sum(exp(x - max));
/// log_softmax: (x - max) - log(sum(exp(x - max))).
template <typename OpTy>
struct DecomposeSoftmax : DecomposePattern<OpTy> {
  static constexpr bool kLogarithm = std::is_same_v<OpTy, LogSoftmaxOp>;

  DecomposeSoftmax(MLIRContext *context)
      : DecomposePattern<OpTy>(context, kLogarithm ? "DecomposeLogSoftmax"
                                                   : "DecomposeSoftmax") {}

  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Value x = castToF32(b, op.getOperand());
    ArrayRef<int64_t> shape = op.getType().getShape();
    int64_t dim = op.getDim();
    Value max = reduce(b, ReduceKind::Max, x, {dim}, /*keepdim=*/true);
    Value shifted = SubOp::create(b, x, broadcastKept(b, max, shape));
    Value exp = ExpOp::create(b, shifted);
    Value sum = reduce(b, ReduceKind::Sum, exp, {dim}, /*keepdim=*/true);
    Value y;
    if constexpr (kLogarithm)
      y = SubOp::create(b, shifted,
                        broadcastKept(b, LogOp::create(b, sum), shape));
    else
      y = DivOp::create(b, exp, broadcastKept(b, sum, shape));
    rewriter.replaceOp(op, castTo(b, y, op.getType().getElementType()));
    return success();
  }
};

/// `normalized · weight + bias` over the trailing dimensions from `axis`,
/// each term only if present; in f32, cast back to `elementType`.
Value applyAffine(ImplicitLocOpBuilder &b, Value normalized, Value weight,
                  Value bias, int64_t axis, Type elementType) {
  ArrayRef<int64_t> shape = tensorType(normalized).getShape();
  SmallVector<int64_t> trailing = dimRange(axis, shape.size());
  Value y = normalized;
  if (weight)
    y = MulOp::create(b, y, broadcast(b, castToF32(b, weight), shape, trailing));
  if (bias)
    y = AddOp::create(b, y, broadcast(b, castToF32(b, bias), shape, trailing));
  return castTo(b, y, elementType);
}

/// mean = mean(x); rstd = rsqrt(mean((x - mean)²) + epsilon);
/// output = (x - mean)·rstd·weight + bias.
struct DecomposeLayerNorm : DecomposePattern<LayerNormOp> {
  DecomposeLayerNorm(MLIRContext *context)
      : DecomposePattern(context, "DecomposeLayerNorm") {}

  LogicalResult matchAndRewrite(LayerNormOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    RankedTensorType type = op.getOutput().getType();
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> normalized = dimRange(op.getAxis(), shape.size());
    Value x = castToF32(b, op.getInput());
    Value mean = reduce(b, ReduceKind::Mean, x, normalized, /*keepdim=*/true);
    Value centred = SubOp::create(b, x, broadcastKept(b, mean, shape));
    Value squares = MulOp::create(b, centred, centred);
    Value variance =
        reduce(b, ReduceKind::Mean, squares, normalized, /*keepdim=*/true);
    Value rstd = RsqrtOp::create(
        b, AddOp::create(b, variance,
                         splatLike(b, variance,
                                   op.getEpsilon().convertToDouble())));
    Value y = MulOp::create(b, centred, broadcastKept(b, rstd, shape));
    Value output = applyAffine(b, y, op.getWeight(), op.getBias(),
                               op.getAxis(), type.getElementType());
    rewriter.replaceOp(op, {output, mean, rstd});
    return success();
  }
};

/// x·rsqrt(mean(x²) + epsilon)·weight.
struct DecomposeRmsNorm : DecomposePattern<RmsNormOp> {
  DecomposeRmsNorm(MLIRContext *context)
      : DecomposePattern(context, "DecomposeRmsNorm") {}

  LogicalResult matchAndRewrite(RmsNormOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    RankedTensorType type = op.getType();
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> normalized = dimRange(op.getAxis(), shape.size());
    Value x = castToF32(b, op.getInput());
    Value meanSquare = reduce(b, ReduceKind::Mean, MulOp::create(b, x, x),
                              normalized, /*keepdim=*/true);
    Value rstd = RsqrtOp::create(
        b, AddOp::create(b, meanSquare,
                         splatLike(b, meanSquare,
                                   op.getEpsilon().convertToDouble())));
    Value y = MulOp::create(b, x, broadcastKept(b, rstd, shape));
    rewriter.replaceOp(op, applyAffine(b, y, op.getWeight(), /*bias=*/nullptr,
                                       op.getAxis(), type.getElementType()));
    return success();
  }
};

} // namespace

void mlir::fuse::populateDecomposeNormalizationPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeSoftmax<SoftmaxOp>, DecomposeSoftmax<LogSoftmaxOp>,
               DecomposeLayerNorm, DecomposeRmsNorm>(patterns.getContext());
}
