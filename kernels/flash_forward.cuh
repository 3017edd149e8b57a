// fuse-depends: flash_common.cuh
//===- flash_forward.cuh - Flash-attention forward (FlashAttention-2) -----===//
//
// One CTA of kFlashThreads (8 warps) per kFlashBlockM query rows of one
// (batch, head); each warp owns 16 rows. The Q tile is read once into
// registers (A fragments); K and V tiles of kFlashBlockN keys stream through
// double-buffered shared memory (cp.async: the next tile loads while this
// one is multiplied). Per key tile: S = Q K^T on tensor cores, the online
// softmax in registers (running max and sum in the log2 domain, so exp is
// one ex2), P rounded to T and fed straight back as the A operand of P V.
// The T x T scores never exist in memory.
//
// Semantics (lib/Interpreter/AttentionEval.cpp): score = scale q.k + mask,
// -inf where causal hides it (j > i); lse = the natural log-sum-exp of the
// scores; out = sum_j exp(score_j - lse) keep_ij v_j with Philox dropout
// factors keep_ij in {0, 1 / (1 - p)}. A row whose scores are all -inf (only
// possible with a mask) gets out = 0 and lse = -inf, as PyTorch's fused
// kernels give (the interpreter's textbook form would give NaN). With both
// a mask and causal set, both apply.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_FORWARD_CUH
#define FUSE_KERNELS_FLASH_FORWARD_CUH

namespace fuse {

template <typename T, int D>
FUSE_DEVICE void flashAttentionForward(const T *q, const T *k, const T *v,
                                       const T *mask, const long long *seed,
                                       const long long *offset, T *out,
                                       float *lse, const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  constexpr int M = kFlashBlockM, N = kFlashBlockN, S = D + kFlashPad;
  constexpr int kTileBytes = N * S * 2;
  extern __shared__ __align__(16) unsigned char fuseFlashShared[];

  const int m0 = blockIdx.x * M, h = blockIdx.y, b = blockIdx.z;
  const int kvh = h / (p.qHeads / p.kvHeads);
  const long long headRow = static_cast<long long>(b * p.qHeads + h) * p.tq;
  const T *qHead = q + headRow * D;
  const long long kvRow = static_cast<long long>(b * p.kvHeads + kvh) * p.tk;
  const T *kHead = k + kvRow * D, *vHead = v + kvRow * D;
  const uint32_t sQ = sharedAddress(fuseFlashShared);
  const uint32_t sK = sQ + M * S * 2, sV = sK + 2 * kTileBytes;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;

  // Causal: keys past the CTA's last query are never visible.
  const int kvEnd = p.causal ? min(p.tk, m0 + M) : p.tk;
  const int tiles = (kvEnd + N - 1) / N;

  loadTile<T, D, M, kFlashThreads>(sQ, qHead + static_cast<long long>(m0) * D, p.tq - m0);
  if (tiles > 0) {
    loadTile<T, D, N, kFlashThreads>(sK, kHead, p.tk);
    loadTile<T, D, N, kFlashThreads>(sV, vHead, p.tk);
  }
  cpAsyncCommit();
  cpAsyncWait<0>();
  __syncthreads();

  uint32_t qf[D / 16][4];
#pragma unroll
  for (int kk = 0; kk < D / 16; ++kk)
    loadA<D>(sQ, warp * 16, kk * 16, qf[kk]);

  float o[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i)
    o[i][0] = o[i][1] = o[i][2] = o[i][3] = 0.0f;
  float rowMax[2] = {-infinity(), -infinity()}, rowSum[2] = {0.0f, 0.0f};
  const float scaleLog2 = p.scale * kLog2e;
  const int row0 = m0 + warp * 16 + g; // this thread's rows: row0, row0 + 8
  const bool dropout = p.dropoutP > 0.0f;
  const uint64_t dropSeed = dropout ? static_cast<uint64_t>(*seed) : 0;
  const uint64_t dropOffset = dropout ? static_cast<uint64_t>(*offset) : 0;
  const float keepScale = 1.0f / (1.0f - p.dropoutP);

  for (int kt = 0; kt < tiles; ++kt) {
    const int n0 = kt * N, buf = kt & 1;
    if (kt + 1 < tiles) {
      long long next = static_cast<long long>(n0 + N) * D;
      loadTile<T, D, N, kFlashThreads>(sK + (buf ^ 1) * kTileBytes, kHead + next, p.tk - n0 - N);
      loadTile<T, D, N, kFlashThreads>(sV + (buf ^ 1) * kTileBytes, vHead + next, p.tk - n0 - N);
    }
    cpAsyncCommit();
    const uint32_t kb = sK + buf * kTileBytes, vb = sV + buf * kTileBytes;

    float s[N / 8][4];
#pragma unroll
    for (int i = 0; i < N / 8; ++i)
      s[i][0] = s[i][1] = s[i][2] = s[i][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
#pragma unroll
      for (int np = 0; np < N / 16; ++np) {
        uint32_t bb[4];
        loadBNK<D>(kb, np * 16, kk * 16, bb);
        Mma<T>::run(s[2 * np], qf[kk], bb[0], bb[1]);
        Mma<T>::run(s[2 * np + 1], qf[kk], bb[2], bb[3]);
      }

    // Scores to the log2 domain; masks only where a tile needs them.
    const bool edge = n0 + N > p.tk || (p.causal && n0 + N - 1 > m0 + warp * 16);
#pragma unroll
    for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        int i = row0 + (e >> 1) * 8, j = n0 + nt * 8 + 2 * t + (e & 1);
        float x = s[nt][e] * scaleLog2;
        if (mask && i < p.tq && j < p.tk)
          x += toFloat(mask[b * p.maskStrideB + h * p.maskStrideH +
                            i * p.maskStrideQ + j]) * kLog2e;
        if (edge && (j >= p.tk || (p.causal && j > i)))
          x = -infinity();
        s[nt][e] = x;
      }

    // Online softmax per row (a row's 4 threads are lanes 4g .. 4g + 3).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = rowMax[r];
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt)
        mx = fmaxf(mx, fmaxf(s[nt][2 * r], s[nt][2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // All -inf so far: subtract 0 so exp gives 0, not NaN.
      const float base = mx == -infinity() ? 0.0f : mx;
      const float alpha = exp2Approx(rowMax[r] - base);
      rowMax[r] = mx;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt) {
        s[nt][2 * r] = exp2Approx(s[nt][2 * r] - base);
        s[nt][2 * r + 1] = exp2Approx(s[nt][2 * r + 1] - base);
        sum += s[nt][2 * r] + s[nt][2 * r + 1];
      }
      rowSum[r] = rowSum[r] * alpha + sum;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        o[dt][2 * r] *= alpha;
        o[dt][2 * r + 1] *= alpha;
      }
    }

    // Dropout scales P after the sum (the normaliser is undropped).
    if (dropout) {
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          int i = row0 + r * 8, j = n0 + nt * 8 + 2 * t;
          if (i < p.tq && j < p.tk) {
            float k0, k1;
            dropoutKeepPair(dropSeed, dropOffset,
                            static_cast<uint64_t>(headRow + i) * p.tk + j,
                            p.dropoutP, keepScale, k0, k1);
            s[nt][2 * r] *= k0;
            s[nt][2 * r + 1] *= k1;
          }
        }
    }

    // O += P V, P's accumulators repacked as A fragments.
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk) {
      uint32_t a[4] = {Mma<T>::pack(s[2 * kk][0], s[2 * kk][1]),
                       Mma<T>::pack(s[2 * kk][2], s[2 * kk][3]),
                       Mma<T>::pack(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                       Mma<T>::pack(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t bb[4];
        loadBKN<D>(vb, kk * 16, dp * 16, bb);
        Mma<T>::run(o[2 * dp], a, bb[0], bb[1]);
        Mma<T>::run(o[2 * dp + 1], a, bb[2], bb[3]);
      }
    }
    cpAsyncWait<0>();
    __syncthreads();
  }

  // Normalise; stage the warp's 16 rows in its own part of the Q tile (no
  // other warp reads it) so that the global stores are 16 bytes wide.
  unsigned char *stage = fuseFlashShared + warp * 16 * S * 2;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = rowSum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<uint32_t *>(stage + ((g + 8 * r) * S + dt * 8 + 2 * t) * 2) =
          Mma<T>::pack(o[dt][2 * r] * inverse, o[dt][2 * r + 1] * inverse);
    const int i = row0 + 8 * r;
    if (t == 0 && i < p.tq)
      lse[headRow + i] =
          sum > 0.0f ? rowMax[r] * (1.0f / kLog2e) + logf(sum) : -infinity();
  }
  __syncwarp();
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int c = lane; c < 16 * kChunks; c += 32) {
    const int row = c / kChunks, chunk = c % kChunks;
    const int i = m0 + warp * 16 + row;
    if (i < p.tq)
      *reinterpret_cast<uint4 *>(out + (headRow + i) * D + chunk * 8) =
          *reinterpret_cast<const uint4 *>(stage + (row * S + chunk * 8) * 2);
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_FORWARD_CUH
