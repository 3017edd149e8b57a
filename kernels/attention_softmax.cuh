// fuse-depends: common.cuh philox.cuh reductions.cuh vector_io.cuh
//===- attention_softmax.cuh - Softmax of attention lowered to GEMMs ------===//
//
// Attention as cuBLASLt GEMMs around these row kernels:
//   forward : S = scale Q K^T (f32) -> attentionSoftmaxForward -> P, lse;
//             O = P V
//   backward: dP = dO V^T (f32); attentionSoftmaxBackward(S, lse, dP, dO, O)
//             -> dS; dQ = dS K, dK = dS^T Q, dV = P^T dO with P from
//             attentionProbabilities(S, lse)
// dS is the gradient with respect to Q K^T (the scale folded in), so dQ and
// dK are plain GEMMs with no scaling epilogue.
//
// An additive mask and dropout are passes of their own around these, so
// that the row kernels stay one form: attentionMaskScores adds the mask to
// S in place after each S GEMM, and attentionDropout scales P (before
// O = P V and dV = P^T dO) and dP (before the softmax backward) by the
// reference's Philox keep factors. The log-sum-exp and the row term
// D = dO . O need no change: O already holds the dropped probabilities.
//
// Layout: S is rows of tk f32 scores; row r is query i = r % tq of head-batch
// r / tq (grouped query heads are just more rows). `causal` lets query i see
// keys j <= i (top-left aligned, as PyTorch's is_causal for tq == tk);
// masked keys get probability 0 and gradient 0 and are never read.
//
// Launch: one block of kAttentionBlock threads per row, row = blockIdx.x.
// Rows of up to 16 * kAttentionBlock = 4096 keys are read once and kept in
// registers; longer ones are read twice (online max and sum, then write).
// Every formula is f32 with expf, matching the reference interpreter
// (lib/Interpreter/AttentionEval.cpp) to the f32 tolerance; a row whose
// visible scores are all -inf, or any NaN, gives NaN as it does there.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_ATTENTION_SOFTMAX_CUH
#define FUSE_KERNELS_ATTENTION_SOFTMAX_CUH

namespace fuse {

constexpr int kAttentionBlock = 256;

namespace detail {

FUSE_DEVICE int attentionVisibleKeys(int row, int tq, int tk, bool causal) {
  if (!causal)
    return tk;
  int i = row % tq;
  return i < tk ? i + 1 : tk;
}

/// Rows move 4 keys per access (16-byte score loads) when every row start is
/// aligned for it: tk a multiple of 4 and the buffers 16-byte aligned (the
/// arena aligns every buffer to 256). Else one key per access.
FUSE_DEVICE bool attentionRowsVectorizable(int tk, const void *a,
                                           const void *b) {
  return tk % 4 == 0 &&
         ((reinterpret_cast<unsigned long long>(a) |
           reinterpret_cast<unsigned long long>(b)) & 15u) == 0;
}

/// Scores j0 .. j0 + Width - 1 of a row (j0 a multiple of Width, below tk),
/// -inf past `visible`; masked groups are not read.
template <int Width>
FUSE_DEVICE void loadScores(const float *s, int j0, int visible, float *out) {
  if (j0 >= visible) {
#pragma unroll
    for (int c = 0; c < Width; ++c)
      out[c] = -infinity();
    return;
  }
  Vec<float, Width> v = loadVec<float, Width>(s + j0);
#pragma unroll
  for (int c = 0; c < Width; ++c)
    out[c] = j0 + c < visible ? v.v[c] : -infinity();
}

template <typename T, int Width>
FUSE_DEVICE void storeRowValues(T *p, int j0, const float *values) {
  Vec<T, Width> v;
#pragma unroll
  for (int c = 0; c < Width; ++c)
    v.v[c] = fromFloat<T>(values[c]);
  storeVec(p + j0, v);
}

/// The row held in registers (Items keys a thread, in groups of Width
/// consecutive keys): scores read once, exp computed once. Probabilities are
/// e_j / sum with e_j = exp(s_j - max), equal to exp(s_j - lse) up to
/// rounding, which saves an exp per key.
template <typename T, int Items, int Width>
FUSE_DEVICE void softmaxRowInRegisters(const float *s, T *p, float *lseOut,
                                       int visible, int tk, float *scratch) {
  constexpr int kGroups = Items / Width;
  float e[Items];
  float max = -infinity();
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    int j0 = (threadIdx.x + g * kAttentionBlock) * Width;
    loadScores<Width>(s, j0, visible, e + g * Width);
#pragma unroll
    for (int c = 0; c < Width; ++c)
      max = maximum(max, e[g * Width + c]);
  }
  max = blockReduceMax(max, scratch);
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    int j = (threadIdx.x + k / Width * kAttentionBlock) * Width + k % Width;
    e[k] = j < visible ? expf(e[k] - max) : 0.0f;
    sum += e[k];
  }
  sum = blockReduceSum(sum, scratch);
  if (threadIdx.x == 0)
    *lseOut = max + logf(sum);
  float inverse = 1.0f / sum;
#pragma unroll
  for (int g = 0; g < kGroups; ++g) {
    int j0 = (threadIdx.x + g * kAttentionBlock) * Width;
    if (j0 < tk) {
      float values[Width];
#pragma unroll
      for (int c = 0; c < Width; ++c)
        values[c] = e[g * Width + c] * inverse;
      storeRowValues<T, Width>(p, j0, values);
    }
  }
}

/// Long rows: one pass keeps a running max and a sum rescaled to it (online
/// softmax), a second pass re-reads the scores and writes the probabilities.
template <typename T, int Width>
FUSE_DEVICE void softmaxRowStreaming(const float *s, T *p, float *lseOut,
                                     int visible, int tk, float *scratch) {
  float max = -infinity(), sum = 0.0f;
  for (int j0 = threadIdx.x * Width; j0 < visible;
       j0 += kAttentionBlock * Width) {
    float x[Width];
    loadScores<Width>(s, j0, visible, x);
#pragma unroll
    for (int c = 0; c < Width; ++c) {
      if (j0 + c >= visible)
        break;
      if (x[c] > max) {
        sum = sum * expf(max - x[c]) + 1.0f;
        max = x[c];
      } else {
        // x == max also covers -inf == -inf, where expf(x - max) would be
        // NaN although that score's weight is 0 once a finite one is seen.
        sum += x[c] == max ? 1.0f : expf(x[c] - max);
      }
    }
  }
  float rowMax = blockReduceMax(max, scratch);
  // A thread that saw no score has sum == 0 (and max == -inf): it adds 0.
  float scaled = sum == 0.0f ? 0.0f : sum * expf(max - rowMax);
  float lse = rowMax + logf(blockReduceSum(scaled, scratch));
  if (threadIdx.x == 0)
    *lseOut = lse;
#pragma unroll 2
  for (int j0 = threadIdx.x * Width; j0 < tk; j0 += kAttentionBlock * Width) {
    float x[Width];
    loadScores<Width>(s, j0, visible, x);
#pragma unroll
    for (int c = 0; c < Width; ++c)
      x[c] = j0 + c < visible ? expf(x[c] - lse) : 0.0f;
    storeRowValues<T, Width>(p, j0, x);
  }
}

/// The smallest register-held form that fits tk, else streaming. When the
/// kernel passes tk as a constant the choice folds away and only the chosen
/// form's registers count; with a run-time tk the largest form sets them.
template <typename T, int Width>
FUSE_DEVICE void softmaxRow(const float *s, T *p, float *lseOut, int visible,
                            int tk, float *scratch) {
  if (tk <= kAttentionBlock * 4)
    softmaxRowInRegisters<T, 4, Width>(s, p, lseOut, visible, tk, scratch);
  else if (tk <= kAttentionBlock * 8)
    softmaxRowInRegisters<T, 8, Width>(s, p, lseOut, visible, tk, scratch);
  else if (tk <= kAttentionBlock * 16)
    softmaxRowInRegisters<T, 16, Width>(s, p, lseOut, visible, tk, scratch);
  else
    softmaxRowStreaming<T, Width>(s, p, lseOut, visible, tk, scratch);
}

template <typename T, int Width>
FUSE_DEVICE void probabilitiesRow(const float *s, float lse, T *p, int visible,
                                  int tk) {
#pragma unroll 4
  for (int j0 = threadIdx.x * Width; j0 < tk; j0 += kAttentionBlock * Width) {
    float x[Width];
    loadScores<Width>(s, j0, visible, x);
#pragma unroll
    for (int c = 0; c < Width; ++c)
      x[c] = j0 + c < visible ? expf(x[c] - lse) : 0.0f;
    storeRowValues<T, Width>(p, j0, x);
  }
}

template <typename T, int Width>
FUSE_DEVICE void softmaxBackwardRow(const float *s, float lse, const float *dp,
                                    float rowDot, T *ds, int visible, int tk,
                                    float scale) {
#pragma unroll 4
  for (int j0 = threadIdx.x * Width; j0 < tk; j0 += kAttentionBlock * Width) {
    float x[Width], g[Width];
    loadScores<Width>(s, j0, visible, x);
    loadScores<Width>(dp, j0, visible, g);
#pragma unroll
    for (int c = 0; c < Width; ++c)
      g[c] = j0 + c < visible ? expf(x[c] - lse) * (g[c] - rowDot) * scale
                              : 0.0f;
    storeRowValues<T, Width>(ds, j0, g);
  }
}

} // namespace detail

/// lse[r] = max + log(sum_j exp(s_j - max)) over the visible keys;
/// probs[r, j] = exp(s_j - lse[r]) as T, 0 for masked keys.
template <typename T>
FUSE_DEVICE void attentionSoftmaxForward(const float *scores, T *probs,
                                         float *lse, int tq, int tk,
                                         bool causal) {
  __shared__ float scratch[32];
  int row = blockIdx.x;
  long long base = static_cast<long long>(row) * tk;
  int visible = detail::attentionVisibleKeys(row, tq, tk, causal);
  if (detail::attentionRowsVectorizable(tk, scores, probs))
    detail::softmaxRow<T, 4>(scores + base, probs + base, lse + row, visible,
                             tk, scratch);
  else
    detail::softmaxRow<T, 1>(scores + base, probs + base, lse + row, visible,
                             tk, scratch);
}

/// The backward's recomputation: probs[r, j] = exp(s_j - lse[r]) as T, 0 for
/// masked keys.
template <typename T>
FUSE_DEVICE void attentionProbabilities(const float *scores, const float *lse,
                                        T *probs, int tq, int tk, bool causal) {
  int row = blockIdx.x;
  long long base = static_cast<long long>(row) * tk;
  int visible = detail::attentionVisibleKeys(row, tq, tk, causal);
  if (detail::attentionRowsVectorizable(tk, scores, probs))
    detail::probabilitiesRow<T, 4>(scores + base, lse[row], probs + base,
                                   visible, tk);
  else
    detail::probabilitiesRow<T, 1>(scores + base, lse[row], probs + base,
                                   visible, tk);
}

/// dscores[r, j] = P_j (dprobs[r, j] - D) scale as T, with
/// P_j = exp(s_j - lse[r]) (0 for masked keys) and D = dout[r] . out[r]
/// (= sum_j P_j dprobs[r, j], the softmax backward's row term, read off the
/// dv-wide output instead of the tk-wide row).
template <typename T>
FUSE_DEVICE void attentionSoftmaxBackward(const float *scores, const float *lse,
                                          const float *dprobs, const T *dout,
                                          const T *out, T *dscores, int tq,
                                          int tk, int dv, float scale,
                                          bool causal) {
  __shared__ float scratch[32];
  int row = blockIdx.x;
  long long outBase = static_cast<long long>(row) * dv;
  float dot = 0.0f;
  for (int d = threadIdx.x; d < dv; d += kAttentionBlock)
    dot += toFloat(dout[outBase + d]) * toFloat(out[outBase + d]);
  float rowDot = blockReduceSum(dot, scratch);

  long long base = static_cast<long long>(row) * tk;
  int visible = detail::attentionVisibleKeys(row, tq, tk, causal);
  if (detail::attentionRowsVectorizable(tk, scores, dprobs) &&
      detail::attentionRowsVectorizable(tk, dscores, dscores))
    detail::softmaxBackwardRow<T, 4>(scores + base, lse[row], dprobs + base,
                                     rowDot, dscores + base, visible, tk,
                                     scale);
  else
    detail::softmaxBackwardRow<T, 1>(scores + base, lse[row], dprobs + base,
                                     rowDot, dscores + base, visible, tk,
                                     scale);
}

namespace detail {

/// The additive term of one mask element: a float mask as it is, a boolean
/// one (i1, stored as unsigned char) 0 where true and -inf where false, as
/// the reference interpreter reads them.
FUSE_DEVICE float attentionMaskTerm(float v) { return v; }
FUSE_DEVICE float attentionMaskTerm(bf16 v) { return toFloat(v); }
FUSE_DEVICE float attentionMaskTerm(f16 v) { return toFloat(v); }
FUSE_DEVICE float attentionMaskTerm(unsigned char v) { return v ? 0.0f : -infinity(); }

} // namespace detail

/// scores[r, j] += mask term (b, h, i, j), row r = (b * heads + h) * tq + i.
/// The mask is [B or 1, H or 1, Tq or 1, Tk] row-major; a broadcast
/// dimension has stride 0.
template <typename M>
FUSE_DEVICE void attentionMaskScores(float *scores, const M *mask, int heads, int tq, int tk,
                                     long long strideB, long long strideH, long long strideQ) {
  const int row = blockIdx.x;
  const int i = row % tq, h = (row / tq) % heads, b = row / (tq * heads);
  const M *m = mask + b * strideB + h * strideH + i * strideQ;
  float *s = scores + static_cast<long long>(row) * tk;
  for (int j = threadIdx.x; j < tk; j += kAttentionBlock)
    s[j] += detail::attentionMaskTerm(m[j]);
}

/// values[r, j] *= dropout's factor of score (r, j): 0 where Philox's
/// uniform number n = r * tk + j (under *seed, *offset) is below p, else
/// 1 / (1 - p) -- the reference interpreter's factor of the same score.
template <typename T>
FUSE_DEVICE void attentionDropout(T *values, const long long *seed, const long long *offset,
                                  int tk, float p) {
  const uint64_t key = static_cast<uint64_t>(*seed), start = static_cast<uint64_t>(*offset);
  const float keepScale = 1.0f / (1.0f - p);
  const long long base = static_cast<long long>(blockIdx.x) * tk;
  for (int j = threadIdx.x; j < tk; j += kAttentionBlock) {
    const uint64_t n = static_cast<uint64_t>(base + j);
    const float keep = philox::uniformAt(key, start, n) < p ? 0.0f : keepScale;
    values[base + j] = fromFloat<T>(toFloat(values[base + j]) * keep);
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_ATTENTION_SOFTMAX_CUH
