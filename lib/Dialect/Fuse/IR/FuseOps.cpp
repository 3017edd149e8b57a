//===- FuseOps.cpp - Elementwise, generator and fusion ops ----------------===//
//
// Holds the generated op definitions and the hand-written parts of the
// elementwise ops, constants and generators, and fuse.fusion. Shape ops are
// in ShapeOps.cpp; matmul, reductions and composites in ComputeOps.cpp.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "OpVerification.h"

#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::detail;

#define GET_OP_CLASSES
#include "fuse/Dialect/Fuse/IR/FuseOps.cpp.inc"

//===----------------------------------------------------------------------===//
// CompareOp
//===----------------------------------------------------------------------===//

LogicalResult CompareOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType lhsType = getTensorType(adaptor.getLhs());
  if (!lhsType)
    return emitInferError<CompareOp>(location, "expects tensor operands");
  inferredReturnTypes.push_back(
      RankedTensorType::get(lhsType.getShape(), IntegerType::get(context, 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// CastOp
//===----------------------------------------------------------------------===//

/// Whether `cast` converts a float to a wider float (bf16 -> f32): exact,
/// so narrowing the result back gives the source again.
static bool widensFloat(CastOp cast) {
  auto from = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getOperand()));
  auto to = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getType()));
  return from && to && to.getWidth() > from.getWidth();
}

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  // cast(cast(x)) back to x's type through a wider float is x.
  auto widened = getOperand().getDefiningOp<CastOp>();
  if (widened && widened.getOperand().getType() == getType() &&
      widensFloat(widened))
    return widened.getOperand();
  return {};
}

namespace {

/// Whether `cast` converts a float to a narrower float (f32 -> bf16).
bool narrowsFloat(CastOp cast) {
  auto from = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getOperand()));
  auto to = dyn_cast<FloatType>(getElementTypeOrSelf(cast.getType()));
  return from && to && to.getWidth() < from.getWidth();
}

/// Whether every user of `source` is a slice whose one user is a cast to
/// `elementType`, or such a cast itself (a slice rewritten before): then all
/// of `source` is narrowed anyway, and narrowing it once, before the slices,
/// reads it once.
bool everySliceNarrowed(Value source, Type elementType) {
  for (Operation *user : source.getUsers()) {
    if (auto narrowed = dyn_cast<CastOp>(user)) {
      if (getElementTypeOrSelf(narrowed.getType()) != elementType)
        return false;
      continue;
    }
    auto slice = dyn_cast<SliceOp>(user);
    if (!slice || !slice->hasOneUse())
      return false;
    auto cast = dyn_cast<CastOp>(*slice->getUsers().begin());
    if (!cast || getElementTypeOrSelf(cast.getType()) != elementType)
      return false;
  }
  return true;
}

/// cast(move(x)) -> move(cast(x)) for a narrowing float cast and data
/// movement (reshape, transpose, broadcast_in_dim, slice) that only the
/// cast reads. The values are the same; what changes is where the narrow
/// copy is made: next to x's producer, so a fusion there writes 16-bit
/// elements instead of f32 ones and the movement moves half the bytes. A
/// GEMM's f32 query-key-value projection that attention reads in bf16
/// through slices and transposes then leaves its GEMM in bf16. Through a
/// slice only when every user of x is a narrowed slice (CSE then merges
/// their casts of x), so that no element is narrowed that nobody reads.
struct NarrowBeforeDataMovement : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp narrowing,
                                PatternRewriter &rewriter) const override {
    Operation *move = narrowing.getOperand().getDefiningOp();
    if (!move || !narrowsFloat(narrowing) || !move->hasOneUse() ||
        !isa<ReshapeOp, TransposeOp, BroadcastInDimOp, SliceOp>(move))
      return failure();
    Value source = move->getOperand(0);
    Type narrow = getElementTypeOrSelf(narrowing.getType());
    if (isa<SliceOp>(move) && !everySliceNarrowed(source, narrow))
      return failure();
    auto sourceType = cast<RankedTensorType>(source.getType());
    rewriter.setInsertionPoint(move);
    Value narrowed = CastOp::create(rewriter, narrowing.getLoc(),
                                    sourceType.clone(narrow), source);
    Operation *moved = rewriter.clone(*move);
    moved->setOperand(0, narrowed);
    moved->getResult(0).setType(narrowing.getType());
    rewriter.replaceOp(narrowing, moved->getResults());
    rewriter.eraseOp(move);
    return success();
  }
};

/// move(cast(x)) -> cast(move(x)) for a widening float cast that only the
/// data movement (reshape, transpose, concat: every part widened from one
/// type) reads: the mirror of NarrowBeforeDataMovement. The values are the
/// same; the movement moves half the bytes, and the widening ends up next
/// to the reader, where fusion computes it on the fly. The flash-attention
/// backward's bf16 dq, dk, dv widened to f32 and then transposed into the
/// projection's layout can then be written into that layout by the
/// attention kernels themselves, in bf16, leaving the widening to the
/// bias-gradient reduction that reads them.
template <typename MoveOp>
struct WidenAfterDataMovement : OpRewritePattern<MoveOp> {
  using OpRewritePattern<MoveOp>::OpRewritePattern;

  LogicalResult matchAndRewrite(MoveOp move,
                                PatternRewriter &rewriter) const override {
    SmallVector<Value> sources;
    Type narrow;
    for (Value operand : move->getOperands()) {
      auto widening = operand.getDefiningOp<CastOp>();
      if (!widening || !widensFloat(widening) || !operand.hasOneUse())
        return failure();
      Type from = getElementTypeOrSelf(widening.getOperand());
      if (narrow && from != narrow)
        return failure();
      narrow = from;
      sources.push_back(widening.getOperand());
    }
    auto wideType = cast<RankedTensorType>(move.getType());
    Operation *moved = rewriter.clone(*move);
    moved->setOperands(sources);
    moved->getResult(0).setType(wideType.clone(narrow));
    rewriter.replaceOpWithNewOp<CastOp>(move, wideType, moved->getResult(0));
    return success();
  }
};

} // namespace

void CastOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<NarrowBeforeDataMovement, WidenAfterDataMovement<ReshapeOp>,
               WidenAfterDataMovement<TransposeOp>,
               WidenAfterDataMovement<ConcatOp>>(context);
}

//===----------------------------------------------------------------------===//
// ConstantOp
//===----------------------------------------------------------------------===//

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

void ConstantOp::getAsmResultNames(OpAsmSetValueNameFn setNameFn) {
  setNameFn(getResult(), "cst");
}

//===----------------------------------------------------------------------===//
// IotaOp
//===----------------------------------------------------------------------===//

LogicalResult IotaOp::verify() {
  int64_t rank = getType().getRank();
  if (static_cast<int64_t>(getDim()) >= rank)
    return emitOpError() << "dim " << getDim()
                         << " is out of range for result rank " << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// RandomOp
//===----------------------------------------------------------------------===//

LogicalResult RandomOp::verify() {
  Type elementType = getType().getElementType();
  std::optional<double> p;
  if (getPAttr())
    p = getPAttr().getValueAsDouble();

  if (getDistribution() == RandomDistribution::Bernoulli) {
    if (!p)
      return emitOpError() << "bernoulli needs a probability 'p'";
    if (!(*p >= 0.0 && *p <= 1.0))
      return emitOpError() << "probability p = " << *p
                           << " is outside [0, 1]";
    if (!llvm::isa<FloatType>(elementType) && !elementType.isInteger(1))
      return emitOpError() << "bernoulli produces a float or i1 tensor, not "
                           << elementType;
    return success();
  }
  if (p)
    return emitOpError() << "'p' is only meaningful for bernoulli, not "
                         << stringifyRandomDistribution(getDistribution());
  if (!llvm::isa<FloatType>(elementType))
    return emitOpError() << stringifyRandomDistribution(getDistribution())
                         << " produces a float tensor, not " << elementType;
  return success();
}

//===----------------------------------------------------------------------===//
// FusionOp
//===----------------------------------------------------------------------===//

LogicalResult FusionOp::verifyRegions() {
  // One fusion is one kernel: a fusion inside another has no meaning.
  if ((*this)->getParentOfType<FusionOp>())
    return emitOpError() << "cannot be nested in another 'fuse.fusion'";
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "body has " << body.getNumArguments()
                         << " arguments but the fusion has "
                         << getInputs().size() << " inputs";
  for (auto [index, input, argument] :
       llvm::enumerate(getInputs(), body.getArguments())) {
    if (input.getType() != argument.getType())
      return emitOpError() << "body argument #" << index << " has type "
                           << argument.getType() << " but input #" << index
                           << " has type " << input.getType();
  }

  auto yield = llvm::dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with 'fuse.yield'";
  if (yield.getValues().size() != getNumResults())
    return yield.emitOpError()
           << "yields " << yield.getValues().size()
           << " values but the enclosing fusion has " << getNumResults()
           << " results";
  for (auto [index, value, result] :
       llvm::enumerate(yield.getValues(), getResults())) {
    if (value.getType() != result.getType())
      return yield.emitOpError()
             << "value #" << index << " has type " << value.getType()
             << " but fusion result #" << index << " has type "
             << result.getType();
  }
  return success();
}
