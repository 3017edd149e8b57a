//===- Evaluators.h - Per-op evaluation for the interpreter -----*- C++ -*-===//
//
// Private to the interpreter. Each family of ops has one evaluator; it
// returns std::nullopt for ops that are not its own, so the dispatcher in
// Interpreter.cpp tries them in turn. Results arrive zero-filled with the
// op's result types; an evaluator fills them or emits a diagnostic at the op
// and fails.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_INTERPRETER_EVALUATORS_H
#define FUSE_LIB_INTERPRETER_EVALUATORS_H

#include "fuse/Support/HostTensor.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace mlir::fuse::interp {

using ::fuse::DType;
using ::fuse::HostTensor;
using Operands = ArrayRef<const HostTensor *>;
using Results = MutableArrayRef<HostTensor>;
using EvalResult = std::optional<LogicalResult>;

/// Elementwise math, compare, select, cast.
EvalResult evalElementwise(Operation *op, Operands operands, Results results);
/// constant, iota, random.
EvalResult evalGenerator(Operation *op, Operands operands, Results results);
/// broadcast_in_dim, reshape, transpose, slice, concat, gather, scatter_add.
EvalResult evalShape(Operation *op, Operands operands, Results results);
/// reduce, argmax, cumsum, matmul.
EvalResult evalContraction(Operation *op, Operands operands, Results results);
/// softmax, log_softmax, layer_norm, rms_norm.
EvalResult evalNormalization(Operation *op, Operands operands, Results results);
/// Attention forward and backward.
EvalResult evalAttention(Operation *op, Operands operands, Results results);
/// Cross entropy forward and backward.
EvalResult evalCrossEntropy(Operation *op, Operands operands, Results results);

/// The value of `value`, one of `op`'s operands, or null if `value` is null
/// (an absent optional operand).
inline const HostTensor *operandFor(Operation *op, Operands operands,
                                    Value value) {
  if (!value)
    return nullptr;
  for (auto [index, operand] : llvm::enumerate(op->getOperands()))
    if (operand == value)
      return operands[index];
  return nullptr;
}

/// Row-major multi-index of `linear` in `shape`.
SmallVector<int64_t> unravel(int64_t linear, ArrayRef<int64_t> shape);

/// The view of a tensor as [outer, size(dim), inner]: the number of slices
/// before `dim`, the size along it and the contiguous block after it.
struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};
AxisView viewAround(ArrayRef<int64_t> shape, int64_t dim);

} // namespace mlir::fuse::interp

#endif // FUSE_LIB_INTERPRETER_EVALUATORS_H
