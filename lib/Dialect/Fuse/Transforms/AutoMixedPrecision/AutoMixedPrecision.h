//===- AutoMixedPrecision.h - fuse-auto-mixed-precision's parts -*- C++ -*-===//
//
// fuse-auto-mixed-precision has two jobs, one file each beside this header:
// the precision policy (PrecisionPolicy.cpp) moves matmul and attention to a
// 16-bit type, and dynamic loss scaling (LossScaling.cpp) keeps the f16
// gradients of a training step in range. LossScaling.cpp finds the
// gradients with the linearity analysis of LinearBackward.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DIALECT_FUSE_TRANSFORMS_AUTOMIXEDPRECISION_H
#define FUSE_LIB_DIALECT_FUSE_TRANSFORMS_AUTOMIXEDPRECISION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::fuse::amp {

/// Runs every matmul and attention op (forward and backward) of `func` whose
/// operands are f32 in `lowType` (bf16 or f16) and casts its results back to
/// f32 for their users. Each value is cast once, right after its
/// definition; a cast meets and cancels a widening cast from `lowType`,
/// through data-movement ops if it has to, and casts left dead go.
void applyPrecisionPolicy(func::FuncOp func, FloatType lowType);

/// Rounds the sum of each `lowType` matmul's result (widened to f32) and a
/// broadcast bias to `lowType`, read back as f32: a linear layer's output
/// as torch.autocast returns it (LinearOutputs.cpp).
void roundLinearOutputs(func::FuncOp func, FloatType lowType);

/// Returns each f32 result of `func` that widens a `lowType` value (a cast,
/// possibly under data movement) as that value, in `lowType`, as
/// torch.autocast returns a model's output, and changes the function type
/// to match.
void narrowResults(func::FuncOp func, FloatType lowType);

/// Keeps the `lowType` copy of each f32 weight that `func` updates in place
/// (a donated argument and a result of the same `fuse.name`) as state: a
/// donated argument `amp_weight.<name>` replaces the weight's casts, and a
/// result of that name returns the copy of the updated weight, keeping the
/// copy wherever the update keeps the weight (WeightCopies.cpp). Fails only
/// on a name clash.
LogicalResult keepWeightCopies(func::FuncOp func, FloatType lowType);

/// Adds dynamic loss scaling to `func` if it is a training step with
/// fuse.cross_entropy_backward: scale arguments and results, the scaled loss
/// gradient, unscaled gradients, `found_inf`, the skipped update and the
/// scale's own update (GradScaler's, with `growthInterval`). An inference
/// graph is left alone; a training step without the loss gradient (one
/// with attention backward or `grad.*` results), or one that cannot take
/// the new arguments, fails with a diagnostic.
LogicalResult addDynamicLossScaling(func::FuncOp func, int64_t growthInterval);

/// The values of `body`'s top-level ops that are linear (homogeneous of
/// degree 1) in `seeds`, by the rules of each op's semantics: what
/// multiplying the seeds by a scale multiplies by the same scale.
llvm::DenseSet<Value> findLinearValues(Block &body, ArrayRef<Value> seeds);

} // namespace mlir::fuse::amp

#endif // FUSE_LIB_DIALECT_FUSE_TRANSFORMS_AUTOMIXEDPRECISION_H
