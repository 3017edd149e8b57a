//===- GraphVerification.cpp - Whole-graph type checks --------------------===//

#include "fuse/Dialect/Fuse/IR/GraphVerification.h"

#include "fuse/Support/CheckedMath.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;

std::string mlir::fuse::checkGraphType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor)
    return isa<TensorType>(type)
               ? "unranked tensors are not supported (Fuse graphs are "
                 "static-shaped)"
               : "not a tensor (Fuse graph values are ranked tensors)";
  if (!tensor.hasStaticShape())
    return "dynamic shapes are not supported (Fuse graphs are static-shaped: "
           "every buffer is planned before the graph runs)";
  Type element = tensor.getElementType();
  bool stored = element.isF32() || element.isF16() || element.isBF16() ||
                element.isSignlessInteger(64) ||
                element.isSignlessInteger(32) || element.isSignlessInteger(1);
  if (!stored)
    return "not an element type Fuse stores (f32, f16, bf16, i64, i32, i1)";
  if (!::fuse::checkedByteSize(
          tensor.getShape(),
          ::fuse::elementBytes(element.getIntOrFloatBitWidth())))
    return "too large (over 2^48 bytes = 256 TiB, the most a Fuse tensor "
           "may take, so that sizes, offsets and their sums fit in int64)";
  return "";
}

namespace {

/// Emits "<what> has type 'T': <why>" at `loc` if `type` is not a graph type.
LogicalResult checkValue(Type type, Location loc, const llvm::Twine &what) {
  std::string why = mlir::fuse::checkGraphType(type);
  if (why.empty())
    return success();
  return emitError(loc) << what << " has type " << type << ": " << why;
}

LogicalResult checkFunction(FunctionOpInterface function) {
  std::string name = "@" + function.getName().str();
  ArrayRef<Type> inputs = function.getArgumentTypes();
  for (auto [index, type] : llvm::enumerate(inputs)) {
    Location loc = function.isExternal()
                       ? function.getLoc()
                       : function.getArgument(index).getLoc();
    if (failed(checkValue(type, loc,
                          "argument #" + llvm::Twine(index) + " of " + name)))
      return failure();
  }
  for (auto [index, type] : llvm::enumerate(function.getResultTypes()))
    if (failed(checkValue(type, function.getLoc(),
                          "result #" + llvm::Twine(index) + " of " + name)))
      return failure();
  // Values inside the body: op results and the arguments of nested regions
  // (fusion bodies). Op verifiers have checked most of them; a call, or an
  // op whose result type multiplies its operands' sizes, has not.
  WalkResult walk = function->walk([&](Operation *op) {
    if (op == function.getOperation())
      return WalkResult::advance();
    for (OpResult result : op->getResults()) {
      std::string what = "'" + op->getName().getStringRef().str() +
                         "' op result #" +
                         std::to_string(result.getResultNumber());
      if (failed(checkValue(result.getType(), op->getLoc(), what)))
        return WalkResult::interrupt();
    }
    for (Region &region : op->getRegions())
      for (BlockArgument argument : region.getArguments()) {
        std::string what = "argument #" +
                           std::to_string(argument.getArgNumber()) +
                           " of the region of '" +
                           op->getName().getStringRef().str() + "'";
        if (failed(checkValue(argument.getType(), argument.getLoc(), what)))
          return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

} // namespace

LogicalResult mlir::fuse::verifyGraphTypes(Operation *root) {
  if (auto function = dyn_cast<FunctionOpInterface>(root))
    return checkFunction(function);
  WalkResult walk = root->walk<WalkOrder::PreOrder>([](Operation *op) {
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (!function)
      return WalkResult::advance();
    if (failed(checkFunction(function)))
      return WalkResult::interrupt();
    return WalkResult::skip();
  });
  return failure(walk.wasInterrupted());
}
