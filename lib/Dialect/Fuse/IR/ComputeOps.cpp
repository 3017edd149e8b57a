//===- ComputeOps.cpp - Reductions, matmul and composite ops --------------===//

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "OpVerification.h"

#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::detail;

//===----------------------------------------------------------------------===//
// ReduceOp and ArgmaxOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType operandType = getTensorType(adaptor.getOperand());
  if (!operandType)
    return emitInferError<ReduceOp>(location, "expects a tensor operand");
  ArrayRef<int64_t> dims = adaptor.getDims();
  std::string error =
      checkIncreasingDims(dims, operandType.getRank(), /*allowEmpty=*/false);
  if (!error.empty())
    return emitInferError<ReduceOp>(location, "dims: ", error);
  if (adaptor.getKind() == ReduceKind::Mean &&
      !llvm::isa<FloatType>(operandType.getElementType()))
    return emitInferError<ReduceOp>(location,
                                    "mean needs a float operand, not ",
                                    operandType.getElementType());
  inferredReturnTypes.push_back(RankedTensorType::get(
      reduceShape(operandType.getShape(), dims, adaptor.getKeepdim()),
      operandType.getElementType()));
  return success();
}

namespace {

/// A reduction over dimensions of size 1 reduces one element each: sum,
/// max, min and mean of one element are the element, so the op is its
/// operand (keepdim) or a reshape of it. Code generation has no template
/// for such a reduce inside a fusion (a batch-1 training step's bias
/// gradient over the batch dimension), and it needs none.
struct ReduceOverUnitDims : OpRewritePattern<ReduceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(ReduceOp op,
                                PatternRewriter &rewriter) const override {
    auto operandType = cast<RankedTensorType>(op.getOperand().getType());
    for (int64_t dim : op.getDims())
      if (operandType.getDimSize(dim) != 1)
        return failure();
    if (op.getType() == operandType)
      rewriter.replaceOp(op, op.getOperand());
    else
      rewriter.replaceOpWithNewOp<ReshapeOp>(op, op.getType(), op.getOperand());
    return success();
  }
};

} // namespace

void ReduceOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<ReduceOverUnitDims>(context);
}

LogicalResult ArgmaxOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType operandType = getTensorType(adaptor.getOperand());
  if (!operandType)
    return emitInferError<ArgmaxOp>(location, "expects a tensor operand");
  int64_t dim = adaptor.getDim();
  if (dim >= operandType.getRank())
    return emitInferError<ArgmaxOp>(location, "dim ", dim,
                                    " is out of range for operand rank ",
                                    operandType.getRank());
  // No element to point at: there is no answer (torch raises too).
  if (operandType.getDimSize(dim) == 0)
    return emitInferError<ArgmaxOp>(location, "dim ", dim, " of ",
                                    operandType,
                                    " is empty: an argmax over no elements "
                                    "has no answer");
  inferredReturnTypes.push_back(RankedTensorType::get(
      reduceShape(operandType.getShape(), {dim}, adaptor.getKeepdim()),
      IntegerType::get(context, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// CumsumOp
//===----------------------------------------------------------------------===//

LogicalResult CumsumOp::verify() {
  int64_t rank = getType().getRank();
  if (static_cast<int64_t>(getDim()) >= rank)
    return emitOpError() << "dim " << getDim()
                         << " is out of range for operand rank " << rank
                         << (rank == 0 ? " (a 0-d tensor is its own cumsum)" : "");
  return success();
}

OpFoldResult CumsumOp::fold(FoldAdaptor) {
  // Along a dimension of size 1 every element is its own prefix sum.
  if (getType().getDimSize(getDim()) == 1)
    return getOperand();
  return {};
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType lhsType = getTensorType(adaptor.getLhs());
  RankedTensorType rhsType = getTensorType(adaptor.getRhs());
  if (!lhsType || !rhsType)
    return emitInferError<MatmulOp>(location, "expects tensor operands");
  if (lhsType.getElementType() != rhsType.getElementType())
    return emitInferError<MatmulOp>(
        location, "operands have different element types (",
        lhsType.getElementType(), " and ", rhsType.getElementType(),
        "): cast one explicitly");
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  if (lhsRank < 2 || rhsRank < 2)
    return emitInferError<MatmulOp>(location,
                                    "operands need rank 2 or more, got ",
                                    lhsRank, " and ", rhsRank);
  if (rhsRank != lhsRank && rhsRank != 2)
    return emitInferError<MatmulOp>(
        location, "rhs must have the rank of lhs (", lhsRank,
        ") or be a matrix shared by every batch, got rank ", rhsRank);

  ArrayRef<int64_t> lhs = lhsType.getShape(), rhs = rhsType.getShape();
  ArrayRef<int64_t> batch = lhs.drop_back(2);
  if (rhsRank == lhsRank && rhs.drop_back(2) != batch)
    return emitInferError<MatmulOp>(
        location, "batch dimensions differ: lhs ", formatShape(lhs),
        ", rhs ", formatShape(rhs));

  bool transposeLhs = adaptor.getTransposeLhs();
  bool transposeRhs = adaptor.getTransposeRhs();
  int64_t m = lhs[lhsRank - (transposeLhs ? 1 : 2)];
  int64_t lhsK = lhs[lhsRank - (transposeLhs ? 2 : 1)];
  int64_t rhsK = rhs[rhsRank - (transposeRhs ? 1 : 2)];
  int64_t n = rhs[rhsRank - (transposeRhs ? 2 : 1)];
  if (lhsK != rhsK)
    return emitInferError<MatmulOp>(
        location, "contraction sizes differ: lhs ", formatShape(lhs),
        (transposeLhs ? " (transposed)" : ""), " has K = ", lhsK, ", rhs ",
        formatShape(rhs), (transposeRhs ? " (transposed)" : ""), " has K = ",
        rhsK);

  SmallVector<int64_t> shape(batch);
  shape.append({m, n});
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, lhsType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp and LogSoftmaxOp
//===----------------------------------------------------------------------===//

template <typename OpTy>
static LogicalResult verifySoftmaxDim(OpTy op) {
  int64_t rank = op.getType().getRank();
  if (static_cast<int64_t>(op.getDim()) >= rank)
    return op.emitOpError() << "dim " << op.getDim()
                            << " is out of range for rank " << rank;
  return success();
}

LogicalResult SoftmaxOp::verify() { return verifySoftmaxDim(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxDim(*this); }

//===----------------------------------------------------------------------===//
// LayerNormOp and RmsNormOp
//===----------------------------------------------------------------------===//

/// Checks the axis, epsilon and affine parameters shared by the norms.
template <typename OpTy>
static LogicalResult verifyNormOperands(std::optional<Location> location,
                                        RankedTensorType inputType,
                                        int64_t axis, double epsilon,
                                        ArrayRef<std::pair<StringRef, Value>>
                                            affine) {
  if (axis >= inputType.getRank())
    return emitInferError<OpTy>(location, "axis ", axis,
                                " is out of range for input rank ",
                                inputType.getRank());
  if (!(epsilon >= 0.0) || std::isinf(epsilon))
    return emitInferError<OpTy>(location,
                                "epsilon must be finite and >= 0, got ", epsilon);
  ArrayRef<int64_t> normalized = inputType.getShape().drop_front(axis);
  for (auto [name, value] : affine) {
    if (!value)
      continue;
    RankedTensorType type = getTensorType(value);
    if (!type)
      return emitInferError<OpTy>(location, name, " must be a tensor");
    if (type.getShape() != normalized ||
        type.getElementType() != inputType.getElementType())
      return emitInferError<OpTy>(
          location, name, " has type ", type, " but the input ",
          formatShape(inputType.getShape()), " normalised from axis ", axis,
          " needs ", RankedTensorType::get(normalized,
                                           inputType.getElementType()));
  }
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType inputType = getTensorType(adaptor.getInput());
  if (!inputType)
    return emitInferError<LayerNormOp>(location, "expects a tensor input");
  int64_t axis = adaptor.getAxis();
  if (failed(verifyNormOperands<LayerNormOp>(
          location, inputType, axis, adaptor.getEpsilon().convertToDouble(),
          {{"weight", adaptor.getWeight()}, {"bias", adaptor.getBias()}})))
    return failure();
  SmallVector<int64_t> statsShape(inputType.getShape().take_front(axis));
  // Statistics of no elements are 0 / 0; an empty input with no rows
  // (nothing to return) is fine.
  if (llvm::is_contained(inputType.getShape().drop_front(axis), 0) &&
      !llvm::is_contained(statsShape, 0))
    return emitInferError<LayerNormOp>(
        location, "normalises ", inputType, " from axis ", axis,
        " over no elements: its mean and rstd would be 0 / 0");
  statsShape.resize(inputType.getRank(), 1);
  auto statsType = RankedTensorType::get(statsShape, Float32Type::get(context));
  inferredReturnTypes.append({inputType, statsType, statsType});
  return success();
}

LogicalResult RmsNormOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType inputType = getTensorType(adaptor.getInput());
  if (!inputType)
    return emitInferError<RmsNormOp>(location, "expects a tensor input");
  if (failed(verifyNormOperands<RmsNormOp>(
          location, inputType, adaptor.getAxis(),
          adaptor.getEpsilon().convertToDouble(),
          {{"weight", adaptor.getWeight()}})))
    return failure();
  inferredReturnTypes.push_back(inputType);
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp and AttentionBackwardOp
//===----------------------------------------------------------------------===//

namespace {
/// The result types of attention forward: output and log-sum-exp.
struct AttentionTypes {
  RankedTensorType output;
  RankedTensorType logsumexp;
};
} // namespace

/// Checks the operands and options shared by attention forward and backward
/// and computes the forward's result types.
template <typename OpTy, typename AdaptorTy>
static FailureOr<AttentionTypes>
inferAttentionTypes(MLIRContext *context, std::optional<Location> location,
                    AdaptorTy adaptor) {
  RankedTensorType q = getTensorType(adaptor.getQuery());
  RankedTensorType k = getTensorType(adaptor.getKey());
  RankedTensorType v = getTensorType(adaptor.getValue());
  if (!q || !k || !v)
    return emitInferError<OpTy>(location, "expects tensor query, key, value");
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return emitInferError<OpTy>(
        location, "query, key and value must be [B, H, T, D] (rank 4), got ",
        formatShape(q.getShape()), ", ", formatShape(k.getShape()), ", ",
        formatShape(v.getShape()));
  Type elementType = q.getElementType();
  if (k.getElementType() != elementType || v.getElementType() != elementType)
    return emitInferError<OpTy>(
        location, "query, key and value need one element type, got ",
        elementType, ", ", k.getElementType(), ", ", v.getElementType());
  int64_t batch = q.getDimSize(0), queryHeads = q.getDimSize(1);
  int64_t queryLen = q.getDimSize(2), headDim = q.getDimSize(3);
  int64_t kvHeads = k.getDimSize(1), keyLen = k.getDimSize(2);
  if (k.getDimSize(0) != batch || v.getDimSize(0) != batch)
    return emitInferError<OpTy>(location, "batch sizes differ: query ", batch,
                                ", key ", k.getDimSize(0), ", value ",
                                v.getDimSize(0));
  if (k.getDimSize(3) != headDim)
    return emitInferError<OpTy>(location, "key head dim ", k.getDimSize(3),
                                " differs from query head dim ", headDim);
  if (v.getDimSize(1) != kvHeads || v.getDimSize(2) != keyLen)
    return emitInferError<OpTy>(
        location, "value ", formatShape(v.getShape()),
        " must match key ", formatShape(k.getShape()),
        " in heads and sequence length");
  // A softmax over no keys is 0 / 0, for every query row there is.
  if (keyLen == 0 && batch * queryHeads * queryLen != 0)
    return emitInferError<OpTy>(location, "key and value have no positions "
                                          "(", k, "): attention over no keys "
                                          "is 0 / 0");
  if (kvHeads == 0 || queryHeads % kvHeads != 0)
    return emitInferError<OpTy>(
        location, "query heads (", queryHeads,
        ") must be a multiple of key/value heads (", kvHeads, ")");

  if (Value mask = adaptor.getMask()) {
    if (adaptor.getCausal())
      return emitInferError<OpTy>(
          location, "takes either a mask or causal, not both");
    RankedTensorType maskType = getTensorType(mask);
    if (!maskType)
      return emitInferError<OpTy>(location, "mask must be a tensor");
    if (!maskType.getElementType().isInteger(1) &&
        maskType.getElementType() != elementType)
      return emitInferError<OpTy>(location, "mask must be i1 or ", elementType,
                                  ", got ", maskType.getElementType());
    int64_t full[] = {batch, queryHeads, queryLen, keyLen};
    bool ok = maskType.getRank() == 4;
    for (int64_t d = 0; ok && d < 4; ++d) {
      int64_t size = maskType.getDimSize(d);
      ok = size == full[d] || (size == 1 && d < 3);
    }
    if (!ok)
      return emitInferError<OpTy>(
          location, "mask ", formatShape(maskType.getShape()),
          " must be [B|1, H|1, Tq|1, Tk] = [", batch, "|1, ", queryHeads,
          "|1, ", queryLen, "|1, ", keyLen, "]");
  }

  double scale = adaptor.getScale().convertToDouble();
  if (!(scale > 0.0) || std::isinf(scale))
    return emitInferError<OpTy>(location, "scale must be finite and > 0, got ",
                                scale);
  double dropout = adaptor.getDropoutP().convertToDouble();
  if (!(dropout >= 0.0 && dropout < 1.0))
    return emitInferError<OpTy>(location, "dropout_p must be in [0, 1), got ",
                                dropout);
  bool hasSeed = adaptor.getSeed() != nullptr;
  bool hasOffset = adaptor.getOffset() != nullptr;
  if (hasSeed != hasOffset)
    return emitInferError<OpTy>(location,
                                "rng needs both a seed and an offset");
  bool hasRng = hasSeed;
  if (dropout > 0.0 && !hasRng)
    return emitInferError<OpTy>(location, "dropout_p = ", dropout,
                                " needs rng(%seed, %offset)");
  if (dropout == 0.0 && hasRng)
    return emitInferError<OpTy>(location,
                                "rng given but dropout_p is 0: drop it");

  AttentionTypes types;
  types.output = RankedTensorType::get(
      {batch, queryHeads, queryLen, v.getDimSize(3)}, elementType);
  types.logsumexp = RankedTensorType::get({batch, queryHeads, queryLen},
                                          Float32Type::get(context));
  return types;
}

LogicalResult AttentionOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<AttentionTypes> types =
      inferAttentionTypes<AttentionOp>(context, location, adaptor);
  if (failed(types))
    return failure();
  inferredReturnTypes.append({types->output, types->logsumexp});
  return success();
}

LogicalResult AttentionBackwardOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<AttentionTypes> types =
      inferAttentionTypes<AttentionBackwardOp>(context, location, adaptor);
  if (failed(types))
    return failure();
  std::pair<StringRef, std::pair<Value, RankedTensorType>> saved[] = {
      {"grad_output", {adaptor.getGradOutput(), types->output}},
      {"output", {adaptor.getOutput(), types->output}},
      {"logsumexp", {adaptor.getLogsumexp(), types->logsumexp}}};
  for (auto &[name, valueAndType] : saved) {
    Type actual = valueAndType.first ? valueAndType.first.getType() : Type();
    if (actual != valueAndType.second)
      return emitInferError<AttentionBackwardOp>(
          location, name, " has type ", actual, " but the forward produces ",
          valueAndType.second);
  }
  inferredReturnTypes.append({adaptor.getQuery().getType(),
                              adaptor.getKey().getType(),
                              adaptor.getValue().getType()});
  return success();
}

//===----------------------------------------------------------------------===//
// CrossEntropyOp and CrossEntropyBackwardOp
//===----------------------------------------------------------------------===//

/// The type of the loss for `logits` and `labels`, or failure.
template <typename OpTy>
static FailureOr<RankedTensorType>
inferLossType(std::optional<Location> location, Value logits, Value labels,
              LossReduction reduction) {
  RankedTensorType logitsType = getTensorType(logits);
  RankedTensorType labelsType = getTensorType(labels);
  if (!logitsType || !labelsType)
    return emitInferError<OpTy>(location, "expects tensor logits and labels");
  if (logitsType.getRank() < 1)
    return emitInferError<OpTy>(location,
                                "logits need a class dimension (rank >= 1)");
  ArrayRef<int64_t> positions = logitsType.getShape().drop_back();
  if (labelsType.getShape() != positions)
    return emitInferError<OpTy>(
        location, "labels have shape ", formatShape(labelsType.getShape()),
        " but logits ", formatShape(logitsType.getShape()),
        " (classes last) need ", formatShape(positions));
  // No class a label could name (positions with no classes).
  if (logitsType.getShape().back() == 0 && !llvm::is_contained(positions, 0))
    return emitInferError<OpTy>(location, "logits ", logitsType,
                                " have no classes: every label would be out "
                                "of range");
  ArrayRef<int64_t> lossShape =
      reduction == LossReduction::None ? positions : ArrayRef<int64_t>();
  return RankedTensorType::get(lossShape, logitsType.getElementType());
}

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<RankedTensorType> lossType = inferLossType<CrossEntropyOp>(
      location, adaptor.getLogits(), adaptor.getLabels(),
      adaptor.getReduction());
  if (failed(lossType))
    return failure();
  inferredReturnTypes.push_back(*lossType);
  return success();
}

LogicalResult CrossEntropyBackwardOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  FailureOr<RankedTensorType> lossType = inferLossType<CrossEntropyBackwardOp>(
      location, adaptor.getLogits(), adaptor.getLabels(),
      adaptor.getReduction());
  if (failed(lossType))
    return failure();
  if (adaptor.getGradLoss().getType() != *lossType)
    return emitInferError<CrossEntropyBackwardOp>(
        location, "grad_loss has type ", adaptor.getGradLoss().getType(),
        " but the loss has type ", *lossType);
  inferredReturnTypes.push_back(adaptor.getLogits().getType());
  return success();
}

//===----------------------------------------------------------------------===//
// AddOp canonicalization
//===----------------------------------------------------------------------===//

namespace {

/// Whether `value` is a splat constant zero.
bool isZeroSplat(Value value) {
  auto constant = value.getDefiningOp<ConstantOp>();
  auto elements =
      constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
  if (!elements || !elements.isSplat())
    return false;
  if (isa<FloatType>(elements.getElementType()))
    return elements.getSplatValue<APFloat>().isZero();
  return elements.getSplatValue<APInt>().isZero();
}

/// x + scatter_add(zeros, i, u) -> scatter_add(x, i, u): the slices are
/// accumulated into x instead of into a zero tensor that is then added.
/// A tied embedding's gradient is this sum (the lm-head GEMM's weight
/// gradient plus the lookup's scatter); accumulated into the GEMM's result,
/// it needs no zero fill, no add kernel and no second table-sized buffer,
/// and the GEMM may run as soon as its operands are ready, which frees the
/// logits' gradient early in the backward. The sum is the same up to the
/// order of the f32 additions.
struct AccumulateIntoScatterAdd : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (auto [scattered, other] :
         {std::pair{add.getLhs(), add.getRhs()},
          std::pair{add.getRhs(), add.getLhs()}}) {
      auto scatter = scattered.getDefiningOp<ScatterAddOp>();
      if (!scatter || !scatter->hasOneUse() || !isZeroSplat(scatter.getDest()))
        continue;
      rewriter.replaceOpWithNewOp<ScatterAddOp>(
          add, add.getType(), other, scatter.getIndices(),
          scatter.getUpdates(), scatter.getDimAttr());
      rewriter.eraseOp(scatter);
      return success();
    }
    return failure();
  }
};

} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<AccumulateIntoScatterAdd>(context);
}
