//===- FlashAttention.cpp - What the flash-attention kernels take ---------===//

#include "fuse/Analysis/FlashAttention.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

std::string typeName(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

/// The views a kernel can write its results through.
bool writesThrough(Operation *op) {
  return isa<ReshapeOp, TransposeOp, ConcatOp>(op);
}

/// What a strided operand or result is called in diagnostics.
std::string roleName(Operation *attention, unsigned position, bool result) {
  static const char *const forward[] = {"query", "key", "value"};
  static const char *const backward[] = {"output gradient", "query", "key",
                                         "value", "output"};
  static const char *const gradients[] = {"query gradient", "key gradient",
                                          "value gradient"};
  if (result)
    return isa<AttentionOp>(attention) ? "output" : gradients[position];
  return isa<AttentionOp>(attention) ? forward[position] : backward[position];
}

LogicalResult notAddressable(Operation *attention, const std::string &role) {
  return attention->emitError()
         << "the attention's " << role
         << " is not addressable by the flash kernels' strides (head dim "
            "contiguous, rows on 16 bytes)";
}

/// The fusion input `operand` reads through views, and its layout there.
FailureOr<FlashAccess> traceOperand(Operation *attention, unsigned position,
                                    Value operand) {
  SmallVector<Operation *> views;
  Value source = operand;
  while (Operation *view = source.getDefiningOp()) {
    views.push_back(view);
    source = view->getOperand(0);
  }
  std::string role = roleName(attention, position, false);
  std::optional<StridedLayout> layout = rowMajorLayout(shapeOf(source));
  for (Operation *view : llvm::reverse(views)) {
    if (flashReadsThrough(view))
      layout = layoutOfViewResult(view, *layout);
    if (!flashReadsThrough(view) || !layout)
      return view->emitError()
             << "the attention's " << role
             << " is read through this op, which element strides cannot "
                "express; an attention fusion reads its operands through "
                "reshapes, transposes and slices only";
  }
  if (!flashAddressable(shapeOf(operand), *layout))
    return notAddressable(attention, role);
  return FlashAccess{cast<BlockArgument>(source).getArgNumber(), *layout};
}

/// A value inside an attention fusion on its way to a fusion result, and
/// the view that takes it there (null for the yield).
struct WriteStep {
  Operation *view;
  unsigned operand;
};

/// The fusion result `result` reaches through views (each the only reader
/// of the value before it), and its layout there.
FailureOr<FlashAccess> traceResult(Operation *attention, unsigned position,
                                   Value result,
                                   SmallVectorImpl<WriteStep> &steps) {
  std::string role = roleName(attention, position, true);
  Value current = result;
  if (current.use_empty())
    return FlashAccess{std::nullopt, rowMajorLayout(shapeOf(result))};
  while (true) {
    if (!current.hasOneUse())
      return attention->emitError()
             << "the attention's " << role
             << " is stored once, so inside its fusion it (and each view "
                "of it) must have one reader";
    OpOperand &use = *current.use_begin();
    Operation *user = use.getOwner();
    if (isa<YieldOp>(user))
      break;
    if (!writesThrough(user))
      return user->emitError()
             << "the attention's " << role
             << " is written through this op; an attention fusion writes "
                "its results through reshapes, transposes and concats only";
    steps.push_back({user, use.getOperandNumber()});
    current = user->getResult(0);
  }
  std::optional<StridedLayout> layout = rowMajorLayout(shapeOf(current));
  for (const WriteStep &step : llvm::reverse(steps)) {
    layout = layoutOfViewOperand(step.view, step.operand, *layout);
    if (!layout)
      return step.view->emitError()
             << "the attention's " << role
             << " is written through this reshape, which element strides "
                "cannot express";
  }
  if (!flashAddressable(shapeOf(result), *layout))
    return notAddressable(attention, role);
  return FlashAccess{current.use_begin()->getOperandNumber(), *layout};
}

} // namespace

bool mlir::fuse::flashReadsThrough(Operation *view) {
  return isa<ReshapeOp, TransposeOp, SliceOp>(view);
}

std::optional<std::string> mlir::fuse::flashIneligibility(Operation *attention) {
  auto forward = dyn_cast<AttentionOp>(attention);
  auto backward = dyn_cast<AttentionBackwardOp>(attention);
  Value query = forward ? forward.getQuery() : backward.getQuery();
  Value value = forward ? forward.getValue() : backward.getValue();
  Value mask = forward ? forward.getMask() : backward.getMask();
  Type element = getElementTypeOrSelf(query);
  if (!element.isBF16() && !element.isF16())
    return "flash kernels take bf16 or f16, not " + typeName(element);
  int64_t headDim = shapeOf(query)[3];
  if (headDim != 64 && headDim != 128)
    return "flash kernels take head dim 64 or 128, not " +
           std::to_string(headDim);
  if (shapeOf(value)[3] != headDim)
    return std::string("flash kernels need the value's head dim equal to the "
                       "query's");
  if (mask && getElementTypeOrSelf(mask) != element)
    return "flash kernels take an additive mask of the query's type, not " +
           typeName(getElementTypeOrSelf(mask));
  return std::nullopt;
}

SmallVector<OpOperand *> mlir::fuse::flashStridedOperands(Operation *attention) {
  if (auto forward = dyn_cast<AttentionOp>(attention))
    return {&forward.getQueryMutable(), &forward.getKeyMutable(),
            &forward.getValueMutable()};
  auto backward = cast<AttentionBackwardOp>(attention);
  return {&backward.getGradOutputMutable(), &backward.getQueryMutable(),
          &backward.getKeyMutable(), &backward.getValueMutable(),
          &backward.getOutputMutable()};
}

SmallVector<Value> mlir::fuse::flashStridedResults(Operation *attention) {
  if (auto forward = dyn_cast<AttentionOp>(attention))
    return {forward.getOutput()};
  auto backward = cast<AttentionBackwardOp>(attention);
  return {backward.getGradQuery(), backward.getGradKey(),
          backward.getGradValue()};
}

bool mlir::fuse::flashAddressable(ArrayRef<int64_t> shape,
                                  const StridedLayout &layout) {
  if (shape.size() != 4 || layout.strides.size() != 4 ||
      layout.strides[3] != 1 || layout.offset % kFlashAlignElements != 0)
    return false;
  // A dimension of size 1 is never stepped along: its stride is unused.
  for (int dim = 0; dim < 3; ++dim)
    if (shape[dim] != 1 && layout.strides[dim] % kFlashAlignElements != 0)
      return false;
  return true;
}

FailureOr<FlashFusionLayout> mlir::fuse::analyzeFlashFusion(FusionOp fusion) {
  Block &body = fusion.getBody().front();
  FlashFusionLayout result;
  for (Operation &op : body.without_terminator()) {
    if (isa<AttentionOp, AttentionBackwardOp>(op)) {
      if (result.attention)
        return op.emitError() << "an attention fusion holds one attention op";
      result.attention = &op;
    } else if (flashReadsThrough(&op) || writesThrough(&op)) {
      result.hasViews = true;
    } else {
      return op.emitError()
             << "an attention fusion holds its attention op and views "
                "(reshape, transpose, slice, concat) only";
    }
  }
  Operation *attention = result.attention;
  if (!attention)
    return fusion.emitError() << "an attention fusion without an attention op";

  SmallVector<OpOperand *> strided = flashStridedOperands(attention);
  for (OpOperand &operand : attention->getOpOperands())
    if (!llvm::is_contained(strided, &operand) &&
        !isa<BlockArgument>(operand.get()))
      return attention->emitError()
             << "operand #" << operand.getOperandNumber()
             << " of an attention fusion's attention op must be a fusion "
                "input: only q, k, v, dout and out are read through views";
  for (auto [position, operand] : llvm::enumerate(strided)) {
    FailureOr<FlashAccess> access =
        traceOperand(attention, position, operand->get());
    if (failed(access))
      return failure();
    result.operands.push_back(*access);
  }

  // Every fusion result is the log-sum-exp or written by strided results
  // (several only through a concat), and every part of a concat by one.
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<unsigned> writers(yield.getNumOperands(), 0);
  llvm::DenseMap<Operation *, unsigned> concatParts;
  for (auto [position, value] :
       llvm::enumerate(flashStridedResults(attention))) {
    SmallVector<WriteStep> steps;
    FailureOr<FlashAccess> access =
        traceResult(attention, position, value, steps);
    if (failed(access))
      return failure();
    if (access->index)
      ++writers[*access->index];
    for (const WriteStep &step : steps)
      if (isa<ConcatOp>(step.view))
        ++concatParts[step.view];
    result.results.push_back(*access);
  }
  if (auto forward = dyn_cast<AttentionOp>(attention)) {
    Value lse = forward.getLogsumexp();
    if (!lse.use_empty()) {
      if (!lse.hasOneUse() || !isa<YieldOp>(lse.use_begin()->getOwner()))
        return attention->emitError()
               << "an attention fusion returns the log-sum-exp as it is";
      result.logsumexp = lse.use_begin()->getOperandNumber();
      ++writers[*result.logsumexp];
    }
  }
  for (auto [concat, parts] : concatParts)
    if (parts != concat->getNumOperands())
      return concat->emitError()
             << "an attention fusion writes a concat only when the "
                "attention's results are all of its parts";
  for (auto [index, count] : llvm::enumerate(writers))
    if (count == 0)
      return fusion.emitError()
             << "result #" << index << " of an attention fusion must be "
             << "one of the attention's results or a view of them";
  return result;
}
