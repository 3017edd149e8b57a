//===- StridedLayout.h - Where a view's elements sit in memory --*- C++ -*-===//
//
// A value computed from a stored tensor only by reshapes, transposes and
// slices is that tensor's memory under another index map: element
// (i0, i1, ...) of the view sits at element `offset + sum(ik * strides[k])`
// of the stored tensor. Read the other way, a value that only reshapes,
// transposes and concats turn into a stored tensor can be written straight
// into that tensor's memory. Kernels that address their operands by strides
// (the flash-attention kernels) read and write through such views instead
// of through a copy.
//
// A reshape of a strided view has strides only when every group of
// dimensions it merges or splits is contiguous within itself, as for
// NumPy's reshape without a copy; otherwise there are none, and the view
// needs a copy.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ANALYSIS_STRIDEDLAYOUT_H
#define FUSE_ANALYSIS_STRIDEDLAYOUT_H

#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"

#include <optional>

namespace mlir::fuse {

/// Element offset and per-dimension element strides of a tensor in the
/// memory of the tensor that stores it.
struct StridedLayout {
  int64_t offset = 0;
  SmallVector<int64_t> strides;
};

/// A tensor of `shape` stored row-major: the layout of any stored value.
StridedLayout rowMajorLayout(ArrayRef<int64_t> shape);

/// The layout of `view`'s result when its operand has layout `operand`, for
/// fuse.reshape, fuse.transpose and fuse.slice; nullopt for any other op and
/// for a reshape that strides cannot express.
std::optional<StridedLayout> layoutOfViewResult(Operation *view,
                                                const StridedLayout &operand);

/// Where operand `index` of `view` sits when `view`'s result is stored with
/// layout `result`, so that writing the operand there writes its part of the
/// result: for fuse.reshape, fuse.transpose and fuse.concat (each operand of
/// a concat is a part of its result); nullopt for any other op (a slice's
/// result is only part of its operand) and for an inexpressible reshape.
std::optional<StridedLayout> layoutOfViewOperand(Operation *view,
                                                 unsigned index,
                                                 const StridedLayout &result);

} // namespace mlir::fuse

#endif // FUSE_ANALYSIS_STRIDEDLAYOUT_H
