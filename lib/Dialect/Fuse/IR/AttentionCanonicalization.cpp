//===- AttentionCanonicalization.cpp - Attention operands read unbroadcast ===//
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
// Keys and values likewise: grouped-query attention written out, as
// HuggingFace's repeat_kv does and as AOTAutograd traces SDPA when it
// takes the memory-efficient kernel, repeats each key/value head G times
// (reshape, broadcast_in_dim, reshape) before attention. The attention op
// takes Hkv heads itself (query head h reads key/value head h / G), so it
// reads the repeat's source, and the repeated keys and values need not be
// written at all. The backward then returns the key and value gradients
// per source head, which are the sums over each group that the graph
// computed from the repeated heads' gradients (reshape to [B, Hkv, G, T, D]
// and a sum over the group), where it did: only then is it rewritten.
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

/// The heads a repeat_kv-style value repeats: `repeated` ([B, Hkv * G, T,
/// D]) is reshape(broadcast_in_dim(s)), the broadcast's result [B, Hkv, G,
/// T, D] and `s` either [B, Hkv, 1, T, D] (dims [0, 1, 2, 3, 4]) or [B, Hkv,
/// T, D] (dims [0, 1, 3, 4]), so that head h of `repeated` is head h / G of
/// `s`.
struct RepeatedHeads {
  Value source;            // s
  int64_t groups;          // G
  RankedTensorType compact; // [B, Hkv, T, D]
};

std::optional<RepeatedHeads> repeatedHeads(Value repeated) {
  auto reshape = repeated.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return std::nullopt;
  auto broadcast = reshape.getOperand().getDefiningOp<BroadcastInDimOp>();
  if (!broadcast)
    return std::nullopt;
  auto type = cast<RankedTensorType>(repeated.getType());
  auto wide = cast<RankedTensorType>(broadcast.getType());
  Value source = broadcast.getOperand();
  auto sourceType = cast<RankedTensorType>(source.getType());
  if (type.getRank() != 4 || wide.getRank() != 5)
    return std::nullopt;
  ArrayRef<int64_t> full = wide.getShape();
  if (full[0] != type.getDimSize(0) || full[1] * full[2] != type.getDimSize(1) ||
      full[3] != type.getDimSize(2) || full[4] != type.getDimSize(3))
    return std::nullopt;
  SmallVector<int64_t> compactShape{full[0], full[1], full[3], full[4]};
  ArrayRef<int64_t> dims = broadcast.getDims();
  SmallVector<int64_t> unitShape{full[0], full[1], 1, full[3], full[4]};
  bool unitGroup = sourceType.getRank() == 5 &&
                   llvm::equal(dims, ArrayRef<int64_t>{0, 1, 2, 3, 4}) &&
                   sourceType.getShape() == ArrayRef<int64_t>(unitShape);
  bool noGroup = sourceType.getRank() == 4 &&
                 llvm::equal(dims, ArrayRef<int64_t>{0, 1, 3, 4}) &&
                 sourceType.getShape() == ArrayRef<int64_t>(compactShape);
  if (!unitGroup && !noGroup)
    return std::nullopt;
  return RepeatedHeads{source, full[2],
                       RankedTensorType::get(compactShape, type.getElementType())};
}

Value compactHeads(PatternRewriter &rewriter, Location loc, const RepeatedHeads &heads) {
  if (heads.source.getType() == heads.compact)
    return heads.source;
  return ReshapeOp::create(rewriter, loc, heads.compact, heads.source);
}

/// Both repeated by the same G (the op takes one head count for both).
std::optional<std::pair<RepeatedHeads, RepeatedHeads>> repeatedKeyValue(Value key, Value value) {
  std::optional<RepeatedHeads> k = repeatedHeads(key), v = repeatedHeads(value);
  if (!k || !v || k->groups != v->groups || k->groups < 2)
    return std::nullopt;
  return std::make_pair(*k, *v);
}

/// attention(q, repeat(k), repeat(v)) -> attention(q, k, v).
struct AttentionReadsRepeatedHeadsOnce : OpRewritePattern<AttentionOp> {
  using OpRewritePattern<AttentionOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionOp op, PatternRewriter &rewriter) const override {
    auto repeated = repeatedKeyValue(op.getKey(), op.getValue());
    if (!repeated)
      return failure();
    rewriter.setInsertionPoint(op);
    Value key = compactHeads(rewriter, op.getLoc(), repeated->first);
    Value value = compactHeads(rewriter, op.getLoc(), repeated->second);
    rewriter.modifyOpInPlace(op, [&] {
      op.getKeyMutable().assign(key);
      op.getValueMutable().assign(value);
    });
    return success();
  }
};

/// The chain that sums a repeated operand's gradient over each group:
/// [cast ->] reshape to [B, Hkv, G, T, D] -> reduce sum over dims [2], each
/// the only reader of the one before. The ops in order, or none.
std::optional<SmallVector<Operation *, 3>> groupSum(Value grad, const RepeatedHeads &heads) {
  SmallVector<Operation *, 3> chain;
  Value current = grad;
  auto onlyUser = [](Value v) -> Operation * {
    return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
  };
  Operation *user = onlyUser(current);
  if (auto castOp = dyn_cast_or_null<CastOp>(user)) {
    chain.push_back(castOp);
    current = castOp.getResult();
    user = onlyUser(current);
  }
  auto reshape = dyn_cast_or_null<ReshapeOp>(user);
  ArrayRef<int64_t> compact = heads.compact.getShape();
  SmallVector<int64_t> grouped{compact[0], compact[1], heads.groups, compact[2], compact[3]};
  if (!reshape || reshape.getType().getShape() != ArrayRef<int64_t>(grouped))
    return std::nullopt;
  chain.push_back(reshape);
  auto reduce = dyn_cast_or_null<ReduceOp>(onlyUser(reshape.getResult()));
  if (!reduce || reduce.getKind() != ReduceKind::Sum ||
      !llvm::equal(reduce.getDims(), ArrayRef<int64_t>{2}))
    return std::nullopt;
  chain.push_back(reduce);
  return chain;
}

/// attention_backward(do, q, repeat(k), repeat(v), o, lse), whose key and
/// value gradients are only summed over each group, -> the backward on k
/// and v, whose gradients are those sums.
struct AttentionBackwardReadsRepeatedHeadsOnce : OpRewritePattern<AttentionBackwardOp> {
  using OpRewritePattern<AttentionBackwardOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(AttentionBackwardOp op, PatternRewriter &rewriter) const override {
    auto repeated = repeatedKeyValue(op.getKey(), op.getValue());
    if (!repeated)
      return failure();
    std::array<std::pair<Value, const RepeatedHeads *>, 2> grads{
        std::make_pair(Value(op.getGradKey()), &repeated->first),
        std::make_pair(Value(op.getGradValue()), &repeated->second)};
    std::array<SmallVector<Operation *, 3>, 2> sums;
    for (auto [i, grad] : llvm::enumerate(grads)) {
      if (grad.first.use_empty())
        continue;
      auto chain = groupSum(grad.first, *grad.second);
      if (!chain)
        return failure();
      sums[i] = *chain;
    }
    rewriter.setInsertionPoint(op);
    Value key = compactHeads(rewriter, op.getLoc(), repeated->first);
    Value value = compactHeads(rewriter, op.getLoc(), repeated->second);
    auto compactOp = cast<AttentionBackwardOp>(rewriter.clone(*op.getOperation()));
    compactOp.getKeyMutable().assign(key);
    compactOp.getValueMutable().assign(value);
    compactOp.getGradKey().setType(cast<RankedTensorType>(key.getType()));
    compactOp.getGradValue().setType(cast<RankedTensorType>(value.getType()));
    rewriter.replaceAllUsesWith(op.getGradQuery(), compactOp.getGradQuery());
    std::array<Value, 2> compactGrads{compactOp.getGradKey(), compactOp.getGradValue()};
    for (auto [chain, grad] : llvm::zip(sums, compactGrads)) {
      if (chain.empty())
        continue;
      auto sum = cast<ReduceOp>(chain.back());
      auto sumType = cast<RankedTensorType>(sum.getType());
      Value replacement = grad;
      auto gradType = cast<RankedTensorType>(grad.getType());
      if (gradType.getElementType() != sumType.getElementType())
        replacement = CastOp::create(
            rewriter, sum.getLoc(),
            RankedTensorType::get(gradType.getShape(), sumType.getElementType()), replacement);
      if (replacement.getType() != sumType)
        replacement = ReshapeOp::create(rewriter, sum.getLoc(), sumType, replacement);
      rewriter.replaceAllUsesWith(sum.getResult(), replacement);
      for (Operation *dead : llvm::reverse(chain))
        rewriter.eraseOp(dead);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void AttentionOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<MaskThroughBroadcast<AttentionOp>, AttentionReadsRepeatedHeadsOnce>(context);
}

void AttentionBackwardOp::getCanonicalizationPatterns(
    RewritePatternSet &patterns, MLIRContext *context) {
  patterns.add<MaskThroughBroadcast<AttentionBackwardOp>, AttentionBackwardReadsRepeatedHeadsOnce>(
      context);
}
