//===- NormalizationEval.cpp - softmax, log_softmax and the norms ---------===//
//
// Statistics are computed in f32 with two passes (mean, then centred sum of
// squares), the definition the GPU's Welford or two-pass kernels approximate.
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

void evalSoftmax(const HostTensor &in, int64_t dim, bool logarithm,
                 HostTensor &out) {
  AxisView view = viewAround(in.shape(), dim);
  const std::vector<float> &x = in.floats();
  for (int64_t o = 0; o < view.outer; ++o) {
    for (int64_t n = 0; n < view.inner; ++n) {
      auto at = [&](int64_t s) { return (o * view.size + s) * view.inner + n; };
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t s = 0; s < view.size; ++s)
        max = std::isnan(x[at(s)]) ? x[at(s)] : std::max(max, x[at(s)]);
      // A row of -inf has max -inf and x - max = NaN: the result is NaN, as
      // in PyTorch.
      float sum = 0.0f;
      for (int64_t s = 0; s < view.size; ++s)
        sum += std::exp(x[at(s)] - max);
      float logSum = std::log(sum);
      for (int64_t s = 0; s < view.size; ++s)
        out.set(at(s), logarithm ? x[at(s)] - max - logSum
                                 : std::exp(x[at(s)] - max) / sum);
    }
  }
}

/// Mean and reciprocal standard deviation (or root mean square, if
/// `centred` is false) of each of the `rows` contiguous rows of `width`.
void rowStatistics(const std::vector<float> &x, int64_t rows, int64_t width,
                   float epsilon, bool centred, std::vector<float> &mean,
                   std::vector<float> &rstd) {
  mean.assign(rows, 0.0f);
  rstd.assign(rows, 0.0f);
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x.data() + r * width;
    float sum = 0.0f;
    for (int64_t c = 0; c < width && centred; ++c)
      sum += row[c];
    float mu = centred ? sum / static_cast<float>(width) : 0.0f;
    float squares = 0.0f;
    for (int64_t c = 0; c < width; ++c)
      squares += (row[c] - mu) * (row[c] - mu);
    mean[r] = mu;
    rstd[r] = 1.0f / std::sqrt(squares / static_cast<float>(width) + epsilon);
  }
}

void evalNorm(const HostTensor &in, const HostTensor *weight,
              const HostTensor *bias, int64_t axis, float epsilon,
              bool centred, Results results) {
  int64_t width = 1;
  for (int64_t d = axis; d < in.rank(); ++d)
    width *= in.shape()[d];
  int64_t rows = width ? in.numElements() / width : 0;
  std::vector<float> mean, rstd;
  rowStatistics(in.floats(), rows, width, epsilon, centred, mean, rstd);
  HostTensor &out = results[0];
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < width; ++c) {
      float y = (in.floats()[r * width + c] - mean[r]) * rstd[r];
      if (weight)
        y *= weight->floats()[c];
      if (bias)
        y += bias->floats()[c];
      out.set(r * width + c, y);
    }
  }
  if (results.size() == 3)
    for (int64_t r = 0; r < rows; ++r) {
      results[1].set(r, mean[r]);
      results[2].set(r, rstd[r]);
    }
}

} // namespace

EvalResult mlir::fuse::interp::evalNormalization(Operation *op,
                                                 Operands operands,
                                                 Results results) {
  if (auto softmax = llvm::dyn_cast<SoftmaxOp>(op)) {
    evalSoftmax(*operands[0], softmax.getDim(), false, results[0]);
    return success();
  }
  if (auto logSoftmax = llvm::dyn_cast<LogSoftmaxOp>(op)) {
    evalSoftmax(*operands[0], logSoftmax.getDim(), true, results[0]);
    return success();
  }
  auto lookup = [&](Value value) { return operandFor(op, operands, value); };
  if (auto norm = llvm::dyn_cast<LayerNormOp>(op)) {
    evalNorm(*operands[0], lookup(norm.getWeight()), lookup(norm.getBias()),
             norm.getAxis(), static_cast<float>(norm.getEpsilon().convertToDouble()),
             /*centred=*/true, results);
    return success();
  }
  if (auto norm = llvm::dyn_cast<RmsNormOp>(op)) {
    evalNorm(*operands[0], lookup(norm.getWeight()), nullptr, norm.getAxis(),
             static_cast<float>(norm.getEpsilon().convertToDouble()), /*centred=*/false, results);
    return success();
  }
  return std::nullopt;
}
