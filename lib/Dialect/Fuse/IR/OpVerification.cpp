//===- OpVerification.cpp - Shared checks for fuse op verifiers -----------===//

#include "OpVerification.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fuse::detail {

std::string formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, "x");
  return text;
}

std::string formatList(ArrayRef<int64_t> values) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}

std::string checkIncreasingDims(ArrayRef<int64_t> dims, int64_t rank,
                                bool allowEmpty) {
  if (dims.empty() && !allowEmpty)
    return "needs at least one dimension";
  for (auto [index, dim] : llvm::enumerate(dims)) {
    if (dim < 0 || dim >= rank)
      return "dimension " + std::to_string(dim) + " is out of range for rank " +
             std::to_string(rank);
    if (index > 0 && dims[index - 1] >= dim)
      return "dimensions " + formatList(dims) +
             " must be strictly increasing";
  }
  return "";
}

SmallVector<int64_t> reduceShape(ArrayRef<int64_t> shape,
                                 ArrayRef<int64_t> dims, bool keepdim) {
  SmallVector<int64_t> result;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(dim)))
      result.push_back(size);
    else if (keepdim)
      result.push_back(1);
  }
  return result;
}

} // namespace mlir::fuse::detail
