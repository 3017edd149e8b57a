//===- Rematerialize.h - Parts of fuse-rematerialize ------------*- C++ -*-===//
//
// fuse-rematerialize works on a fused training step in three parts:
// RematerializeCut.cpp chooses which forward values the backward recomputes
// (a minimum cut over bytes), RematerializeRewrite.cpp recomputes them next
// to their backward readers, inside the readers' kernels where the kernel
// template allows; Rematerialize.cpp is the pass (budgets, reports).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DIALECT_FUSE_TRANSFORMS_REMATERIALIZE_REMATERIALIZE_H
#define FUSE_LIB_DIALECT_FUSE_TRANSFORMS_REMATERIALIZE_REMATERIALIZE_H

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

#include <limits>

namespace mlir::fuse::remat {

/// What recomputing costs in the cut, against the bytes of keeping a value.
struct RecomputePolicy {
  /// Bytes of kept memory one FLOP of recomputation is worth: the cut
  /// recomputes a value only if that saves more bytes than its kernel's
  /// FLOPs times this. Infinity: only what is free (pointwise kernels that
  /// their readers can take) is recomputed.
  double bytesPerFlop = std::numeric_limits<double>::infinity();
  /// Whether kernels that draw random numbers may be recomputed (bit for
  /// bit: the same Philox seed and offset); only as a last resort.
  bool allowRandom = false;
  /// Whether a recomputed kernel that cannot go into its reader's kernel is
  /// computed once, before its first backward reader, and shared by the
  /// later ones (true), or computed again before each reader, so that no
  /// copy stays live across the backward (false). Cheap kernels (pointwise
  /// and reductions, memory-bound) and dear ones (GEMMs, attention) are
  /// decided apart: copying the cheap ones per reader costs bandwidth,
  /// copying the dear ones multiplies FLOPs.
  bool shareCheapCopies = true;
  bool shareDearCopies = true;
};

/// The forward of a training step: the top-level ops the result named
/// `loss` depends on. Empty when no result is named `loss`.
llvm::DenseSet<Operation *> findForward(func::FuncOp func);

/// The forward values (results of forward top-level ops, views resolved to
/// what they view) that the backward should recompute instead of reading
/// from memory: the sink side of a minimum cut whose cut edges are the
/// bytes kept from the forward for the backward plus the FLOPs recomputed
/// (weighed by `policy`).
llvm::DenseSet<Value>
chooseRecomputed(func::FuncOp func, const llvm::DenseSet<Operation *> &forward,
                 const RecomputePolicy &policy);

/// What the rewrite did.
struct RewriteStats {
  int64_t valuesRecomputed = 0;
  int64_t kernelsAdded = 0;
  int64_t kernelsMergedIntoReaders = 0;
  int64_t flopsAdded = 0;
};

/// Makes every backward reader of a value in `recomputed` read a copy
/// computed next to it: the producing kernel is cloned into the reader's
/// kernel when the merged body is still a kernel of the reader's kind, else
/// cloned just before the reader, as a kernel that later readers share or
/// not as `policy` says.
RewriteStats recompute(func::FuncOp func,
                       const llvm::DenseSet<Operation *> &forward,
                       const llvm::DenseSet<Value> &recomputed,
                       const RecomputePolicy &policy);

/// The value a view chain (reshapes) of `value` views.
Value viewRoot(Value value);

} // namespace mlir::fuse::remat

#endif // FUSE_LIB_DIALECT_FUSE_TRANSFORMS_REMATERIALIZE_REMATERIALIZE_H
