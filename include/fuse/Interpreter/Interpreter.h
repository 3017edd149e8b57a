//===- Interpreter.h - CPU reference evaluator for fuse graphs --*- C++ -*-===//
//
// Executes a `fuse` function on the CPU, one op at a time, in every supported
// dtype. It is the ground truth that passes and GPU kernels are checked
// against, so it favours clarity over speed and pins down numerics:
//
// - f16 and bf16 values are rounded to nearest even every time one is stored
//   (after every op); elementwise math on them runs in f32.
// - matmul, reductions, cumsum, norms, softmax, attention and cross entropy
//   accumulate in f32 (integer reductions and cumsum in i64).
// - fuse.random uses kernels/philox.cuh, the same code the GPU kernels
//   compile, so random ops give identical bits on both.
// - Attention dropout drops score (b, h, i, j) of the [B, Hq, Tq, Tk] score
//   tensor, linear index n, iff philox uniform(seed, offset, n) < dropout_p,
//   and scales the kept ones by 1 / (1 - dropout_p).
//
// Runtime errors that the verifier cannot see (an index out of range, an
// integer division by zero) are reported as diagnostics at the op.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_INTERPRETER_INTERPRETER_H
#define FUSE_INTERPRETER_INTERPRETER_H

#include "fuse/Support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <vector>

namespace mlir::fuse {

/// The dtype of a fuse tensor type; failure for other types.
FailureOr<::fuse::DType> getDType(Type elementType);

/// The dtype and shape of a host tensor of `type`, without allocating one;
/// failure unless `type` is a static ranked tensor of a fuse element type.
struct HostTensorType {
  ::fuse::DType dtype;
  std::vector<int64_t> shape;
  bool matches(const ::fuse::HostTensor &tensor) const {
    return tensor.dtype() == dtype && tensor.shape() == shape;
  }
  std::string str() const { return ::fuse::typeString(dtype, shape); }
};
FailureOr<HostTensorType> getHostTensorType(Type type);

/// Why the interpreter cannot hold a value of `type` (not a static tensor
/// of a fuse element type, or more bytes than this machine's memory), or an
/// empty string.
std::string hostTensorProblem(Type type);

/// This machine's physical memory in bytes (0 when unknown).
int64_t hostMemoryBytes();

/// Bytes a host tensor of `type` takes (floats are held as f32, integers as
/// i64), saturating at int64's maximum; 0 for a type the interpreter cannot
/// hold.
int64_t hostTensorBytes(Type type);

/// What interpret() holds while it runs a function: it keeps every argument
/// and every op's result until the function returns, and a fusion's body
/// runs on copies of its operands, so the sum of all of them (nested ones
/// included) bounds its memory from above.
struct InterpreterWorkingSet {
  /// The sum, saturating at int64's maximum.
  int64_t bytes = 0;
  /// The largest value and its bytes.
  Value largest;
  int64_t largestBytes = 0;

  /// Counts `value`'s host tensor in.
  void hold(Value value);
};
InterpreterWorkingSet interpreterWorkingSet(func::FuncOp func);

/// A zero-filled host tensor of `type`; failure when hostTensorProblem says
/// why not.
FailureOr<::fuse::HostTensor> makeHostTensor(Type type);

/// Evaluates `func` with one input per argument, in order. Returns the values
/// of its `func.return`, or failure after emitting a diagnostic.
FailureOr<std::vector<::fuse::HostTensor>>
interpret(func::FuncOp func, ArrayRef<::fuse::HostTensor> inputs);

} // namespace mlir::fuse

#endif // FUSE_INTERPRETER_INTERPRETER_H
