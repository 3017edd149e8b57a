//===- CostFormulas.h - FLOP and byte arithmetic of fuse ops ----*- C++ -*-===//
//
// The arithmetic of the cost model, free of MLIR so that it can be checked by
// hand (test/unittests/CostModelTest.cpp) and reused by the runtime, which
// does not link MLIR. CostModel.h applies it to ops.
//
// FLOPs follow the convention of model FLOPs utilisation (MFU) as PaLM
// (Chowdhery et al. 2022, appendix B) and nanoGPT's estimate_mfu define it:
// 6·N + 12·L·H·Q·T per token for a training step, so that the MFU fuse
// reports can be set beside the numbers published with those formulas.
//
// - matmul: 2·M·N·K per matrix (a multiply and an add per MAC), times batch.
// - attention forward: QK^T and PV, 2·B·H·Tq·Tk·(D + Dv) = 4·B·H·Tq·Tk·D.
//   Causal attention is NOT halved: PaLM's 12·L·H·Q·T counts the whole T×T
//   score matrix whatever the mask, and halving would make our MFU
//   incomparable with it (FlashAttention's benchmarks halve; a per-kernel
//   "work done" figure may want that, MFU does not). Scale, softmax, mask
//   and dropout are not counted, as in PaLM: they are O(T²) next to the
//   O(T²·D) matmuls.
// - attention backward: 2× the forward (dQ, dK, dV: four matmuls), as
//   PaLM's "backward = 2× forward"; the recomputation of QK^T in a
//   FlashAttention backward is not model work and is not counted.
// - elementwise: 1 FLOP per output element, transcendentals (exp, tanh,
//   erf, gelu, ...), comparisons, selects and casts included: MFU ignores
//   them anyway, and a per-op count that stays simple is easier to check.
// - reductions (reduce, argmax) and cumsum: 1 FLOP per input element.
// - softmax-like and norm ops: a small constant per element (see below).
// - shape ops, constants, iota, random: 0 FLOPs.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_ANALYSIS_COSTFORMULAS_H
#define FUSE_ANALYSIS_COSTFORMULAS_H

#include "fuse/Support/CheckedMath.h"

#include <cstdint>

namespace fuse {

/// What one op costs. For a top-level op `kernels` is 0 (a view, a
/// compile-time constant) or 1; for a function it is the sum.
struct OpCost {
  int64_t flops = 0;
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  int64_t kernels = 0;

  /// Saturating (as the formulas below): FLOPs multiply sizes that each
  /// fit (kMaxTensorBytes), but a product of three may not, and a wrapped
  /// count printed -2^63.
  OpCost &operator+=(const OpCost &other) {
    flops = saturatingAdd(flops, other.flops);
    bytesRead = saturatingAdd(bytesRead, other.bytesRead);
    bytesWritten = saturatingAdd(bytesWritten, other.bytesWritten);
    kernels = saturatingAdd(kernels, other.kernels);
    return *this;
  }
  friend bool operator==(const OpCost &a, const OpCost &b) {
    return a.flops == b.flops && a.bytesRead == b.bytesRead &&
           a.bytesWritten == b.bytesWritten && a.kernels == b.kernels;
  }
};

namespace cost {

// Per-element FLOPs of the composite ops, counted as their decomposition
// into primitives would be (1 per elementwise op, 1 per reduced element):
/// softmax: max, subtract, exp, sum, divide. log_softmax: max, subtract,
/// exp, sum, subtract log-sum (the per-row log is negligible).
constexpr int64_t kSoftmaxFlopsPerElement = 5;
/// layer_norm without affine: sum for the mean, subtract, square, sum for
/// the variance, multiply by rstd; +1 each for weight and bias.
constexpr int64_t kLayerNormFlopsPerElement = 5;
/// rms_norm without weight: square, sum, multiply by rsqrt; +1 for weight.
constexpr int64_t kRmsNormFlopsPerElement = 3;
/// cross_entropy per logit: max, subtract, exp, sum (the label pick and
/// the per-row log are negligible).
constexpr int64_t kCrossEntropyFlopsPerElement = 4;
/// cross_entropy_backward per logit: the softmax again (5), then
/// (p - onehot) * g counted as 1.
constexpr int64_t kCrossEntropyBackwardFlopsPerElement = 6;

/// What launching one more kernel costs, in bytes of memory traffic that
/// take as long: a launch and its ramp-up and tail cost a few microseconds
/// of GPU time (about 2.5 µs with CUDA graphs on an H100/H200), and at
/// ~3.3 TB/s that is ~8 MB. Fusion weighs a saved kernel against bytes with
/// it: merging two small kernels pays even when no bytes are saved.
constexpr int64_t kLaunchEquivalentBytes = 8 << 20;

/// What one FLOP costs, in bytes of memory traffic that take as long: about
/// 3.3 TB/s against the ~500 TFLOP/s a large bf16 GEMM reaches on an
/// H100/H200. Rematerialization weighs the FLOPs, bytes and kernels it adds
/// with it and kLaunchEquivalentBytes.
constexpr double kFlopEquivalentBytes = 1.0 / 150;

// The products below saturate at int64's maximum instead of wrapping: every
// tensor fits in int64 bytes (the verifier's limit), but a GEMM's
// 2·B·M·N·K need not, and a count that reads "huge" beats a negative one.

/// Bytes of `elements` values of `bitWidth` bits (i1 takes a whole byte):
/// defined in fuse/Support/CheckedMath.h, below the dialect, which checks
/// sizes with the same rule.
using ::fuse::tensorBytes;

/// `batch` products of an [M, K] and a [K, N] matrix.
constexpr int64_t matmulFlops(int64_t batch, int64_t m, int64_t n, int64_t k) {
  return saturatingMul(
      saturatingMul(saturatingMul(saturatingMul(2, batch), m), n), k);
}

/// Attention forward for `heads` query heads: QK^T (2·Tq·Tk·D) and PV
/// (2·Tq·Tk·Dv) per batch and head; causal or not (see above).
constexpr int64_t attentionForwardFlops(int64_t batch, int64_t heads,
                                        int64_t tq, int64_t tk, int64_t d,
                                        int64_t dv) {
  return saturatingAdd(matmulFlops(saturatingMul(batch, heads), tq, tk, d),
                       matmulFlops(saturatingMul(batch, heads), tq, dv, tk));
}

/// Attention backward: twice the forward.
constexpr int64_t attentionBackwardFlops(int64_t batch, int64_t heads,
                                         int64_t tq, int64_t tk, int64_t d,
                                         int64_t dv) {
  return saturatingMul(2, attentionForwardFlops(batch, heads, tq, tk, d, dv));
}

constexpr int64_t layerNormFlops(int64_t elements, bool weight, bool bias) {
  return saturatingMul(elements, kLayerNormFlopsPerElement + (weight ? 1 : 0) +
                                     (bias ? 1 : 0));
}

constexpr int64_t rmsNormFlops(int64_t elements, bool weight) {
  return saturatingMul(elements, kRmsNormFlopsPerElement + (weight ? 1 : 0));
}

/// PaLM's training FLOPs per token, 6·N + 12·L·H·Q·T, for N parameters, L
/// layers, H heads of size Q and sequence length T: what MFU divides by.
constexpr int64_t palmTrainFlopsPerToken(int64_t params, int64_t layers,
                                         int64_t heads, int64_t headDim,
                                         int64_t seqLen) {
  return 6 * params + 12 * layers * heads * headDim * seqLen;
}

} // namespace cost
} // namespace fuse

#endif // FUSE_ANALYSIS_COSTFORMULAS_H
