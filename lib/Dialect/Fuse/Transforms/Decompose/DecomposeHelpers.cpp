//===- DecomposeHelpers.cpp - Building primitives for fuse-decompose ------===//

#include "Decompose.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/Sequence.h"

using namespace mlir;
using namespace mlir::fuse;

SmallVector<int64_t> decompose::dimRange(int64_t begin, int64_t end) {
  return llvm::to_vector(llvm::seq<int64_t>(begin, end));
}

RankedTensorType decompose::tensorType(Value value) {
  return llvm::cast<RankedTensorType>(value.getType());
}

Value decompose::castTo(ImplicitLocOpBuilder &b, Value value,
                        Type elementType) {
  RankedTensorType type = tensorType(value);
  if (type.getElementType() == elementType)
    return value;
  return CastOp::create(b, type.clone(elementType), value);
}

Value decompose::castToF32(ImplicitLocOpBuilder &b, Value value) {
  return castTo(b, value, b.getF32Type());
}

Value decompose::floatSplat(ImplicitLocOpBuilder &b, RankedTensorType type,
                            double value) {
  auto elementType = llvm::cast<FloatType>(type.getElementType());
  APFloat number(value);
  bool losesInfo = false;
  number.convert(elementType.getFloatSemantics(),
                 APFloat::rmNearestTiesToEven, &losesInfo);
  return ConstantOp::create(b, DenseElementsAttr::get(type, number));
}

Value decompose::intSplat(ImplicitLocOpBuilder &b, RankedTensorType type,
                          int64_t value) {
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  if (width == 1)
    return ConstantOp::create(b, DenseElementsAttr::get(type, value != 0));
  APInt number(width, value, /*isSigned=*/true, /*implicitTrunc=*/true);
  return ConstantOp::create(b, DenseElementsAttr::get(type, number));
}

Value decompose::splatLike(ImplicitLocOpBuilder &b, Value like, double value) {
  return floatSplat(b, tensorType(like), value);
}

Value decompose::reduce(ImplicitLocOpBuilder &b, ReduceKind kind, Value value,
                        ArrayRef<int64_t> dims, bool keepdim) {
  return ReduceOp::create(b, kind, value, dims, keepdim);
}

Value decompose::broadcast(ImplicitLocOpBuilder &b, Value value,
                           ArrayRef<int64_t> shape, ArrayRef<int64_t> dims) {
  RankedTensorType type = tensorType(value);
  if (type.getShape() == shape)
    return value;
  return BroadcastInDimOp::create(b, type.clone(shape), value, dims);
}

Value decompose::broadcastKept(ImplicitLocOpBuilder &b, Value value,
                               ArrayRef<int64_t> shape) {
  return broadcast(b, value, shape, dimRange(0, shape.size()));
}
