//===- DecomposeArgmax.cpp - argmax into reductions ------------------------===//
//
// fuse.argmax has no kernel template of its own: it becomes the first index
// where the operand equals its maximum along `dim`, a `reduce min` of
// `select(x == max, iota, size)` after the `reduce max`: two reductions over
// the same rows, which fuse-form-fusions puts in one row-reduction kernel.
// Floats keep argmax's NaN rule (the first NaN if there is one): the first
// index where `x != x`, when there is such an index, wins over the maximum.
// CLIP pools its text tower at the argmax of the token ids; greedy decoding
// and accuracy metrics take the argmax of the logits.
//
// The reduction templates accumulate in f32, so the comparison and the
// index arithmetic run in f32: indices are exact below 2^24 elements a row,
// f16/bf16 operands exactly, and integer operands (token ids) exactly below
// 2^24 in magnitude.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::decompose;

namespace {

/// The first index along `dim` where `hit` (i1) holds, or `size` where it
/// holds nowhere (keepdim shape, f32).
Value firstIndex(ImplicitLocOpBuilder &b, Value hit, int64_t dim,
                 RankedTensorType indexType, int64_t size) {
  Value iota = IotaOp::create(b, indexType, static_cast<uint64_t>(dim));
  Value candidates = SelectOp::create(
      b, hit, iota, floatSplat(b, indexType, static_cast<double>(size)));
  return reduce(b, ReduceKind::Min, candidates, {dim}, /*keepdim=*/true);
}

struct DecomposeArgmax : DecomposePattern<ArgmaxOp> {
  DecomposeArgmax(MLIRContext *context)
      : DecomposePattern(context, "DecomposeArgmax") {}

  LogicalResult matchAndRewrite(ArgmaxOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    bool isFloat = isa<FloatType>(tensorType(op.getOperand()).getElementType());
    Value x = castTo(b, op.getOperand(), b.getF32Type());
    RankedTensorType type = tensorType(x);
    int64_t dim = static_cast<int64_t>(op.getDim());
    int64_t size = type.getDimSize(dim);
    ArrayRef<int64_t> shape = type.getShape();

    Value max = broadcastKept(b, reduce(b, ReduceKind::Max, x, {dim}, true),
                              shape);
    Value atMax = CompareOp::create(b, CompareDirection::EQ, x, max);
    Value first = firstIndex(b, atMax, dim, type, size);
    if (isFloat) {
      Value isNan = CompareOp::create(b, CompareDirection::NE, x, x);
      Value firstNan = firstIndex(b, isNan, dim, type, size);
      Value anyNan = CompareOp::create(
          b, CompareDirection::LT, firstNan,
          floatSplat(b, tensorType(firstNan), static_cast<double>(size)));
      first = SelectOp::create(b, anyNan, firstNan, first);
    }
    first = castTo(b, first, b.getI64Type());
    if (!op.getKeepdim())
      first = ReshapeOp::create(b, op.getResult().getType(), first);
    rewriter.replaceOp(op, first);
    return success();
  }
};

} // namespace

void mlir::fuse::populateDecomposeArgmaxPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeArgmax>(patterns.getContext());
}
