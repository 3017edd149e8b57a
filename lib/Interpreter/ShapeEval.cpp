//===- ShapeEval.cpp - Shape ops in the interpreter -----------------------===//
//
// Shape ops only move elements, so they copy stored values as they are: no
// rounding happens here.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::interp;

SmallVector<int64_t> mlir::fuse::interp::unravel(int64_t linear,
                                                 ArrayRef<int64_t> shape) {
  SmallVector<int64_t> index(shape.size(), 0);
  for (int64_t dim = static_cast<int64_t>(shape.size()) - 1; dim >= 0; --dim) {
    if (shape[dim] == 0)
      return index;
    index[dim] = linear % shape[dim];
    linear /= shape[dim];
  }
  return index;
}

AxisView mlir::fuse::interp::viewAround(ArrayRef<int64_t> shape, int64_t dim) {
  AxisView view;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim)
      view.outer *= shape[d];
    else if (d == dim)
      view.size = shape[d];
    else
      view.inner *= shape[d];
  }
  return view;
}

/// Copies element `from` of `in` to element `to` of `out` (same dtype).
static inline void copyElement(const HostTensor &in, int64_t from,
                               HostTensor &out, int64_t to) {
  if (in.isFloat())
    out.floats()[to] = in.floats()[from];
  else
    out.ints()[to] = in.ints()[from];
}

static int64_t dot(ArrayRef<int64_t> index, ArrayRef<int64_t> strides) {
  int64_t offset = 0;
  for (size_t d = 0; d < index.size(); ++d)
    offset += index[d] * strides[d];
  return offset;
}

static void evalBroadcast(BroadcastInDimOp op, const HostTensor &in,
                          HostTensor &out) {
  ArrayRef<int64_t> dims = op.getDims();
  std::vector<int64_t> inStrides = in.strides();
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    SmallVector<int64_t> outIndex = unravel(i, out.shape());
    int64_t from = 0;
    for (size_t d = 0; d < dims.size(); ++d)
      if (in.shape()[d] != 1)
        from += outIndex[dims[d]] * inStrides[d];
    copyElement(in, from, out, i);
  }
}

static void evalTranspose(TransposeOp op, const HostTensor &in,
                          HostTensor &out) {
  ArrayRef<int64_t> permutation = op.getPermutation();
  std::vector<int64_t> inStrides = in.strides();
  SmallVector<int64_t> permutedStrides;
  for (int64_t dim : permutation)
    permutedStrides.push_back(inStrides[dim]);
  for (int64_t i = 0, e = out.numElements(); i < e; ++i)
    copyElement(in, dot(unravel(i, out.shape()), permutedStrides), out, i);
}

static void evalSlice(SliceOp op, const HostTensor &in, HostTensor &out) {
  ArrayRef<int64_t> start = op.getStart(), stride = op.getStride();
  std::vector<int64_t> inStrides = in.strides();
  for (int64_t i = 0, e = out.numElements(); i < e; ++i) {
    SmallVector<int64_t> index = unravel(i, out.shape());
    for (size_t d = 0; d < index.size(); ++d)
      index[d] = start[d] + index[d] * stride[d];
    copyElement(in, dot(index, inStrides), out, i);
  }
}

static void evalConcat(ConcatOp op, Operands inputs, HostTensor &out) {
  AxisView outView = viewAround(out.shape(), op.getDim());
  int64_t position = 0; // where the next input starts along `dim`
  for (const HostTensor *input : inputs) {
    AxisView view = viewAround(input->shape(), op.getDim());
    for (int64_t o = 0; o < view.outer; ++o)
      for (int64_t s = 0; s < view.size; ++s)
        for (int64_t n = 0; n < view.inner; ++n)
          copyElement(*input, (o * view.size + s) * view.inner + n, out,
                      (o * outView.size + position + s) * outView.inner + n);
    position += view.size;
  }
}

/// Checks an index of gather/scatter_add; emits the error at `op`.
static LogicalResult checkIndex(Operation *op, int64_t index, int64_t bound,
                                int64_t position, const HostTensor &indices) {
  if (index >= 0 && index < bound)
    return success();
  SmallVector<int64_t> where = unravel(position, indices.shape());
  auto diag = op->emitError() << "index " << index << " at indices[";
  llvm::interleaveComma(where, diag);
  return diag << "] is out of range [0, " << bound << ")";
}

/// Walks a take along `dim` (numpy.take): calls `visit(operandIndex,
/// takenIndex)` for every element of
/// operand.shape[:dim] + indices.shape + operand.shape[dim+1:], the linear
/// index of the element it reads in the operand and of its place in the
/// taken tensor. Fails at the first index out of range.
template <typename Visit>
static LogicalResult forEachTaken(Operation *op, ArrayRef<int64_t> operandShape,
                                  int64_t dim, const HostTensor &indices,
                                  Visit visit) {
  AxisView view = viewAround(operandShape, dim);
  int64_t count = indices.numElements();
  for (int64_t o = 0; o < view.outer; ++o)
    for (int64_t k = 0; k < count; ++k) {
      int64_t index = indices.ints()[k];
      if (failed(checkIndex(op, index, view.size, k, indices)))
        return failure();
      for (int64_t n = 0; n < view.inner; ++n)
        visit((o * view.size + index) * view.inner + n,
              (o * count + k) * view.inner + n);
    }
  return success();
}

static LogicalResult evalGather(GatherOp op, const HostTensor &operand,
                                const HostTensor &indices, HostTensor &out) {
  return forEachTaken(op, operand.shape(), op.getDim(), indices,
                      [&](int64_t from, int64_t to) {
                        copyElement(operand, from, out, to);
                      });
}

/// Accumulates in f32 (i64 for integers) and rounds once at the end, like a
/// reduction, so the result does not depend on the order of repeated indices
/// beyond f32 rounding.
static LogicalResult evalScatterAdd(ScatterAddOp op, const HostTensor &dest,
                                    const HostTensor &indices,
                                    const HostTensor &updates,
                                    HostTensor &out) {
  std::vector<float> sums(dest.isFloat() ? dest.floats() : std::vector<float>());
  std::vector<int64_t> intSums(dest.isFloat() ? std::vector<int64_t>() : dest.ints());
  if (failed(forEachTaken(op, dest.shape(), op.getDim(), indices,
                          [&](int64_t to, int64_t from) {
                            if (dest.isFloat())
                              sums[to] += updates.floats()[from];
                            else
                              intSums[to] += updates.ints()[from];
                          })))
    return failure();
  for (int64_t i = 0, e = dest.numElements(); i < e; ++i) {
    if (dest.isFloat())
      out.set(i, sums[i]);
    else
      out.setInt(i, intSums[i]);
  }
  return success();
}

EvalResult mlir::fuse::interp::evalShape(Operation *op, Operands operands,
                                         Results results) {
  if (auto broadcast = llvm::dyn_cast<BroadcastInDimOp>(op)) {
    evalBroadcast(broadcast, *operands[0], results[0]);
    return success();
  }
  if (llvm::isa<ReshapeOp>(op)) {
    HostTensor &out = results[0];
    for (int64_t i = 0, e = out.numElements(); i < e; ++i)
      copyElement(*operands[0], i, out, i);
    return success();
  }
  if (auto transpose = llvm::dyn_cast<TransposeOp>(op)) {
    evalTranspose(transpose, *operands[0], results[0]);
    return success();
  }
  if (auto slice = llvm::dyn_cast<SliceOp>(op)) {
    evalSlice(slice, *operands[0], results[0]);
    return success();
  }
  if (auto concat = llvm::dyn_cast<ConcatOp>(op)) {
    evalConcat(concat, operands, results[0]);
    return success();
  }
  if (auto gather = llvm::dyn_cast<GatherOp>(op))
    return evalGather(gather, *operands[0], *operands[1], results[0]);
  if (auto scatter = llvm::dyn_cast<ScatterAddOp>(op))
    return evalScatterAdd(scatter, *operands[0], *operands[1], *operands[2],
                          results[0]);
  return std::nullopt;
}
