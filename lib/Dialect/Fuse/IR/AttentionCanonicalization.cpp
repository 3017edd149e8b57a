//===- AttentionCanonicalization.cpp - Attention masks read unbroadcast ---===//
//
// An attention mask may have size-1 dimensions, `[B|1, Hq|1, Tq|1, Tk]`:
// the interpreter and the CUDA kernels read such a dimension with a zero
// stride (attentionMaskStrides). Front ends nonetheless expand masks
// before attention: a HuggingFace model expands its [B, 1, Tq, Tk] padding
// mask to every head (aten.expand, fuse.broadcast_in_dim), so the graph
// would materialize a [B, Hq, Tq, Tk] mask, Hq times the memory (gigabytes
// for long sequences), and keep it alive from the forward to the backward.
// Attention reading the broadcast's operand instead computes the same
// scores from one copy of each distinct element.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

/// mask(broadcast_in_dim(m)) -> mask(m), with m reshaped to rank 4 when it
/// has fewer dimensions. Operand dimension i of the broadcast becomes mask
/// dimension dims[i], keeping its size (the full size, or 1 where the
/// broadcast expands it); mask dimensions no operand dimension maps to are
/// 1. Since `dims` is increasing, that rank-4 shape lists m's dimensions in
/// their order with 1s between them, so a reshape (row-major order kept)
/// gives it and element (b, h, i, j) of the broadcast is element (b, h, i, j)
/// of the reshape with every size-1 index read as 0, which is how attention
/// reads a size-1 mask dimension. Every dimension of the new mask is then
/// its full size or 1, as the attention op requires, except possibly the
/// key dimension, which attention takes only at full size (the kernels
/// index it densely): a broadcast over the keys stays.
template <typename AttentionOpTy>
struct MaskThroughBroadcast : OpRewritePattern<AttentionOpTy> {
  using OpRewritePattern<AttentionOpTy>::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOpTy op,
                                PatternRewriter &rewriter) const override {
    Value mask = op.getMask();
    if (!mask)
      return failure();
    auto broadcast = mask.getDefiningOp<BroadcastInDimOp>();
    if (!broadcast)
      return failure();
    auto maskType = cast<RankedTensorType>(mask.getType());
    Value source = broadcast.getOperand();
    auto sourceType = cast<RankedTensorType>(source.getType());
    ArrayRef<int64_t> dims = broadcast.getDims();
    // The broadcast's verifier already guarantees all of this; it is checked
    // again because a wrong shape here would change which element attention
    // reads, not just fail to verify.
    if (maskType.getRank() != 4 ||
        static_cast<int64_t>(dims.size()) != sourceType.getRank())
      return failure();
    SmallVector<int64_t, 4> shape(4, 1);
    for (auto [i, dim] : llvm::enumerate(dims)) {
      if (dim < 0 || dim >= 4 || (i > 0 && dim <= dims[i - 1]))
        return failure();
      int64_t size = sourceType.getDimSize(i);
      if (size != 1 && size != maskType.getDimSize(dim))
        return failure();
      shape[dim] = size;
    }
    // The key dimension must be read as it is: [B|1, Hq|1, Tq|1, Tk].
    if (shape[3] != maskType.getDimSize(3))
      return failure();

    auto newType = RankedTensorType::get(shape, maskType.getElementType());
    Value newMask = source;
    if (sourceType != newType) {
      rewriter.setInsertionPoint(op);
      newMask = ReshapeOp::create(rewriter, broadcast.getLoc(), newType, source);
    }
    rewriter.modifyOpInPlace(op,
                             [&] { op.getMaskMutable().assign(newMask); });
    return success();
  }
};

} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<MaskThroughBroadcast<AttentionOp>>(context);
}

void AttentionBackwardOp::getCanonicalizationPatterns(
    RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<MaskThroughBroadcast<AttentionBackwardOp>>(context);
}
