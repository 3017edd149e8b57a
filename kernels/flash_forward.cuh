// fuse-depends: flash_wgmma.cuh
//===- flash_forward.cuh - Flash-attention forward (wgmma) ----------------===//
//
// One CTA of kFlashThreads (two warpgroups) per kFlashBlockM = 128 query
// rows of one (batch, head); warpgroup w owns rows 64w .. 64w + 63, warp i
// of it rows 16i .. 16i + 15 of those. The Q tile is read once into
// swizzled shared memory; K and V tiles of kFlashForwardBlockN keys stream
// through two shared buffers (cp.async: the next tile loads while this one
// is multiplied). Per key tile and warpgroup: S = Q K^T (wgmma, both
// operands from shared memory), the online softmax in registers (running
// max and sum in the log2 domain, so exp is one ex2), P rounded to T and fed
// from registers as the A operand of O += P V (V read MN-major, i.e.
// transposed, by the tensor cores). The T x T scores never exist in memory.
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
                                       const long long *offset, T *out, float *lse,
                                       const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  constexpr int M = kFlashBlockM, N = kFlashForwardBlockN;
  using QTile = wgmma::SwizzledTile<M, D>;
  using KVTile = wgmma::SwizzledTile<N, D>;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];

  const int m0 = blockIdx.x * M, h = blockIdx.y, b = blockIdx.z;
  const int kvh = h / (p.qHeads / p.kvHeads);
  const long long headRow = static_cast<long long>(b * p.qHeads + h) * p.tq;
  const T *kHead = k + p.k.at(b, kvh, 0), *vHead = v + p.v.at(b, kvh, 0);
  const uint32_t sharedBase = sharedAddress(fuseFlashShared);
  const uint32_t sQ = (sharedBase + 1023) & ~1023u;
  const uint32_t sK = sQ + QTile::kBytes, sV = sK + 2 * KVTile::kBytes;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = warp / 4, rowInTile = group * 64 + (warp % 4) * 16;
  const int g = lane / 4, t = lane % 4;

  // Causal: keys past the CTA's last query are never visible.
  const int kvEnd = p.causal ? min(p.tk, m0 + M) : p.tk;
  const int tiles = (kvEnd + N - 1) / N;

  wgmma::loadTile<T, M, D, kFlashThreads>(sQ, q + p.q.at(b, h, m0), p.q.t, p.tq - m0);
  if (tiles > 0) {
    wgmma::loadTile<T, N, D, kFlashThreads>(sK, kHead, p.k.t, p.tk);
    wgmma::loadTile<T, N, D, kFlashThreads>(sV, vHead, p.v.t, p.tk);
  }
  cpAsyncCommit();
  cpAsyncWait<0>();
  wgmma::asyncProxyFence();
  __syncthreads();

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i)
    o[i] = 0.0f;
  float rowMax[2] = {-infinity(), -infinity()}, rowSum[2] = {0.0f, 0.0f};
  const float scaleLog2 = p.scale * kLog2e;
  const int row0 = m0 + rowInTile + g; // this thread's rows: row0, row0 + 8
  const bool dropout = p.dropoutP > 0.0f;
  const uint64_t dropSeed = dropout ? static_cast<uint64_t>(*seed) : 0;
  const uint64_t dropOffset = dropout ? static_cast<uint64_t>(*offset) : 0;
  const float keepScale = 1.0f / (1.0f - p.dropoutP);

  for (int kt = 0; kt < tiles; ++kt) {
    const int n0 = kt * N, buf = kt & 1;
    if (kt + 1 < tiles) {
      const int next = n0 + N;
      wgmma::loadTile<T, N, D, kFlashThreads>(sK + (buf ^ 1) * KVTile::kBytes,
                                              kHead + next * p.k.t, p.k.t, p.tk - next);
      wgmma::loadTile<T, N, D, kFlashThreads>(sV + (buf ^ 1) * KVTile::kBytes,
                                              vHead + next * p.v.t, p.v.t, p.tk - next);
    }
    cpAsyncCommit();
    const uint32_t kb = sK + buf * KVTile::kBytes, vb = sV + buf * KVTile::kBytes;

    // S = Q K^T for this warpgroup's 64 rows.
    float s[N / 2];
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, N>::template ss<0, 0>(s, wgmma::kMajor<M, D>(sQ, group * 64, kk * 16),
                                          wgmma::kMajor<N, D>(kb, 0, kk * 16), kk > 0);
    wgmma::commit();
    wgmma::wait<0>();
    wgmma::pin(s);

    // Scores to the log2 domain; masks only where a tile needs them.
    const bool edge = n0 + N > p.tk || (p.causal && n0 + N - 1 > m0 + rowInTile);
#pragma unroll
    for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = row0 + (e >> 1) * 8, j = n0 + nt * 8 + 2 * t + (e & 1);
        float x = s[4 * nt + e] * scaleLog2;
        if (mask && i < p.tq && j < p.tk)
          x += toFloat(mask[b * p.maskStrideB + h * p.maskStrideH +
                            i * p.maskStrideQ + j]) * kLog2e;
        if (edge && (j >= p.tk || (p.causal && j > i)))
          x = -infinity();
        s[4 * nt + e] = x;
      }

    // Online softmax per row (a row's 4 threads are lanes 4g .. 4g + 3).
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = rowMax[r];
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt)
        mx = fmaxf(mx, fmaxf(s[4 * nt + 2 * r], s[4 * nt + 2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      // All -inf so far: subtract 0 so exp gives 0, not NaN.
      const float base = mx == -infinity() ? 0.0f : mx;
      const float alpha = exp2Approx(rowMax[r] - base);
      rowMax[r] = mx;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt) {
        s[4 * nt + 2 * r] = exp2Approx(s[4 * nt + 2 * r] - base);
        s[4 * nt + 2 * r + 1] = exp2Approx(s[4 * nt + 2 * r + 1] - base);
        sum += s[4 * nt + 2 * r] + s[4 * nt + 2 * r + 1];
      }
      rowSum[r] = rowSum[r] * alpha + sum;
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt) {
        o[4 * dt + 2 * r] *= alpha;
        o[4 * dt + 2 * r + 1] *= alpha;
      }
    }

    // Dropout scales P after the sum (the normaliser is undropped).
    if (dropout) {
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int i = row0 + r * 8, j = n0 + nt * 8 + 2 * t;
          if (i < p.tq && j < p.tk) {
            float k0, k1;
            dropoutKeepPair(dropSeed, dropOffset,
                            static_cast<uint64_t>(headRow + i) * p.tk + j,
                            p.dropoutP, keepScale, k0, k1);
            s[4 * nt + 2 * r] *= k0;
            s[4 * nt + 2 * r + 1] *= k1;
          }
        }
    }

    // O += P V, P's accumulators repacked as A fragments.
    uint32_t pa[N / 16][4];
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk) {
      pa[kk][0] = pack<T>(s[8 * kk + 0], s[8 * kk + 1]);
      pa[kk][1] = pack<T>(s[8 * kk + 2], s[8 * kk + 3]);
      pa[kk][2] = pack<T>(s[8 * kk + 4], s[8 * kk + 5]);
      pa[kk][3] = pack<T>(s[8 * kk + 6], s[8 * kk + 7]);
    }
    wgmma::pin(o);
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(o, pa[kk], wgmma::mnMajor<N, D>(vb, kk * 16), 1);
    wgmma::commit();
    wgmma::wait<0>();
    wgmma::pin(o);
    cpAsyncWait<0>();
    wgmma::asyncProxyFence();
    __syncthreads();
  }

  // Normalise; stage the warp's 16 rows in its own rows of the Q tile (the
  // loop's last barrier retired every read of it) so that the global stores
  // are 16 bytes wide.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = rowSum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
    unsigned char *stage = fuseFlashShared + (sQ - sharedBase);
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
      *reinterpret_cast<uint32_t *>(stage + QTile::pair(rowInTile + g + 8 * r, dt * 8 + 2 * t)) =
          pack<T>(o[4 * dt + 2 * r] * inverse, o[4 * dt + 2 * r + 1] * inverse);
    const int i = row0 + 8 * r;
    if (t == 0 && i < p.tq)
      lse[headRow + i] =
          sum > 0.0f ? rowMax[r] * (1.0f / kLog2e) + logf(sum) : -infinity();
  }
  __syncwarp();
  constexpr int kChunks = D / 8;
  const unsigned char *stage = fuseFlashShared + (sQ - sharedBase);
#pragma unroll
  for (int c = lane; c < 16 * kChunks; c += 32) {
    const int row = rowInTile + c / kChunks, chunk = c % kChunks;
    const int i = m0 + row;
    if (i < p.tq)
      *reinterpret_cast<uint4 *>(out + p.o.at(b, h, i) + chunk * 8) =
          *reinterpret_cast<const uint4 *>(stage + QTile::chunk(row, chunk));
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_FORWARD_CUH
