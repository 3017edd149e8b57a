//===- DecomposeCrossEntropy.cpp - cross entropy into primitives ----------===//
//
// Logits are [P..., C] (classes last) and labels [P...]. Both directions
// compute in f32, with the per-position log-sum-exp
// `max + log(sum(exp(x - max)))`, and cast the result back to the logits'
// type once, as the op defines it. The label's class is a one-hot mask
// (`iota == label`), so no gather is needed; positions whose label is
// `ignore_index` are zeroed by a select, so whatever their logits hold they
// add exactly 0, as in the reference interpreter.
//
//===----------------------------------------------------------------------===//

#include "Decompose.h"

#include <limits>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::decompose;

namespace {

/// What both directions start from.
struct Rows {
  Value logits;          // f32, [P..., C]
  Value logSumExp;       // f32, [P...]
  Value oneHot;          // i1, [P..., C]: the label's class
  Value counted;         // i1, [P...]: the label is not ignore_index
  SmallVector<int64_t> positionDims; // 0 .. rank(P) - 1
};

/// `labels != ignoreIndex`, or all true when `ignoreIndex` does not fit the
/// labels' type (no label can equal it).
Value countedMask(ImplicitLocOpBuilder &b, Value labels, int64_t ignoreIndex) {
  RankedTensorType type = tensorType(labels);
  auto maskType = type.clone(b.getI1Type());
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  if (width < 64 && (ignoreIndex < -(int64_t(1) << (width - 1)) ||
                     ignoreIndex >= (int64_t(1) << (width - 1))))
    return intSplat(b, maskType, 1);
  return CompareOp::create(b, CompareDirection::NE, labels,
                           intSplat(b, type, ignoreIndex));
}

template <typename OpTy>
Rows prepareRows(ImplicitLocOpBuilder &b, OpTy op) {
  Rows rows;
  rows.logits = castToF32(b, op.getLogits());
  RankedTensorType type = tensorType(rows.logits);
  ArrayRef<int64_t> shape = type.getShape();
  int64_t classDim = type.getRank() - 1;
  rows.positionDims = dimRange(0, classDim);

  Value max = reduce(b, ReduceKind::Max, rows.logits, {classDim}, false);
  Value shifted = SubOp::create(
      b, rows.logits, broadcast(b, max, shape, rows.positionDims));
  Value sum = reduce(b, ReduceKind::Sum, ExpOp::create(b, shifted),
                     {classDim}, false);
  rows.logSumExp = AddOp::create(b, max, LogOp::create(b, sum));

  Value labels = op.getLabels();
  RankedTensorType labelType = tensorType(labels);
  Value classes = IotaOp::create(b, type.clone(labelType.getElementType()),
                                 static_cast<uint64_t>(classDim));
  rows.oneHot =
      CompareOp::create(b, CompareDirection::EQ, classes,
                        broadcast(b, labels, shape, rows.positionDims));
  rows.counted = countedMask(b, labels, op.getIgnoreIndex());
  return rows;
}

/// The sum of `value` ([P...]) over every position: a 0-d tensor.
Value sumPositions(ImplicitLocOpBuilder &b, Value value, const Rows &rows) {
  if (rows.positionDims.empty())
    return value;
  return reduce(b, ReduceKind::Sum, value, rows.positionDims, false);
}

/// The number of counted positions, as a 0-d f32 tensor.
Value countPositions(ImplicitLocOpBuilder &b, const Rows &rows) {
  Value counted = CastOp::create(
      b, tensorType(rows.counted).clone(b.getF32Type()), rows.counted);
  return sumPositions(b, counted, rows);
}

/// loss = lse - logits[label] at counted positions, 0 elsewhere; summed,
/// or averaged over the counted positions (0/0 = NaN if none is).
struct DecomposeCrossEntropy : DecomposePattern<CrossEntropyOp> {
  DecomposeCrossEntropy(MLIRContext *context)
      : DecomposePattern(context, "DecomposeCrossEntropy") {}

  LogicalResult matchAndRewrite(CrossEntropyOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Rows rows = prepareRows(b, op);
    int64_t classDim = tensorType(rows.logits).getRank() - 1;
    Value zeros = splatLike(b, rows.logits, 0.0);
    Value picked = reduce(b, ReduceKind::Sum,
                          SelectOp::create(b, rows.oneHot, rows.logits, zeros),
                          {classDim}, false);
    Value each = SubOp::create(b, rows.logSumExp, picked);
    Value loss = SelectOp::create(b, rows.counted, each,
                                  splatLike(b, each, 0.0));
    switch (op.getReduction()) {
    case LossReduction::None:
      break;
    case LossReduction::Sum:
      loss = sumPositions(b, loss, rows);
      break;
    case LossReduction::Mean:
      loss = DivOp::create(b, sumPositions(b, loss, rows),
                           countPositions(b, rows));
      break;
    }
    rewriter.replaceOp(op, castTo(b, loss, op.getType().getElementType()));
    return success();
  }
};

/// grad = (exp(x - lse) - onehot)·g at counted positions, 0 elsewhere; g is
/// the incoming gradient, divided by the number counted under `mean`.
struct DecomposeCrossEntropyBackward
    : DecomposePattern<CrossEntropyBackwardOp> {
  DecomposeCrossEntropyBackward(MLIRContext *context)
      : DecomposePattern(context, "DecomposeCrossEntropyBackward") {}

  LogicalResult matchAndRewrite(CrossEntropyBackwardOp op,
                                PatternRewriter &rewriter) const override {
    ImplicitLocOpBuilder b(op.getLoc(), rewriter);
    Rows rows = prepareRows(b, op);
    RankedTensorType type = tensorType(rows.logits);
    ArrayRef<int64_t> shape = type.getShape();

    Value probabilities = ExpOp::create(
        b, SubOp::create(b, rows.logits, broadcast(b, rows.logSumExp, shape,
                                                   rows.positionDims)));
    Value target = CastOp::create(b, type, rows.oneHot);
    Value difference = SubOp::create(b, probabilities, target);

    // The gradient of each position's loss: [P...] under `none`, one 0-d
    // value for all positions otherwise.
    Value gradLoss = castToF32(b, op.getGradLoss());
    if (op.getReduction() == LossReduction::Mean)
      gradLoss = DivOp::create(b, gradLoss, countPositions(b, rows));
    ArrayRef<int64_t> gradDims =
        op.getReduction() == LossReduction::None ? ArrayRef(rows.positionDims)
                                                 : ArrayRef<int64_t>();
    Value grad = MulOp::create(b, difference,
                               broadcast(b, gradLoss, shape, gradDims));
    Value counted = broadcast(b, rows.counted, shape, rows.positionDims);
    grad = SelectOp::create(b, counted, grad, splatLike(b, grad, 0.0));
    rewriter.replaceOp(op, castTo(b, grad, op.getType().getElementType()));
    return success();
  }
};

} // namespace

void mlir::fuse::populateDecomposeCrossEntropyPatterns(
    RewritePatternSet &patterns) {
  patterns.add<DecomposeCrossEntropy, DecomposeCrossEntropyBackward>(
      patterns.getContext());
}
