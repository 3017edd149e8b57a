//===- OpVerification.h - Shared checks for fuse op verifiers ---*- C++ -*-===//
//
// Private to the dialect library. Type inference functions run both from
// builders (no location, no diagnostics wanted) and from the verifier, so
// their errors go through emitOptionalError and name the op themselves.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DIALECT_FUSE_IR_OPVERIFICATION_H
#define FUSE_LIB_DIALECT_FUSE_IR_OPVERIFICATION_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace mlir::fuse::detail {

/// Emits "'<op>' op <message>" at `loc` when there is one; always fails.
template <typename OpTy, typename... Args>
LogicalResult emitInferError(std::optional<Location> loc, Args &&...args) {
  return emitOptionalError(loc, "'", OpTy::getOperationName(), "' op ",
                           std::forward<Args>(args)...);
}

/// The ranked tensor type of `value`, or null if it has another type (only
/// possible for ops built in C++ without verification).
inline RankedTensorType getTensorType(Value value) {
  return value ? llvm::dyn_cast<RankedTensorType>(value.getType())
               : RankedTensorType();
}

/// "4x8" for shape [4, 8]; "scalar" for rank 0.
std::string formatShape(ArrayRef<int64_t> shape);

/// "[1, 0]" for {1, 0}.
std::string formatList(ArrayRef<int64_t> values);

/// Checks that `dims` is strictly increasing, within [0, rank), and, unless
/// `allowEmpty`, not empty. Returns an error message, or an empty string.
std::string checkIncreasingDims(ArrayRef<int64_t> dims, int64_t rank,
                                bool allowEmpty);

/// `shape` with the dimensions in `dims` dropped, or set to 1 if `keepdim`.
SmallVector<int64_t> reduceShape(ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> dims, bool keepdim);

} // namespace mlir::fuse::detail

#endif // FUSE_LIB_DIALECT_FUSE_IR_OPVERIFICATION_H
