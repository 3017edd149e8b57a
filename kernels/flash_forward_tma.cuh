// fuse-depends: flash_wgmma.cuh tma.cuh
//===- flash_forward_tma.cuh - Warp-specialised flash forward (TMA) -------===//
//
// The forward of flash_forward.cuh (same semantics, same fragments and
// online softmax) restructured as FlashAttention-3 is, so that the tensor
// cores never wait for loads or for a CTA barrier:
//   - warpgroup 0 is the producer: one thread asks the copy engine for the
//     Q tile once and then for K and V tiles through kFlashTmaStages shared
//     buffers each, each buffer guarded by a "full" mbarrier (the copy's
//     bytes complete it) and an "empty" one (both consumers arrive when
//     their products have read it). It keeps 24 registers (setmaxnreg).
//   - warpgroups 1 and 2 consume, 64 query rows each, with 240 registers:
//     S = Q K^T, softmax, O += P V, with one tile's P V in flight while the
//     next tile's softmax runs (intra-warpgroup overlap), and
//   - the two consumers issue their products in turn (two named barriers,
//     "ping-pong"), so one's softmax runs while the other's products own
//     the tensor cores.
// q, k and v are read through TensorMaps of their [batch, heads, rows, D]
// views (dims {D, rows, heads, batch}, box {64, rows of a tile, 1, 1},
// 128-byte swizzle: the copy engine writes exactly the SwizzledTile layout
// of flash_wgmma.cuh, one 64-column panel per copy). Rows past the end of a
// head arrive as zeros, so any length works with no bounds checks on loads.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_FORWARD_TMA_CUH
#define FUSE_KERNELS_FLASH_FORWARD_TMA_CUH

namespace fuse {

/// One consumer warpgroup of flashAttentionForwardTma: query rows
/// m0 + 64 group .. + 63 against the key tiles the producer delivers.
template <typename T, int D>
FUSE_DEVICE void flashForwardTmaConsumer(int group, uint32_t sQ, uint32_t sK, uint32_t sV,
                                         uint32_t qFull, int tiles, int m0, int h, int b,
                                         const T *mask, const long long *seed,
                                         const long long *offset, T *out, float *lse,
                                         const FlashParams &p) {
  using namespace flash;
  constexpr int M = kFlashBlockM, N = kFlashTmaBlockN, S = kFlashTmaStages;
  using QTile = wgmma::SwizzledTile<M, D>;
  using KVTile = wgmma::SwizzledTile<N, D>;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];
  const uint32_t sharedBase = sharedAddress(fuseFlashShared);
  auto kFull = [&](int s) { return qFull + 8 * (1 + s); };
  auto vFull = [&](int s) { return qFull + 8 * (1 + S + s); };
  auto kEmpty = [&](int s) { return qFull + 8 * (1 + 2 * S + s); };
  auto vEmpty = [&](int s) { return qFull + 8 * (1 + 3 * S + s); };
  auto kBuf = [&](int s) { return sK + s * KVTile::kBytes; };
  auto vBuf = [&](int s) { return sV + s * KVTile::kBytes; };

  const int tid = threadIdx.x - 128;
  const int warp = tid / 32, lane = tid % 32;
  const int rowInTile = group * 64 + (warp % 4) * 16;
  const int g = lane / 4, t = lane % 4;
  const bool releases = tid % 128 == 0; // one arrival per consumer
  const long long headRow = static_cast<long long>(b * p.qHeads + h) * p.tq;

  // Ping-pong: consumer c issues its products after passing named barrier
  // 1 + c, then lets the other go. Consumer 0 goes first; the
  // other skips its last hand-over so that no arrival is left pending.
  // (Barrier ids are immediates so that ptxas reserves only these.)
  auto awaitTurn = [&]() {
    if (group == 0)
      tma::namedSync<1>(2 * 128);
    else
      tma::namedSync<2>(2 * 128);
  };
  auto passTurn = [&](int j) {
    if (group == 0)
      tma::namedArrive<2>(2 * 128);
    else if (j + 1 < tiles)
      tma::namedArrive<1>(2 * 128);
  };
  if (group == 1 && tiles > 0)
    tma::namedArrive<1>(2 * 128);

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

  float s[N / 2];         // scores of key tile j, then its probabilities
  uint32_t pa[N / 16][4]; // probabilities of the tile whose P V is in flight
  auto issueScores = [&](int j) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, N>::template ss<0, 0>(s, wgmma::kMajor<M, D>(sQ, group * 64, kk * 16),
                                          wgmma::kMajor<N, D>(kBuf(j % S), 0, kk * 16),
                                          kk > 0);
    wgmma::commit();
  };
  auto issueValues = [&](int j) {
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(o, pa[kk], wgmma::mnMajor<N, D>(vBuf(j % S), kk * 16),
                                       1);
    wgmma::commit();
  };
  auto parityOf = [&](int j) { return static_cast<uint32_t>((j / S) & 1); };

  // Scores of tile j to probabilities (online softmax); alpha[r] rescales
  // what O and the row sums held before.
  auto softmax = [&](int j, float (&alpha)[2]) {
    const int n0 = j * N;
    const bool edge = n0 + N > p.tk || (p.causal && n0 + N - 1 > m0 + rowInTile);
#pragma unroll
    for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = row0 + (e >> 1) * 8, jj = n0 + nt * 8 + 2 * t + (e & 1);
        float x = s[4 * nt + e] * scaleLog2;
        if (mask && i < p.tq && jj < p.tk)
          x += maskValue(mask[b * p.maskStrideB + h * p.maskStrideH +
                            i * p.maskStrideQ + jj]) * kLog2e;
        if (edge && (jj >= p.tk || (p.causal && jj > i)))
          x = -infinity();
        s[4 * nt + e] = x;
      }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float mx = rowMax[r];
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt)
        mx = fmaxf(mx, fmaxf(s[4 * nt + 2 * r], s[4 * nt + 2 * r + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float base = mx == -infinity() ? 0.0f : mx;
      alpha[r] = exp2Approx(rowMax[r] - base);
      rowMax[r] = mx;
      float sum = 0.0f;
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt) {
        s[4 * nt + 2 * r] = exp2Approx(s[4 * nt + 2 * r] - base);
        s[4 * nt + 2 * r + 1] = exp2Approx(s[4 * nt + 2 * r + 1] - base);
        sum += s[4 * nt + 2 * r] + s[4 * nt + 2 * r + 1];
      }
      rowSum[r] = rowSum[r] * alpha[r] + sum;
    }
    if (dropout) {
#pragma unroll
      for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
        for (int r = 0; r < 2; ++r) {
          const int i = row0 + r * 8, jj = n0 + nt * 8 + 2 * t;
          if (i < p.tq && jj < p.tk) {
            float k0, k1;
            dropoutKeepPair(dropSeed, dropOffset,
                            static_cast<uint64_t>(headRow + i) * p.tk + jj,
                            p.dropoutP, keepScale, k0, k1);
            s[4 * nt + 2 * r] *= k0;
            s[4 * nt + 2 * r + 1] *= k1;
          }
        }
    }
  };
  auto packProbabilities = [&]() {
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk)
#pragma unroll
      for (int w = 0; w < 4; ++w)
        pa[kk][w] = pack<T>(s[8 * kk + 2 * w], s[8 * kk + 2 * w + 1]);
  };

  tma::wait(qFull, 0);
  if (tiles > 0) {
    float alpha[2];
    tma::wait(kFull(0), 0);
    awaitTurn();
    wgmma::fence();
    issueScores(0);
    passTurn(0);
    wgmma::wait<0>();
    wgmma::pin(s);
    if (releases)
      tma::arrive(kEmpty(0));
    softmax(0, alpha);
    packProbabilities();
  }
  for (int j = 1; j < tiles; ++j) {
    tma::wait(kFull(j % S), parityOf(j));
    tma::wait(vFull((j - 1) % S), parityOf(j - 1));
    awaitTurn();
    wgmma::pin(o);
    wgmma::fence();
    issueScores(j);
    issueValues(j - 1);
    passTurn(j);
    wgmma::wait<1>();
    wgmma::pin(s);
    if (releases)
      tma::arrive(kEmpty(j % S));
    float alpha[2];
    softmax(j, alpha);
    wgmma::wait<0>();
    wgmma::pin(o);
    if (releases)
      tma::arrive(vEmpty((j - 1) % S));
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        o[4 * dt + 2 * r] *= alpha[r];
        o[4 * dt + 2 * r + 1] *= alpha[r];
      }
    packProbabilities();
  }
  if (tiles > 0) {
    tma::wait(vFull((tiles - 1) % S), parityOf(tiles - 1));
    wgmma::pin(o);
    wgmma::fence();
    issueValues(tiles - 1);
    wgmma::wait<0>();
    wgmma::pin(o);
  }

  // Normalise; stage the warp's 16 rows in its own rows of the Q tile (only
  // this warpgroup's finished products read them) for 16-byte stores.
  unsigned char *stage = fuseFlashShared + (sQ - sharedBase);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float sum = rowSum[r];
    sum += __shfl_xor_sync(0xffffffffu, sum, 1);
    sum += __shfl_xor_sync(0xffffffffu, sum, 2);
    const float inverse = sum > 0.0f ? 1.0f / sum : 0.0f;
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
#pragma unroll
  for (int c = lane; c < 16 * kChunks; c += 32) {
    const int row = rowInTile + c / kChunks, chunk = c % kChunks;
    const int i = m0 + row;
    if (i < p.tq)
      *reinterpret_cast<uint4 *>(out + p.o.at(b, h, i) + chunk * 8) =
          *reinterpret_cast<const uint4 *>(stage + QTile::chunk(row, chunk));
  }
}

template <typename T, int D>
FUSE_DEVICE void flashAttentionForwardTma(const TensorMap &qMap, const TensorMap &kMap,
                                          const TensorMap &vMap, const T *mask,
                                          const long long *seed, const long long *offset,
                                          T *out, float *lse, const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  constexpr int M = kFlashBlockM, N = kFlashTmaBlockN, S = kFlashTmaStages;
  using QTile = wgmma::SwizzledTile<M, D>;
  using KVTile = wgmma::SwizzledTile<N, D>;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];

  const FlashBlock block = flashForwardBlock(p.causal);
  const int m0 = block.tile * M, h = block.head, b = block.batch;
  const int kvh = h / (p.qHeads / p.kvHeads);
  const uint32_t sharedBase = sharedAddress(fuseFlashShared);
  const uint32_t sQ = (sharedBase + 1023) & ~1023u;
  const uint32_t sK = sQ + QTile::kBytes, sV = sK + S * KVTile::kBytes;
  // Barriers: Q full, then K full, V full, K empty, V empty per stage.
  const uint32_t qFull = sV + S * KVTile::kBytes;
  auto kFull = [&](int s) { return qFull + 8 * (1 + s); };
  auto vFull = [&](int s) { return qFull + 8 * (1 + S + s); };
  auto kEmpty = [&](int s) { return qFull + 8 * (1 + 2 * S + s); };
  auto vEmpty = [&](int s) { return qFull + 8 * (1 + 3 * S + s); };
  auto kBuf = [&](int s) { return sK + s * KVTile::kBytes; };
  auto vBuf = [&](int s) { return sV + s * KVTile::kBytes; };

  const int kvEnd = p.causal ? min(p.tk, m0 + M) : p.tk;
  const int tiles = (kvEnd + N - 1) / N;

  if (threadIdx.x == 0) {
    tma::initBarrier(qFull, 1);
    for (int s = 0; s < S; ++s) {
      tma::initBarrier(kFull(s), 1);
      tma::initBarrier(vFull(s), 1);
      tma::initBarrier(kEmpty(s), kFlashTmaConsumers);
      tma::initBarrier(vEmpty(s), kFlashTmaConsumers);
    }
    tma::fenceBarrierInit();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    // Producer: K_j and V_j into stage j % S once both consumers are done
    // with tile j - S there.
    tma::lowerRegisters<24>();
    if (threadIdx.x == 0) {
      tma::prefetch(kMap);
      tma::prefetch(vMap);
      tma::expectBytes(qFull, QTile::kBytes);
#pragma unroll
      for (int panel = 0; panel < D / 64; ++panel)
        tma::load4d(sQ + panel * QTile::kPanelBytes, qMap, qFull, panel * 64, m0, h, b);
      for (int j = 0; j < tiles; ++j) {
        const int s = j % S;
        const uint32_t parity = ((j / S) & 1) ^ 1;
        tma::wait(kEmpty(s), parity);
        tma::expectBytes(kFull(s), KVTile::kBytes);
#pragma unroll
        for (int panel = 0; panel < D / 64; ++panel)
          tma::load4d(kBuf(s) + panel * KVTile::kPanelBytes, kMap, kFull(s), panel * 64,
                      j * N, kvh, b);
        tma::wait(vEmpty(s), parity);
        tma::expectBytes(vFull(s), KVTile::kBytes);
#pragma unroll
        for (int panel = 0; panel < D / 64; ++panel)
          tma::load4d(vBuf(s) + panel * KVTile::kPanelBytes, vMap, vFull(s), panel * 64,
                      j * N, kvh, b);
      }
    }
  } else {
    tma::raiseRegisters<240>();
    flashForwardTmaConsumer<T, D>(warpgroup - 1, sQ, sK, sV, qFull, tiles, m0, h, b, mask,
                                  seed, offset, out, lse, p);
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_FORWARD_TMA_CUH
