//===- EmptyTensorCanonicalization.cpp - Ops over tensors with no elements ===//
//
// A tensor with a zero dimension is valid Fuse, and most ops on one give
// another (nothing to compute, no kernel). A few ops turn an empty operand
// into a non-empty result whose value follows from no data at all: a
// reduction over an empty dimension is its identity, a matmul with K = 0 is
// zeros, a concat ignores its empty pieces, a scatter_add of no updates is
// its destination, and a summed cross entropy of no positions is 0 (its
// mean is 0/0). These patterns replace them with what they equal, as the
// interpreter computes it, so that no kernel template ever sees an empty
// dimension inside a non-empty computation (code generation reports one
// that does: a graph that skipped canonicalize).
//
// The ops that have no answer over an empty dimension (argmax, attention
// over no keys, cross entropy over no classes, layer norm statistics of no
// elements, a gather from or scatter into an empty dimension with indices)
// are rejected by their verifiers instead.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

bool isEmpty(Value value) {
  return cast<ShapedType>(value.getType()).getNumElements() == 0;
}

/// A splat fuse.constant of `type` holding `value`.
Value splat(PatternRewriter &rewriter, Location loc, RankedTensorType type,
            Attribute value) {
  return ConstantOp::create(rewriter, loc, DenseElementsAttr::get(type, value));
}

/// What a reduction of `kind` over no elements gives in `elementType`: the
/// identity (0; -inf or the lowest integer for max; +inf or the highest for
/// min), and NaN for a mean (0 / 0).
Attribute emptyReduction(ReduceKind kind, Type elementType) {
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    const llvm::fltSemantics &semantics = floatType.getFloatSemantics();
    switch (kind) {
    case ReduceKind::Sum: return FloatAttr::get(floatType, APFloat::getZero(semantics));
    case ReduceKind::Max: return FloatAttr::get(floatType, APFloat::getInf(semantics, true));
    case ReduceKind::Min: return FloatAttr::get(floatType, APFloat::getInf(semantics, false));
    case ReduceKind::Mean: return FloatAttr::get(floatType, APFloat::getNaN(semantics));
    }
  }
  unsigned width = elementType.getIntOrFloatBitWidth();
  switch (kind) {
  case ReduceKind::Max: return IntegerAttr::get(elementType, APInt::getSignedMinValue(width));
  case ReduceKind::Min: return IntegerAttr::get(elementType, APInt::getSignedMaxValue(width));
  default: return IntegerAttr::get(elementType, APInt::getZero(width));
  }
}

struct ReduceOverNothing : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    if (!isEmpty(op.getOperand()) || isEmpty(op.getResult()))
      return failure();
    RankedTensorType type = op.getType();
    rewriter.replaceOp(op, splat(rewriter, op.getLoc(), type,
                                 emptyReduction(op.getKind(), type.getElementType())));
    return success();
  }
};

/// K = 0: every output element is a sum of no products.
struct MatmulOverNothing : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!isEmpty(op.getLhs()) || isEmpty(op.getResult()))
      return failure();
    RankedTensorType type = op.getType();
    rewriter.replaceOp(op, splat(rewriter, op.getLoc(), type,
                                 rewriter.getZeroAttr(type.getElementType())));
    return success();
  }
};

struct ConcatDropsEmptyPieces : OpRewritePattern<ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ConcatOp op,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> pieces;
    for (Value input : op.getInputs())
      if (!isEmpty(input))
        pieces.push_back(input);
    if (pieces.empty() || pieces.size() == op.getInputs().size())
      return failure();
    if (pieces.size() == 1 && pieces.front().getType() == op.getType()) {
      rewriter.replaceOp(op, pieces.front());
      return success();
    }
    rewriter.modifyOpInPlace(op, [&] { op->setOperands(pieces); });
    return success();
  }
};

struct ScatterNothing : OpRewritePattern<ScatterAddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ScatterAddOp op,
                                PatternRewriter &rewriter) const override {
    if (!isEmpty(op.getUpdates()))
      return failure();
    rewriter.replaceOp(op, op.getDest());
    return success();
  }
};

/// No positions: a sum of no losses is 0, their mean 0 / 0 (as torch).
struct CrossEntropyOfNothing : OpRewritePattern<CrossEntropyOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    if (!isEmpty(op.getLabels()) || isEmpty(op.getResult()))
      return failure();
    RankedTensorType type = op.getType();
    ReduceKind kind = op.getReduction() == LossReduction::Sum ? ReduceKind::Sum
                                                              : ReduceKind::Mean;
    rewriter.replaceOp(op, splat(rewriter, op.getLoc(), type,
                                 emptyReduction(kind, type.getElementType())));
    return success();
  }
};

} // namespace

void FuseDialect::getCanonicalizationPatterns(RewritePatternSet &patterns) const {
  patterns.add<ReduceOverNothing, MatmulOverNothing, ConcatDropsEmptyPieces,
               ScatterNothing, CrossEntropyOfNothing>(getContext());
}
