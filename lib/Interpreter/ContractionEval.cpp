//===- ContractionEval.cpp - reduce, argmax, cumsum and matmul -----------===//
//
// Accumulation is in f32 for float data (i64 for integers), in index order,
// and each result element is rounded once to its dtype (cumsum rounds every
// prefix sum it stores, but keeps accumulating the f32 sum).
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::interp;

namespace {

/// Maps every input element to its output element for a reduction over
/// `dims` (the output index keeps the other dims; reduced ones are 0).
std::vector<int64_t> reductionTargets(ArrayRef<int64_t> inShape,
                                      ArrayRef<int64_t> dims) {
  SmallVector<int64_t> keptShape;
  for (int64_t d = 0; d < static_cast<int64_t>(inShape.size()); ++d)
    keptShape.push_back(llvm::is_contained(dims, d) ? 1 : inShape[d]);
  std::vector<int64_t> keptStrides(inShape.size(), 1);
  for (int64_t d = static_cast<int64_t>(inShape.size()) - 2; d >= 0; --d)
    keptStrides[d] = keptStrides[d + 1] * keptShape[d + 1];

  int64_t count = 1;
  for (int64_t size : inShape)
    count *= size;
  std::vector<int64_t> targets(count);
  for (int64_t i = 0; i < count; ++i) {
    SmallVector<int64_t> index = unravel(i, inShape);
    int64_t target = 0;
    for (size_t d = 0; d < index.size(); ++d)
      if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
        target += index[d] * keptStrides[d];
    targets[i] = target;
  }
  return targets;
}

void evalReduce(ReduceOp op, const HostTensor &in, HostTensor &out) {
  std::vector<int64_t> targets = reductionTargets(in.shape(), op.getDims());
  int64_t outCount = out.numElements();
  ReduceKind kind = op.getKind();
  if (in.isFloat()) {
    float init = kind == ReduceKind::Max ? -std::numeric_limits<float>::infinity()
               : kind == ReduceKind::Min ? std::numeric_limits<float>::infinity()
                                         : 0.0f;
    std::vector<float> acc(outCount, init);
    for (int64_t i = 0, e = in.numElements(); i < e; ++i) {
      float x = in.floats()[i];
      float &a = acc[targets[i]];
      if (kind == ReduceKind::Sum || kind == ReduceKind::Mean)
        a += x;
      else if (std::isnan(x) || std::isnan(a))
        a = NAN; // max and min propagate NaN, as torch.amax
      else
        a = kind == ReduceKind::Max ? std::max(a, x) : std::min(a, x);
    }
    float reduced = static_cast<float>(in.numElements()) /
                    static_cast<float>(std::max<int64_t>(outCount, 1));
    for (int64_t i = 0; i < outCount; ++i)
      out.set(i, kind == ReduceKind::Mean ? acc[i] / reduced : acc[i]);
    return;
  }
  // The identity of the dtype, which is what a reduction over an empty
  // dimension gives (int64's extremes would wrap to 0 in an i32 result).
  bool i32 = out.dtype() == ::fuse::DType::I32;
  int64_t lowest = i32 ? std::numeric_limits<int32_t>::min()
                       : std::numeric_limits<int64_t>::min();
  int64_t highest = i32 ? std::numeric_limits<int32_t>::max()
                        : std::numeric_limits<int64_t>::max();
  int64_t init = kind == ReduceKind::Max   ? lowest
                 : kind == ReduceKind::Min ? highest
                                           : 0;
  std::vector<int64_t> acc(outCount, init);
  for (int64_t i = 0, e = in.numElements(); i < e; ++i) {
    int64_t x = in.ints()[i];
    int64_t &a = acc[targets[i]];
    a = kind == ReduceKind::Max   ? std::max(a, x)
        : kind == ReduceKind::Min ? std::min(a, x)
                                  : a + x;
  }
  for (int64_t i = 0; i < outCount; ++i)
    out.setInt(i, acc[i]);
}

void evalArgmax(ArgmaxOp op, const HostTensor &in, HostTensor &out) {
  AxisView view = viewAround(in.shape(), op.getDim());
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t n = 0; n < view.inner; ++n) {
      int64_t best = 0;
      double bestValue = in.get(o * view.size * view.inner + n);
      for (int64_t s = 1; s < view.size && !std::isnan(bestValue); ++s) {
        double value = in.get((o * view.size + s) * view.inner + n);
        if (std::isnan(value) || value > bestValue) {
          best = s;
          bestValue = value;
        }
      }
      out.setInt(o * view.inner + n, best);
    }
  }
}

void evalCumsum(CumsumOp op, const HostTensor &in, HostTensor &out) {
  AxisView view = viewAround(in.shape(), op.getDim());
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t n = 0; n < view.inner; ++n) {
      float floatSum = 0.0f;
      int64_t intSum = 0;
      for (int64_t s = 0; s < view.size; ++s) {
        int64_t at = (o * view.size + s) * view.inner + n;
        if (in.isFloat()) {
          floatSum += in.floats()[at];
          out.set(at, floatSum);
        } else {
          // Unsigned addition: i64 overflow wraps (as on the GPU) instead
          // of being undefined.
          intSum = static_cast<int64_t>(static_cast<uint64_t>(intSum) +
                                        static_cast<uint64_t>(in.ints()[at]));
          out.setInt(at, intSum);
        }
      }
    }
  }
}

/// Copies the last two dims of `in` (batch `b`) into a row-major
/// [rows, cols] matrix, transposing if asked.
void loadMatrix(const HostTensor &in, int64_t b, bool transpose,
                std::vector<float> &matrix, int64_t &rows, int64_t &cols) {
  int64_t r = in.shape()[in.rank() - 2], c = in.shape()[in.rank() - 1];
  const float *data = in.floats().data() + b * r * c;
  rows = transpose ? c : r;
  cols = transpose ? r : c;
  matrix.resize(r * c);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j)
      matrix[transpose ? j * r + i : i * c + j] = data[i * c + j];
}

void evalMatmul(MatmulOp op, const HostTensor &lhs, const HostTensor &rhs,
                HostTensor &out) {
  int64_t batches = 1;
  for (int64_t d = 0; d + 2 < out.rank(); ++d)
    batches *= out.shape()[d];
  bool sharedRhs = rhs.rank() == 2;
  std::vector<float> a, b, acc;
  for (int64_t batch = 0; batch < batches; ++batch) {
    int64_t m, k, k2, n;
    loadMatrix(lhs, batch, op.getTransposeLhs(), a, m, k);
    if (batch == 0 || !sharedRhs)
      loadMatrix(rhs, sharedRhs ? 0 : batch, op.getTransposeRhs(), b, k2, n);
    else
      n = rhs.shape()[op.getTransposeRhs() ? 0 : 1];
    // i-k-j order keeps the inner loop contiguous; f32 accumulation in k
    // order, as a GEMM with f32 compute.
    acc.assign(m * n, 0.0f);
    for (int64_t i = 0; i < m; ++i)
      for (int64_t p = 0; p < k; ++p) {
        float x = a[i * k + p];
        const float *row = b.data() + p * n;
        float *target = acc.data() + i * n;
        for (int64_t j = 0; j < n; ++j)
          target[j] += x * row[j];
      }
    for (int64_t i = 0; i < m * n; ++i)
      out.set(batch * m * n + i, acc[i]);
  }
}

} // namespace

EvalResult mlir::fuse::interp::evalContraction(Operation *op, Operands operands,
                                               Results results) {
  if (auto reduce = llvm::dyn_cast<ReduceOp>(op)) {
    evalReduce(reduce, *operands[0], results[0]);
    return success();
  }
  if (auto argmax = llvm::dyn_cast<ArgmaxOp>(op)) {
    evalArgmax(argmax, *operands[0], results[0]);
    return success();
  }
  if (auto cumsum = llvm::dyn_cast<CumsumOp>(op)) {
    evalCumsum(cumsum, *operands[0], results[0]);
    return success();
  }
  if (auto matmul = llvm::dyn_cast<MatmulOp>(op)) {
    evalMatmul(matmul, *operands[0], *operands[1], results[0]);
    return success();
  }
  return std::nullopt;
}
