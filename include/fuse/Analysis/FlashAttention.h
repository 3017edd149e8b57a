//===- FlashAttention.h - What the flash-attention kernels take -*- C++ -*-===//
//
// Which attention ops the flash kernels (kernels/flash_attention.cuh) run,
// and how those kernels reach their operands and results: q, k, v (for the
// backward also dout and the forward's output) are read, and the output
// (dq, dk, dv) written, as [batch, heads, rows, D] tensors addressed by
// element strides (FlashStrides) with D contiguous. Every row must start on
// 16 bytes (16-byte cp.async and vector stores), so the strides and the
// offset are multiples of 8 elements of the kernels' 16-bit types.
//
// Shared by fuse-form-fusions, which gives an attention kernel the views
// around it (the reshape + transpose of a [B, T, H*D] projection into
// heads, the way back, GPT-2's split and concat) only where these rules
// hold, and by the code generator, which derives the strides from them.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ANALYSIS_FLASHATTENTION_H
#define FUSE_ANALYSIS_FLASHATTENTION_H

#include "fuse/Analysis/StridedLayout.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include <optional>
#include <string>

namespace mlir::fuse {

/// Elements every strided row start and stride is a multiple of: 16 bytes
/// of bf16 or f16.
constexpr int64_t kFlashAlignElements = 8;

/// Why the flash kernels cannot run `attention` (an attention op), or
/// nullopt when they can: bf16 or f16, head dim 64 or 128 for the query and
/// the value alike, a mask (if any) of the query's type.
std::optional<std::string> flashIneligibility(Operation *attention);

/// The operands the flash kernels read by strides, in FlashParams order:
/// q, k, v, then for the backward dout and out.
SmallVector<OpOperand *> flashStridedOperands(Operation *attention);
/// The results they write by strides: o (not the log-sum-exp); dq, dk, dv.
SmallVector<Value> flashStridedResults(Operation *attention);

/// Whether the flash kernels can read an operand through `view`: a reshape,
/// transpose or slice (fuse-form-fusions gathers exactly these).
bool flashReadsThrough(Operation *view);

/// Whether the flash kernels can address a [batch, heads, rows, D] tensor
/// of `shape` stored with `layout`: D contiguous, 16-byte aligned rows.
bool flashAddressable(ArrayRef<int64_t> shape, const StridedLayout &layout);

/// Where an attention fusion's kernels find one strided operand or result:
/// fusion input (operands) or result (results) `index`, at `layout` in it.
/// A result nothing reads has no index; the kernels then write it to a
/// scratch buffer of their own, row-major.
struct FlashAccess {
  std::optional<unsigned> index;
  StridedLayout layout;
};

/// An attention fusion as the flash kernels see it.
struct FlashFusionLayout {
  Operation *attention = nullptr;
  /// flashStridedOperands order.
  SmallVector<FlashAccess> operands;
  /// flashStridedResults order.
  SmallVector<FlashAccess> results;
  /// The forward's log-sum-exp: the fusion result it is, if it is one.
  std::optional<unsigned> logsumexp;
  /// Whether the fusion holds views besides its attention op.
  bool hasViews = false;
};

/// Checks that `fusion` (kind attention) is one attention op whose strided
/// operands are fusion inputs seen through reshapes, transposes and slices,
/// whose other operands are fusion inputs, and whose strided results reach
/// the fusion's results through reshapes, transposes and concats that only
/// they fill, all addressable by the flash kernels; and says where each
/// operand and result lives. Reports what breaks this at the op that does.
FailureOr<FlashFusionLayout> analyzeFlashFusion(FusionOp fusion);

} // namespace mlir::fuse

#endif // FUSE_ANALYSIS_FLASHATTENTION_H
