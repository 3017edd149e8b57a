//===- FusionLegality.h - Which ops can share a kernel, and as what -*- C++ -*-===//
//
// The rules of fuse-form-fusions that do not depend on cost: what role each
// op can play in a fused kernel, which ops are cheap enough to copy into
// each consumer, and which sets of ops make a kernel that the code generator
// has a schedule template for (the FusionKind). The greedy merging in
// FormFusions.cpp asks these questions; the cost model answers the other
// one, whether a legal merge pays.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DIALECT_FUSE_TRANSFORMS_FORMFUSIONS_FUSIONLEGALITY_H
#define FUSE_LIB_DIALECT_FUSE_TRANSFORMS_FORMFUSIONS_FUSIONLEGALITY_H

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace mlir::fuse::fusion {

/// What an op can be inside a fused kernel.
enum class OpRole {
  /// Computed per element of a loop: elementwise ops, broadcast_in_dim,
  /// transpose, slice, concat, gather, iota, random.
  Pointwise,
  /// fuse.reshape: a view, free inside a kernel and on its own.
  View,
  /// fuse.reduce over trailing dimensions (each row reduced on its own).
  RowReduction,
  /// fuse.reduce over leading dimensions (bias and norm-weight gradients).
  ColumnReduction,
  /// fuse.matmul: a cuBLASLt call that may take an epilogue.
  Gemm,
  /// The attention ops: a kernel of their own.
  Attention,
  /// Everything else (constants, scatter_add, argmax, cumsum, composites
  /// kept whole, reductions over scattered dimensions): never part of a
  /// fusion.
  Opaque,
};

OpRole getOpRole(Operation *op);

/// Whether `op` is cheap and deterministic enough to be computed again in
/// each consumer instead of once through memory: elementwise ops (not
/// random), broadcast_in_dim, iota and reshape.
bool isDuplicable(Operation *op);

/// Whether a duplicated producer could join `user`'s kernel: `user` is
/// pointwise, a view or a reduction.
bool canAbsorbProducer(Operation *user);

/// The schedule template that can run `ops` (top-level ops of one block in
/// block order, whose set is `members`) as one kernel, or nullopt when none
/// can. The rules are those of fuse-form-fusions' description in Passes.td.
std::optional<FusionKind>
classifyGroup(ArrayRef<Operation *> ops,
              const llvm::SmallPtrSetImpl<Operation *> &members);

} // namespace mlir::fuse::fusion

#endif // FUSE_LIB_DIALECT_FUSE_TRANSFORMS_FORMFUSIONS_FUSIONLEGALITY_H
