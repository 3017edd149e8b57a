//===- ShapeOps.cpp - Broadcast, reshape, transpose, slice, gather --------===//

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "OpVerification.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::detail;

//===----------------------------------------------------------------------===//
// BroadcastInDimOp
//===----------------------------------------------------------------------===//

LogicalResult BroadcastInDimOp::verify() {
  RankedTensorType operandType = getOperand().getType();
  RankedTensorType resultType = getType();
  ArrayRef<int64_t> dims = getDims();
  if (static_cast<int64_t>(dims.size()) != operandType.getRank())
    return emitOpError() << "dims " << formatList(dims) << " has "
                         << dims.size() << " entries but the operand has rank "
                         << operandType.getRank();
  std::string error =
      checkIncreasingDims(dims, resultType.getRank(), /*allowEmpty=*/true);
  if (!error.empty())
    return emitOpError() << "dims: " << error;
  for (auto [operandDim, resultDim] : llvm::enumerate(dims)) {
    int64_t from = operandType.getDimSize(operandDim);
    int64_t to = resultType.getDimSize(resultDim);
    if (from != 1 && from != to)
      return emitOpError() << "operand dimension " << operandDim << " (size "
                           << from << ") cannot broadcast to result dimension "
                           << resultDim << " (size " << to << ")";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  int64_t from = getOperand().getType().getNumElements();
  int64_t to = getType().getNumElements();
  if (from != to)
    return emitOpError() << "cannot reshape "
                         << formatShape(getOperand().getType().getShape())
                         << " (" << from << " elements) to "
                         << formatShape(getType().getShape()) << " (" << to
                         << " elements)";
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getOperand().getType() == getType())
    return getOperand();
  // A reshape of a reshape is one reshape of the first operand (both are
  // row-major views): chains of them otherwise nest one level of index
  // arithmetic per reshape in the kernel that reads them.
  if (auto inner = getOperand().getDefiningOp<ReshapeOp>()) {
    getOperandMutable().assign(inner.getOperand());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

LogicalResult TransposeOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType operandType = getTensorType(adaptor.getOperand());
  if (!operandType)
    return emitInferError<TransposeOp>(location, "expects a tensor operand");
  ArrayRef<int64_t> permutation = adaptor.getPermutation();
  int64_t rank = operandType.getRank();
  if (static_cast<int64_t>(permutation.size()) != rank)
    return emitInferError<TransposeOp>(
        location, "permutation ", formatList(permutation), " has ",
        permutation.size(), " entries but the operand has rank ", rank);
  llvm::SmallBitVector seen(rank);
  SmallVector<int64_t> shape;
  for (int64_t dim : permutation) {
    if (dim < 0 || dim >= rank || seen.test(dim))
      return emitInferError<TransposeOp>(
          location, "permutation ", formatList(permutation),
          " is not a permutation of [0, ", rank, ")");
    seen.set(dim);
    shape.push_back(operandType.getDimSize(dim));
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, operandType.getElementType()));
  return success();
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  if (isIdentityPermutation(getPermutation()))
    return getOperand();
  // A transpose of a transpose is one transpose of the first operand: a
  // value stored in one layout and viewed back in another (a saved
  // attention output, read by the backward in the layout the forward's
  // projection read it) then costs no copy.
  if (auto inner = getOperand().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed = applyPermutation(inner.getPermutation(), getPermutation());
    getOperandMutable().assign(inner.getOperand());
    setPermutation(composed);
    if (isIdentityPermutation(composed))
      return getOperand();
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// SliceOp
//===----------------------------------------------------------------------===//

LogicalResult SliceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType operandType = getTensorType(adaptor.getOperand());
  if (!operandType)
    return emitInferError<SliceOp>(location, "expects a tensor operand");
  ArrayRef<int64_t> start = adaptor.getStart();
  ArrayRef<int64_t> limit = adaptor.getLimit();
  ArrayRef<int64_t> stride = adaptor.getStride();
  int64_t rank = operandType.getRank();
  if (static_cast<int64_t>(start.size()) != rank ||
      static_cast<int64_t>(limit.size()) != rank ||
      static_cast<int64_t>(stride.size()) != rank)
    return emitInferError<SliceOp>(
        location, "start, limit and stride need ", rank,
        " entries each (the operand's rank), got ", start.size(), ", ",
        limit.size(), " and ", stride.size());
  SmallVector<int64_t> shape;
  for (int64_t dim = 0; dim < rank; ++dim) {
    int64_t size = operandType.getDimSize(dim);
    if (start[dim] < 0 || start[dim] > limit[dim] || limit[dim] > size)
      return emitInferError<SliceOp>(
          location, "dimension ", dim, ": need 0 <= start <= limit <= ", size,
          ", got start = ", start[dim], ", limit = ", limit[dim]);
    if (stride[dim] < 1)
      return emitInferError<SliceOp>(location, "dimension ", dim,
                                     ": stride must be at least 1, got ",
                                     stride[dim]);
    shape.push_back((limit[dim] - start[dim] + stride[dim] - 1) / stride[dim]);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, operandType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return emitInferError<ConcatOp>(location, "needs at least one input");
  RankedTensorType firstType = getTensorType(inputs.front());
  if (!firstType)
    return emitInferError<ConcatOp>(location, "expects tensor inputs");
  int64_t dim = adaptor.getDim();
  int64_t rank = firstType.getRank();
  if (dim >= rank)
    return emitInferError<ConcatOp>(location, "dim ", dim,
                                    " is out of range for rank ", rank);
  SmallVector<int64_t> shape(firstType.getShape());
  shape[dim] = 0;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    RankedTensorType type = getTensorType(input);
    if (!type)
      return emitInferError<ConcatOp>(location, "expects tensor inputs");
    if (type.getElementType() != firstType.getElementType())
      return emitInferError<ConcatOp>(location, "input #", index, " has element type ",
                                      type.getElementType(), " but input #0 has ",
                                      firstType.getElementType());
    if (type.getRank() != rank)
      return emitInferError<ConcatOp>(location, "input #", index, " has rank ",
                                      type.getRank(), " but input #0 has rank ",
                                      rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (d != dim && type.getDimSize(d) != firstType.getDimSize(d))
        return emitInferError<ConcatOp>(
            location, "input #", index, " (", formatShape(type.getShape()),
            ") differs from input #0 (", formatShape(firstType.getShape()),
            ") in dimension ", d, ", which is not the concatenated one");
    }
    shape[dim] += type.getDimSize(dim);
  }
  inferredReturnTypes.push_back(
      RankedTensorType::get(shape, firstType.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// GatherOp and ScatterAddOp: numpy.take along `dim` and its adjoint.
//===----------------------------------------------------------------------===//

/// operand.shape[:dim] + indices.shape + operand.shape[dim+1:].
static SmallVector<int64_t> takeShape(RankedTensorType operandType,
                                      RankedTensorType indicesType,
                                      int64_t dim) {
  ArrayRef<int64_t> shape = operandType.getShape();
  SmallVector<int64_t> result(shape.begin(), shape.begin() + dim);
  llvm::append_range(result, indicesType.getShape());
  result.append(shape.begin() + dim + 1, shape.end());
  return result;
}

LogicalResult GatherOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, Adaptor adaptor,
    SmallVectorImpl<Type> &inferredReturnTypes) {
  RankedTensorType operandType = getTensorType(adaptor.getOperand());
  RankedTensorType indicesType = getTensorType(adaptor.getIndices());
  if (!operandType || !indicesType)
    return emitInferError<GatherOp>(location, "expects tensor operands");
  int64_t dim = adaptor.getDim();
  if (dim >= operandType.getRank())
    return emitInferError<GatherOp>(location, "dim ", dim,
                                    " is out of range for operand rank ",
                                    operandType.getRank());
  if (operandType.getDimSize(dim) == 0 && indicesType.getNumElements() != 0)
    return emitInferError<GatherOp>(
        location, "dim ", dim, " of ", operandType,
        " is empty: every one of the ", indicesType.getNumElements(),
        " indices would be out of range");
  inferredReturnTypes.push_back(RankedTensorType::get(
      takeShape(operandType, indicesType, dim), operandType.getElementType()));
  return success();
}

LogicalResult ScatterAddOp::verify() {
  RankedTensorType destType = getDest().getType();
  RankedTensorType updatesType = getUpdates().getType();
  int64_t dim = getDim();
  if (dim >= destType.getRank())
    return emitOpError() << "dim " << dim << " is out of range for dest rank "
                         << destType.getRank();
  if (destType.getDimSize(dim) == 0 && getIndices().getType().getNumElements() != 0)
    return emitOpError() << "dim " << dim << " of " << destType
                         << " is empty: every one of the "
                         << getIndices().getType().getNumElements()
                         << " indices would be out of range";
  if (updatesType.getElementType() != destType.getElementType())
    return emitOpError() << "updates have element type "
                         << updatesType.getElementType() << " but dest has "
                         << destType.getElementType();
  SmallVector<int64_t> expected =
      takeShape(destType, getIndices().getType(), dim);
  if (updatesType.getShape() != ArrayRef<int64_t>(expected))
    return emitOpError() << "updates have shape "
                         << formatShape(updatesType.getShape())
                         << " but dest and indices need "
                         << formatShape(expected);
  return success();
}

bool ScatterAddOp::accumulatesInPlace() {
  Operation *writer = getDest().getDefiningOp();
  return writer && !isa<ConstantOp>(writer) &&
         writer->getBlock() == getOperation()->getBlock() &&
         getDest().hasOneUse();
}
