// fuse-depends: flash_wgmma.cuh
//===- flash_forward.cuh - Flash-attention forward (wgmma) ----------------===//
//
// One CTA of kFlashThreads (two warpgroups) per kFlashBlockM = 128 query
// rows of one (batch, head); warpgroup w owns rows 64w .. 64w + 63, warp i
// of it rows 16i .. 16i + 15 of those. The Q tile is read once into
// swizzled shared memory; K and V tiles of flashForwardBlockN(D) keys stream
// through two shared buffers each (cp.async: the next tiles load while
// these are multiplied). Per key tile and warpgroup: S = Q K^T (wgmma, both
// operands from shared memory), the online softmax in registers (running
// max and sum in the log2 domain, so exp is one ex2), P rounded to T and fed
// from registers as the A operand of O += P V (V read MN-major, i.e.
// transposed, by the tensor cores). The product P V of one tile runs while
// the softmax of the next is computed (FlashAttention-3's intra-warpgroup
// pipelining). The T x T scores never exist in memory.
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
  constexpr int M = kFlashBlockM, N = flashForwardBlockN(D);
  using QTile = wgmma::SwizzledTile<M, D>;
  using KVTile = wgmma::SwizzledTile<N, D>;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];

  // Causal rows further down see more keys: the blocks that start first
  // take the last query tiles, so the long ones do not form the tail.
  const FlashBlock block = flashForwardBlock(p.causal);
  const int m0 = block.tile * M, h = block.head, b = block.batch;
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

  // Shared buffers: K tile j in kBuf(j), V tile j in vBuf(j). Iteration j
  // multiplies K_j and V_(j-1), and meanwhile loads K_(j+1) and V_j into
  // the buffers of K_(j-1) and V_(j-2), both retired by the last barrier.
  auto kBuf = [&](int j) { return sK + (j & 1) * KVTile::kBytes; };
  auto vBuf = [&](int j) { return sV + (j & 1) * KVTile::kBytes; };
  auto loadK = [&](int j) {
    wgmma::loadTile<T, N, D, kFlashThreads>(kBuf(j), kHead + j * N * p.k.t, p.k.t,
                                            p.tk - j * N);
  };
  auto loadV = [&](int j) {
    wgmma::loadTile<T, N, D, kFlashThreads>(vBuf(j), vHead + j * N * p.v.t, p.v.t,
                                            p.tk - j * N);
  };
  wgmma::loadTile<T, M, D, kFlashThreads>(sQ, q + p.q.at(b, h, m0), p.q.t, p.tq - m0);
  if (tiles > 0) {
    loadK(0);
    loadV(0);
  }
  if (tiles > 1)
    loadK(1);
  cpAsyncCommit();
  cpAsyncWait<0>();
  wgmma::asyncProxyFence();
  __syncthreads();

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i)
    o[i] = 0.0f;
  float rowMax[2] = {-infinity(), -infinity()}, rowSum[2] = {0.0f, 0.0f};
  const ScoreScale scale = scoreScale(p.scale);
  const int row0 = m0 + rowInTile + g; // this thread's rows: row0, row0 + 8
  const bool dropout = p.dropoutP > 0.0f;
  const uint64_t dropSeed = dropout ? static_cast<uint64_t>(*seed) : 0;
  const uint64_t dropOffset = dropout ? static_cast<uint64_t>(*offset) : 0;
  const float keepScale = 1.0f / (1.0f - p.dropoutP);

  float s[N / 2];      // scores of key tile j, then its probabilities
  uint32_t pa[N / 16][4]; // probabilities of the tile whose P V is in flight
  auto issueScores = [&](int j) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, N>::template ss<0, 0>(s, wgmma::kMajor<M, D>(sQ, group * 64, kk * 16),
                                          wgmma::kMajor<N, D>(kBuf(j), 0, kk * 16), kk > 0);
    wgmma::commit();
  };
  auto issueValues = [&](int j) {
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(o, pa[kk], wgmma::mnMajor<N, D>(vBuf(j), kk * 16), 1);
    wgmma::commit();
  };

  // Scores of tile j to probabilities (online softmax); alpha[r] rescales
  // what O and the row sums held before. O is rescaled every tile, alpha 1
  // or not: skipping it when no row moved (as the TMA forward does) takes
  // the causal kernel at head dim 64 past the 128 registers of its two
  // CTAs a multiprocessor (flashForwardMinBlocks).
  auto softmax = [&](int j, float (&alpha)[2]) {
    const int n0 = j * N;
    // Masks only where a tile needs them.
    const bool edge = n0 + N > p.tk || (p.causal && n0 + N - 1 > m0 + rowInTile);
#pragma unroll
    for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = row0 + (e >> 1) * 8, jj = n0 + nt * 8 + 2 * t + (e & 1);
        float x = s[4 * nt + e] * scale.pre;
        if (mask && i < p.tq && jj < p.tk)
          x += toFloat(mask[b * p.maskStrideB + h * p.maskStrideH +
                            i * p.maskStrideQ + jj]) * scale.mask;
        if (edge && (jj >= p.tk || (p.causal && jj > i)))
          x = -infinity();
        s[4 * nt + e] = x;
      }
    onlineSoftmaxRows(s, scale.factor, rowMax, rowSum, alpha);
    if (dropout)
      dropoutProbabilities(s, row0, n0, t, headRow, p, dropSeed, dropOffset, keepScale);
  };

  // Tile 0 alone; then each iteration issues S_j = Q K_j^T and
  // O += P_(j-1) V_(j-1) together and turns S_j into P_j while the second
  // product runs: the softmax hides behind the tensor cores.
  if (tiles > 0) {
    float alpha[2];
    wgmma::fence();
    issueScores(0);
    wgmma::wait<0>();
    wgmma::pin(s);
    softmax(0, alpha);
    packProbabilities<T>(s, pa);
  }
  for (int j = 1; j < tiles; ++j) {
    if (j + 1 < tiles)
      loadK(j + 1);
    loadV(j);
    cpAsyncCommit();
    wgmma::pin(o);
    wgmma::fence();
    issueScores(j);
    issueValues(j - 1);
    wgmma::wait<1>();
    wgmma::pin(s);
    float alpha[2];
    softmax(j, alpha);
    wgmma::wait<0>();
    wgmma::pin(o);
    rescaleRows(o, alpha);
    packProbabilities<T>(s, pa);
    cpAsyncWait<0>();
    wgmma::asyncProxyFence();
    __syncthreads();
  }
  if (tiles > 0) {
    wgmma::pin(o);
    wgmma::fence();
    issueValues(tiles - 1);
    wgmma::wait<0>();
    wgmma::pin(o);
  }

  // Normalise; stage the warp's 16 rows in its own rows of the Q tile so
  // that the global stores are 16 bytes wide. Only this warpgroup's
  // products read those rows, and they are done.
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
