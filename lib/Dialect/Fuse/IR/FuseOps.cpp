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

OpFoldResult CastOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  return {};
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
