//===- NarrowResults.cpp - results in the 16-bit type, as autocast ---------===//
//
// Under torch.autocast a model's output comes back in the 16-bit type its
// last matmul computed in (the logits of a language model: 0.8 GB in bf16
// for GPT-2 at B8 T1024, 1.6 GB in f32). The precision policy casts every
// 16-bit result back to f32 for its users, the function's return included;
// with `narrow-results` a returned value that is such a cast, possibly
// under reshapes, is returned in the 16-bit type instead, and the function
// type changes with it.
//
//===----------------------------------------------------------------------===//

#include "AutoMixedPrecision.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

/// The 16-bit value `value` widens, through reshapes: (the low value, the
/// reshapes from it to `value`, innermost first); no value when `value` is
/// not a widening cast from `lowType` under reshapes.
std::pair<Value, SmallVector<ReshapeOp>> widenedFrom(Value value, FloatType lowType) {
  SmallVector<ReshapeOp> reshapes;
  while (auto reshape = value.getDefiningOp<ReshapeOp>()) {
    reshapes.push_back(reshape);
    value = reshape.getOperand();
  }
  auto cast = value.getDefiningOp<CastOp>();
  if (!cast || getElementTypeOrSelf(cast.getOperand().getType()) != lowType ||
      !getElementTypeOrSelf(cast.getType()).isF32())
    return {Value(), {}};
  std::reverse(reshapes.begin(), reshapes.end());
  return {cast.getOperand(), reshapes};
}

} // namespace

void mlir::fuse::amp::narrowResults(func::FuncOp func, FloatType lowType) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  OpBuilder builder(ret);
  SmallVector<Type> resultTypes(func.getResultTypes());
  for (OpOperand &operand : ret->getOpOperands()) {
    auto [low, reshapes] = widenedFrom(operand.get(), lowType);
    if (!low)
      continue;
    Value narrowed = low;
    for (ReshapeOp reshape : reshapes)
      narrowed = ReshapeOp::create(builder, reshape.getLoc(),
                                   cast<ShapedType>(reshape.getType()).clone(lowType),
                                   narrowed);
    Operation *widened = operand.get().getDefiningOp();
    operand.set(narrowed);
    resultTypes[operand.getOperandNumber()] = narrowed.getType();
    // The cast and reshapes go if nothing else reads them.
    while (widened && widened->use_empty()) {
      Value input = widened->getOperand(0);
      widened->erase();
      widened = input.getDefiningOp();
      if (widened && !isa<ReshapeOp, CastOp>(widened))
        break;
    }
  }
  func.setFunctionType(
      FunctionType::get(func.getContext(), func.getArgumentTypes(), resultTypes));
}
