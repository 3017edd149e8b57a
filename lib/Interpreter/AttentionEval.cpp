//===- AttentionEval.cpp - Attention forward and backward -----------------===//
//
// The textbook algorithm over explicit score rows, in f32: the reference that
// the tiled flash-attention kernels must match. Probabilities are recomputed
// in the backward from the forward's log-sum-exp, as those kernels do.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "philox.cuh"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::interp;

namespace {

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

/// Shapes and options shared by forward and backward.
struct AttentionProblem {
  int64_t batch, queryHeads, kvHeads, queryLen, keyLen, headDim, valueDim;
  float scale;
  float dropout;
  bool causal;
  const HostTensor *query, *key, *value, *mask;
  uint64_t seed = 0, offset = 0;

  float q(int64_t b, int64_t h, int64_t i, int64_t d) const {
    return query->floats()[((b * queryHeads + h) * queryLen + i) * headDim + d];
  }
  float k(int64_t b, int64_t g, int64_t j, int64_t d) const {
    return key->floats()[((b * kvHeads + g) * keyLen + j) * headDim + d];
  }
  float v(int64_t b, int64_t g, int64_t j, int64_t d) const {
    return value->floats()[((b * kvHeads + g) * keyLen + j) * valueDim + d];
  }
  int64_t kvHead(int64_t h) const { return h / (queryHeads / kvHeads); }

  /// The additive mask term for score (b, h, i, j): 0, a float, or -inf.
  float maskTerm(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (causal)
      return j > i ? kNegInf : 0.0f;
    if (!mask)
      return 0.0f;
    const std::vector<int64_t> &shape = mask->shape();
    int64_t index = (((shape[0] == 1 ? 0 : b) * shape[1] +
                      (shape[1] == 1 ? 0 : h)) * shape[2] +
                     (shape[2] == 1 ? 0 : i)) * shape[3] + j;
    if (mask->isFloat())
      return mask->floats()[index];
    return mask->ints()[index] ? 0.0f : kNegInf;
  }

  /// Scaled, masked scores of query row (b, h, i).
  void scores(int64_t b, int64_t h, int64_t i, std::vector<float> &s) const {
    s.resize(keyLen);
    int64_t g = kvHead(h);
    for (int64_t j = 0; j < keyLen; ++j) {
      float dot = 0.0f;
      for (int64_t d = 0; d < headDim; ++d)
        dot += q(b, h, i, d) * k(b, g, j, d);
      s[j] = dot * scale + maskTerm(b, h, i, j);
    }
  }

  /// Dropout's factor for score (b, h, i, j): 0 or 1 / (1 - p).
  float keep(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (dropout == 0.0f)
      return 1.0f;
    auto n = static_cast<uint64_t>(((b * queryHeads + h) * queryLen + i) *
                                       keyLen + j);
    bool dropped = ::fuse::philox::uniformAt(seed, offset, n) < dropout;
    return dropped ? 0.0f : 1.0f / (1.0f - dropout);
  }
};

template <typename OpTy>
AttentionProblem describe(OpTy op, Operation *raw, Operands operands) {
  auto find = [&](Value value) { return operandFor(raw, operands, value); };
  AttentionProblem p;
  p.query = find(op.getQuery());
  p.key = find(op.getKey());
  p.value = find(op.getValue());
  p.mask = find(op.getMask());
  const std::vector<int64_t> &qs = p.query->shape(), &ks = p.key->shape();
  p.batch = qs[0];
  p.queryHeads = qs[1];
  p.queryLen = qs[2];
  p.headDim = qs[3];
  p.kvHeads = ks[1];
  p.keyLen = ks[2];
  p.valueDim = p.value->shape()[3];
  p.scale = static_cast<float>(op.getScale().convertToDouble());
  p.dropout = static_cast<float>(op.getDropoutP().convertToDouble());
  p.causal = op.getCausal();
  if (const HostTensor *seed = find(op.getSeed()))
    p.seed = static_cast<uint64_t>(seed->ints()[0]);
  if (const HostTensor *offset = find(op.getOffset()))
    p.offset = static_cast<uint64_t>(offset->ints()[0]);
  return p;
}

void forward(const AttentionProblem &p, HostTensor &out, HostTensor &lse) {
  std::vector<float> s, acc(p.valueDim);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h)
      for (int64_t i = 0; i < p.queryLen; ++i) {
        p.scores(b, h, i, s);
        float max = kNegInf;
        for (float x : s)
          max = std::max(max, x);
        float sum = 0.0f;
        for (float x : s)
          sum += std::exp(x - max);
        // A fully masked row has max = -inf: its log-sum-exp is -inf and
        // its probabilities NaN, as PyTorch's math backend gives.
        float logSumExp = max + std::log(sum);
        std::fill(acc.begin(), acc.end(), 0.0f);
        int64_t g = p.kvHead(h);
        for (int64_t j = 0; j < p.keyLen; ++j) {
          float weight = std::exp(s[j] - logSumExp) * p.keep(b, h, i, j);
          for (int64_t d = 0; d < p.valueDim; ++d)
            acc[d] += weight * p.v(b, g, j, d);
        }
        int64_t row = (b * p.queryHeads + h) * p.queryLen + i;
        for (int64_t d = 0; d < p.valueDim; ++d)
          out.set(row * p.valueDim + d, acc[d]);
        lse.set(row, logSumExp);
      }
}

void backward(const AttentionProblem &p, const HostTensor &gradOut,
              const HostTensor &lse, Results results) {
  // Accumulate in f32 buffers, then round once into the results.
  std::vector<float> dq(p.query->numElements(), 0.0f);
  std::vector<float> dk(p.key->numElements(), 0.0f);
  std::vector<float> dv(p.value->numElements(), 0.0f);
  std::vector<float> s, prob(p.keyLen), dprob(p.keyLen);
  for (int64_t b = 0; b < p.batch; ++b)
    for (int64_t h = 0; h < p.queryHeads; ++h) {
      int64_t g = p.kvHead(h);
      for (int64_t i = 0; i < p.queryLen; ++i) {
        int64_t row = (b * p.queryHeads + h) * p.queryLen + i;
        const float *dO = gradOut.floats().data() + row * p.valueDim;
        p.scores(b, h, i, s);
        float rowDot = 0.0f; // sum_j P_j dP_j = dO . O
        for (int64_t j = 0; j < p.keyLen; ++j) {
          prob[j] = std::exp(s[j] - lse.floats()[row]);
          float keep = p.keep(b, h, i, j);
          float dOv = 0.0f;
          for (int64_t d = 0; d < p.valueDim; ++d)
            dOv += dO[d] * p.v(b, g, j, d);
          dprob[j] = dOv * keep;
          rowDot += prob[j] * dprob[j];
          float weight = prob[j] * keep;
          for (int64_t d = 0; d < p.valueDim; ++d)
            dv[((b * p.kvHeads + g) * p.keyLen + j) * p.valueDim + d] +=
                weight * dO[d];
        }
        for (int64_t j = 0; j < p.keyLen; ++j) {
          float dScore = prob[j] * (dprob[j] - rowDot) * p.scale;
          if (dScore == 0.0f) // masked out: nothing to add
            continue;
          for (int64_t d = 0; d < p.headDim; ++d) {
            dq[row * p.headDim + d] += dScore * p.k(b, g, j, d);
            dk[((b * p.kvHeads + g) * p.keyLen + j) * p.headDim + d] +=
                dScore * p.q(b, h, i, d);
          }
        }
      }
    }
  for (int64_t i = 0; i < static_cast<int64_t>(dq.size()); ++i)
    results[0].set(i, dq[i]);
  for (int64_t i = 0; i < static_cast<int64_t>(dk.size()); ++i)
    results[1].set(i, dk[i]);
  for (int64_t i = 0; i < static_cast<int64_t>(dv.size()); ++i)
    results[2].set(i, dv[i]);
}

} // namespace

EvalResult mlir::fuse::interp::evalAttention(Operation *op, Operands operands,
                                             Results results) {
  if (auto attention = llvm::dyn_cast<AttentionOp>(op)) {
    forward(describe(attention, op, operands), results[0], results[1]);
    return success();
  }
  if (auto attention = llvm::dyn_cast<AttentionBackwardOp>(op)) {
    backward(describe(attention, op, operands), *operands[0], *operands[5],
             results);
    return success();
  }
  return std::nullopt;
}
