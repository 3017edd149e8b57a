//===- CostModel.h - FLOPs, bytes and kernels of fuse ops -------*- C++ -*-===//
//
// Applies CostFormulas.h to fuse ops. Bytes are what an op moves through
// global memory, element size × elements: every operand read once and every
// result written once, with these exceptions, each because the simple rule
// would count traffic no kernel makes:
//
// - fuse.reshape is a view: 0 bytes, 0 kernels.
// - fuse.gather and fuse.slice read only the elements they take (and the
//   indices), not their whole operand: an embedding lookup does not read the
//   whole table.
// - fuse.constant, fuse.iota and fuse.random write their result and read
//   nothing (the seed and offset scalars are launch arguments). A constant is
//   baked in at compile time: 0 kernels.
// - A splat constant is an immediate: 0 bytes written, and 0 bytes read by
//   the ops that use it. The exporter turns `x * 0.5` into a multiply by a
//   splat tensor of x's shape, which no kernel would store or load.
// - fuse.fusion reads its inputs and writes its results only: the values
//   between the ops inside stay on chip. Its FLOPs are those of the ops
//   inside. It is one kernel. This is what makes fusion show in the numbers.
//   An input that only slices and gathers inside read counts the elements
//   they take, as for the plain ops.
//
// Every other top-level op is one kernel (a matmul is one GEMM call);
// func.return is free.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ANALYSIS_COSTMODEL_H
#define FUSE_ANALYSIS_COSTMODEL_H

#include "fuse/Analysis/CostFormulas.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::fuse {

/// Whether `value` is an immediate: a splat constant, which the exporter
/// makes of `x * 0.5` but no kernel stores or loads.
bool isImmediate(Value value);

/// Bytes `value`, a tensor, takes in memory (i1 as a byte per element).
int64_t storageBytes(Value value);

/// The cost of `op`, a fuse op or func.return, as a top-level op of a
/// function. Fails, with a diagnostic at the op, for any other op.
FailureOr<::fuse::OpCost> computeOpCost(Operation *op);

/// What `ops`, top-level ops of one block in block order whose set is
/// `members`, would cost as one fuse.fusion: the values they use and none of
/// them defines are read (by the fusion rule above), the results used by any
/// other op are written, the FLOPs are theirs, and it is one kernel. This is
/// how fuse-form-fusions weighs a merge before making it.
FailureOr<::fuse::OpCost>
computeFusedCost(ArrayRef<Operation *> ops,
                 const llvm::SmallPtrSetImpl<Operation *> &members);

/// One top-level op of a function and its cost.
struct OpCostEntry {
  Operation *op;
  ::fuse::OpCost cost;
};

/// The cost of a function: each top-level op but the terminator, in order,
/// and their sum.
struct FuncCost {
  SmallVector<OpCostEntry> ops;
  ::fuse::OpCost total;
};

/// The cost of `func`'s body. Fails, with a diagnostic, on an op that has no
/// cost model.
FailureOr<FuncCost> computeFuncCost(func::FuncOp func);

} // namespace mlir::fuse

#endif // FUSE_ANALYSIS_COSTMODEL_H
