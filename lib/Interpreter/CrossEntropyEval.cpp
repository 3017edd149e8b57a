//===- CrossEntropyEval.cpp - Cross entropy forward and backward ----------===//

#include "Evaluators.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::interp;

namespace {

/// Per-position log-sum-exp of the logits (classes last), in f32.
std::vector<float> logSumExp(const HostTensor &logits, int64_t positions,
                             int64_t classes) {
  std::vector<float> result(positions);
  for (int64_t n = 0; n < positions; ++n) {
    const float *row = logits.floats().data() + n * classes;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t c = 0; c < classes; ++c)
      max = std::max(max, row[c]);
    float sum = 0.0f;
    for (int64_t c = 0; c < classes; ++c)
      sum += std::exp(row[c] - max);
    result[n] = max + std::log(sum);
  }
  return result;
}

/// Checks every label is ignore_index or a class; counts the others.
template <typename OpTy>
FailureOr<int64_t> countLabels(OpTy op, const HostTensor &labels,
                               int64_t classes) {
  int64_t counted = 0;
  for (int64_t n = 0, e = labels.numElements(); n < e; ++n) {
    int64_t label = labels.ints()[n];
    if (label == op.getIgnoreIndex())
      continue;
    if (label < 0 || label >= classes) {
      SmallVector<int64_t> where = unravel(n, labels.shape());
      auto diag = op.emitError() << "label " << label << " at labels[";
      llvm::interleaveComma(where, diag);
      return diag << "] is neither a class in [0, " << classes
                  << ") nor ignore_index (" << op.getIgnoreIndex() << ")";
    }
    ++counted;
  }
  return counted;
}

/// What forward and backward both start from.
struct Rows {
  int64_t classes, positions, counted;
  std::vector<float> logSumExp;
};

template <typename OpTy>
FailureOr<Rows> prepareRows(OpTy op, const HostTensor &logits,
                            const HostTensor &labels) {
  Rows rows;
  rows.classes = logits.shape().back();
  rows.positions = labels.numElements();
  FailureOr<int64_t> counted = countLabels(op, labels, rows.classes);
  if (failed(counted))
    return failure();
  rows.counted = *counted;
  rows.logSumExp = logSumExp(logits, rows.positions, rows.classes);
  return rows;
}

LogicalResult forward(CrossEntropyOp op, const HostTensor &logits,
                      const HostTensor &labels, HostTensor &loss) {
  FailureOr<Rows> rows = prepareRows(op, logits, labels);
  if (failed(rows))
    return failure();
  int64_t classes = rows->classes, positions = rows->positions;
  const std::vector<float> &lse = rows->logSumExp;
  float total = 0.0f;
  for (int64_t n = 0; n < positions; ++n) {
    int64_t label = labels.ints()[n];
    float value = label == op.getIgnoreIndex()
                      ? 0.0f
                      : lse[n] - logits.floats()[n * classes + label];
    if (op.getReduction() == LossReduction::None)
      loss.set(n, value);
    total += value;
  }
  if (op.getReduction() == LossReduction::Sum)
    loss.set(0, total);
  else if (op.getReduction() == LossReduction::Mean)
    loss.set(0, total / static_cast<float>(rows->counted)); // 0/0 = NaN, as torch
  return success();
}

LogicalResult backward(CrossEntropyBackwardOp op, const HostTensor &gradLoss,
                       const HostTensor &logits, const HostTensor &labels,
                       HostTensor &grad) {
  FailureOr<Rows> rows = prepareRows(op, logits, labels);
  if (failed(rows))
    return failure();
  int64_t classes = rows->classes, positions = rows->positions;
  const std::vector<float> &lse = rows->logSumExp;
  for (int64_t n = 0; n < positions; ++n) {
    int64_t label = labels.ints()[n];
    float g = op.getReduction() == LossReduction::None ? gradLoss.floats()[n]
                                                       : gradLoss.floats()[0];
    if (op.getReduction() == LossReduction::Mean)
      g /= static_cast<float>(rows->counted);
    bool ignored = label == op.getIgnoreIndex();
    for (int64_t c = 0; c < classes; ++c) {
      float p = std::exp(logits.floats()[n * classes + c] - lse[n]);
      float value = ignored ? 0.0f : (p - (c == label ? 1.0f : 0.0f)) * g;
      grad.set(n * classes + c, value);
    }
  }
  return success();
}

} // namespace

EvalResult mlir::fuse::interp::evalCrossEntropy(Operation *op,
                                                Operands operands,
                                                Results results) {
  if (auto ce = llvm::dyn_cast<CrossEntropyOp>(op))
    return forward(ce, *operands[0], *operands[1], results[0]);
  if (auto ce = llvm::dyn_cast<CrossEntropyBackwardOp>(op))
    return backward(ce, *operands[0], *operands[1], *operands[2], results[0]);
  return std::nullopt;
}
