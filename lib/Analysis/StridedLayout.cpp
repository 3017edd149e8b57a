//===- StridedLayout.cpp - Where a view's elements sit in memory ----------===//

#include "fuse/Analysis/StridedLayout.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::fuse;

namespace {

ArrayRef<int64_t> shapeOf(Value value) {
  return cast<ShapedType>(value.getType()).getShape();
}

/// The strides of a tensor of shape `from` with `strides` seen as shape
/// `to` (same element count), or nullopt when a group of dimensions that
/// the reshape merges is not contiguous within itself. Dimensions of size 1
/// carry no index, so their strides neither constrain nor matter (0).
std::optional<SmallVector<int64_t>> reshapeStrides(ArrayRef<int64_t> from,
                                                   ArrayRef<int64_t> strides,
                                                   ArrayRef<int64_t> to) {
  SmallVector<int64_t> oldShape, oldStrides;
  for (auto [size, stride] : llvm::zip(from, strides)) {
    if (size == 0)
      return std::nullopt;
    if (size != 1) {
      oldShape.push_back(size);
      oldStrides.push_back(stride);
    }
  }
  SmallVector<int64_t> result(to.size(), 0);
  size_t oi = 0, nj = 0;
  while (nj < to.size()) {
    if (to[nj] == 1) {
      ++nj;
      continue;
    }
    if (oi == oldShape.size())
      return std::nullopt;
    // The smallest groups [oi, ok) and [nj, nk) with equal element counts.
    size_t ok = oi + 1, nk = nj + 1;
    int64_t oldCount = oldShape[oi], newCount = to[nj];
    while (oldCount != newCount) {
      if (oldCount < newCount) {
        if (ok == oldShape.size())
          return std::nullopt;
        oldCount *= oldShape[ok++];
      } else {
        if (nk == to.size())
          return std::nullopt;
        newCount *= to[nk++];
      }
    }
    for (size_t i = oi; i + 1 < ok; ++i)
      if (oldStrides[i] != oldShape[i + 1] * oldStrides[i + 1])
        return std::nullopt;
    result[nk - 1] = oldStrides[ok - 1];
    for (size_t i = nk - 1; i > nj; --i)
      result[i - 1] = result[i] * to[i];
    oi = ok;
    nj = nk;
  }
  if (oi != oldShape.size())
    return std::nullopt;
  return result;
}

std::optional<StridedLayout> reshaped(const StridedLayout &layout,
                                      ArrayRef<int64_t> from,
                                      ArrayRef<int64_t> to) {
  std::optional<SmallVector<int64_t>> strides =
      reshapeStrides(from, layout.strides, to);
  if (!strides)
    return std::nullopt;
  return StridedLayout{layout.offset, std::move(*strides)};
}

} // namespace

StridedLayout mlir::fuse::rowMajorLayout(ArrayRef<int64_t> shape) {
  StridedLayout layout;
  layout.strides.assign(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i)
    layout.strides[i - 2] = layout.strides[i - 1] * shape[i - 1];
  return layout;
}

std::optional<StridedLayout>
mlir::fuse::layoutOfViewResult(Operation *view, const StridedLayout &operand) {
  return TypeSwitch<Operation *, std::optional<StridedLayout>>(view)
      .Case<ReshapeOp>([&](ReshapeOp reshape) {
        return reshaped(operand, shapeOf(reshape.getOperand()),
                        shapeOf(reshape.getResult()));
      })
      .Case<TransposeOp>([&](TransposeOp transpose) {
        StridedLayout result{operand.offset, {}};
        for (int64_t dim : transpose.getPermutation())
          result.strides.push_back(operand.strides[dim]);
        return std::optional<StridedLayout>(result);
      })
      .Case<SliceOp>([&](SliceOp slice) {
        StridedLayout result = operand;
        for (auto [dim, start, step] :
             llvm::enumerate(slice.getStart(), slice.getStride())) {
          result.offset += start * operand.strides[dim];
          result.strides[dim] = operand.strides[dim] * step;
        }
        return std::optional<StridedLayout>(result);
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<StridedLayout>
mlir::fuse::layoutOfViewOperand(Operation *view, unsigned index,
                                const StridedLayout &result) {
  return TypeSwitch<Operation *, std::optional<StridedLayout>>(view)
      .Case<ReshapeOp>([&](ReshapeOp reshape) {
        return reshaped(result, shapeOf(reshape.getResult()),
                        shapeOf(reshape.getOperand()));
      })
      .Case<TransposeOp>([&](TransposeOp transpose) {
        StridedLayout operand{result.offset,
                              SmallVector<int64_t>(result.strides.size())};
        for (auto [dim, from] : llvm::enumerate(transpose.getPermutation()))
          operand.strides[from] = result.strides[dim];
        return std::optional<StridedLayout>(operand);
      })
      .Case<ConcatOp>([&](ConcatOp concat) {
        int64_t dim = static_cast<int64_t>(concat.getDim());
        StridedLayout operand = result;
        for (Value before : concat.getInputs().take_front(index))
          operand.offset += shapeOf(before)[dim] * result.strides[dim];
        return std::optional<StridedLayout>(operand);
      })
      .Default([](Operation *) { return std::nullopt; });
}
