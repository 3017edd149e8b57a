// fuse-depends: flash_wgmma.cuh tma.cuh
//===- flash_forward_tma.cuh - Warp-specialised flash forward (TMA) -------===//
//
// The forward of flash_forward.cuh (same semantics, same fragments and
// online softmax) restructured as FlashAttention-3 is, so that the tensor
// cores never wait for loads or for a CTA barrier:
//   - warpgroup 0 is the producer: one thread asks the copy engine for
//     each item's Q tile (kFlashTmaQueryBuffers buffers) and then for its K
//     and V tiles through kFlashTmaStages shared buffers each, each buffer guarded by a "full" mbarrier (the copy's
//     bytes complete it) and an "empty" one (both consumers arrive when
//     their products have read it). It keeps 24 registers (setmaxnreg;
//     its loops stay rolled to fit them).
//   - warpgroups 1 and 2 consume, 64 query rows each, with 240 registers:
//     S = Q K^T, softmax, O += P V, with one tile's P V in flight while the
//     next tile's softmax runs (intra-warpgroup overlap); the softmax takes
//     the scale inside its exp2 and rescales O only in the steps where a
//     row's maximum moved (onlineSoftmaxRows), since it is the path the
//     other consumer's products must hide, and
//   - the two consumers issue their products in turn (two named barriers,
//     "ping-pong"), so one's softmax runs while the other's products own
//     the tensor cores.
// The launch is persistent: a CTA works through query tiles (items) one
// after the other (flashPersistentItem), the producer loading the next
// item's Q into a second buffer and its K and V through the same stages, and
// the consumers running on from one item's last key tile into the next
// one's first: the step that issues an item's first Q K^T also issues the
// previous item's last P V, and that item's output is normalised and
// written (through a shared tile of its own) while the new scores wait for
// nothing, so the tensor cores see no gap between items. A grid of one CTA
// per item (the runtime's grid before it caps it at the multiprocessors)
// runs the same code one item a CTA.
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

/// Where flashAttentionForwardTma keeps its tiles and mbarriers in shared
/// memory, and the items it works through.
template <int D> struct FlashForwardTmaLayout {
  static constexpr int M = kFlashBlockM, N = kFlashTmaBlockN, S = kFlashTmaStages;
  static constexpr int Q = kFlashTmaQueryBuffers;
  using QTile = wgmma::SwizzledTile<M, D>;
  using KVTile = wgmma::SwizzledTile<N, D>;
  uint32_t sQ, sK, sV, sO, barriers;
  int tiles, items; // query tiles of a head; tiles x heads x batch
  bool headMajor;   // the numbering of causal items (causalHeadMajor)

  FUSE_DEVICE FlashForwardTmaLayout(uint32_t sharedBase, const FlashParams &p) {
    sQ = (sharedBase + 1023) & ~1023u;
    sK = sQ + Q * QTile::kBytes;
    sV = sK + S * KVTile::kBytes;
    sO = sV + S * KVTile::kBytes;
    barriers = sO + QTile::kBytes;
    tiles = (p.tq + M - 1) / M;
    items = tiles * p.qHeads * p.batch;
    headMajor = flash::causalHeadMajor(p, D, gridDim.x);
  }
  // Q full and empty per buffer, then K full, V full, K empty, V empty per
  // stage. The item of round r has Q buffer r % Q, in phase qParity(r).
  FUSE_DEVICE uint32_t qFull(int round) const { return barriers + 8 * (round % Q); }
  FUSE_DEVICE uint32_t qEmpty(int round) const { return barriers + 8 * (Q + round % Q); }
  FUSE_DEVICE uint32_t qBuf(int round) const { return sQ + (round % Q) * QTile::kBytes; }
  FUSE_DEVICE static uint32_t qParity(int round) { return (round / Q) & 1; }
  FUSE_DEVICE uint32_t kFull(int s) const { return barriers + 8 * (2 * Q + s); }
  FUSE_DEVICE uint32_t vFull(int s) const { return barriers + 8 * (2 * Q + S + s); }
  FUSE_DEVICE uint32_t kEmpty(int s) const { return barriers + 8 * (2 * Q + 2 * S + s); }
  FUSE_DEVICE uint32_t vEmpty(int s) const { return barriers + 8 * (2 * Q + 3 * S + s); }
  FUSE_DEVICE uint32_t kBuf(int s) const { return sK + s * KVTile::kBytes; }
  FUSE_DEVICE uint32_t vBuf(int s) const { return sV + s * KVTile::kBytes; }

  /// This CTA's item of round `round`: query row m0, head and batch;
  /// m0 is -1 past its last item.
  struct Item {
    int round, m0, h, b;
  };
  FUSE_DEVICE Item item(int round, const FlashParams &p) const {
    const int index = flash::flashPersistentItem(round, items);
    if (index < 0)
      return {round, -1, 0, 0};
    const flash::FlashBlock block =
        flash::flashForwardItem(index, tiles, p.qHeads, p.batch, p.causal, headMajor);
    return {round, block.tile * M, block.head, block.batch};
  }
  /// The key tiles of the item at query row m0. Computed apart from item()
  /// so that without causal masking it folds to a constant (the shapes are
  /// literals): the loop over key tiles then has a known trip count, as in
  /// a one-item kernel.
  FUSE_DEVICE static int keyTiles(int m0, const FlashParams &p) {
    const int kvEnd = p.causal ? min(p.tk, m0 + M) : p.tk;
    return (kvEnd + N - 1) / N;
  }
  /// The key tile of step j out of `tiles`: last to first. The last tile is
  /// the only one that can hold keys to mask out: past tk, or (causal, with
  /// M == N and query tiles at multiples of M) right of the diagonal, as
  /// every earlier tile ends at or before m0. Taking it first puts the
  /// masking in the step the consumers peel off the loop, so the loop itself
  /// runs no per-score tests (FlashAttention-3 splits its loop the same way).
  FUSE_DEVICE static int keyTile(int j, int tiles) { return tiles - 1 - j; }
  static_assert(M == N, "one key tile per query tile crosses the causal diagonal");
};

/// One consumer warpgroup of flashAttentionForwardTma: for each item, query
/// rows m0 + 64 group .. + 63 against the key tiles the producer delivers.
/// The steps run across items without a break: the step that issues the
/// first Q K^T of an item also issues the last P V of the one before, and
/// that item's output is normalised and stored while the new scores'
/// softmax waits on nothing, so the tensor cores see no item boundary.
template <typename T, int D>
FUSE_DEVICE void flashForwardTmaConsumer(int group, const FlashForwardTmaLayout<D> &smem,
                                         const T *mask, const long long *seed,
                                         const long long *offset, T *out, float *lse,
                                         const FlashParams &p) {
  using namespace flash;
  using Layout = FlashForwardTmaLayout<D>;
  constexpr int M = Layout::M, N = Layout::N, S = Layout::S;
  using QTile = typename Layout::QTile;
  using Item = typename Layout::Item;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];
  const uint32_t sharedBase = sharedAddress(fuseFlashShared);

  const int tid = threadIdx.x - 128;
  const int warp = tid / 32, lane = tid % 32;
  const int rowInTile = group * 64 + (warp % 4) * 16;
  const int g = lane / 4, t = lane % 4;
  const bool releases = tid % 128 == 0; // one arrival per consumer

  // Ping-pong: consumer c issues its products after passing named barrier
  // 1 + c, then lets the other go, over all items in turn. Consumer 0 goes
  // first; the other skips its very last hand-over so that no arrival is
  // left pending. (Barrier ids are immediates so that ptxas reserves only
  // these.) Every item has a key tile when there are keys at all.
  auto awaitTurn = [&]() {
    if (group == 0)
      tma::namedSync<1>(2 * 128);
    else
      tma::namedSync<2>(2 * 128);
  };
  auto passTurn = [&](bool last) {
    if (group == 0)
      tma::namedArrive<2>(2 * 128);
    else if (!last)
      tma::namedArrive<1>(2 * 128);
  };
  // Consumer 1's last turn issues the last tile of the CTA's last item.
  auto lastTurn = [&](const Item &it, int j) {
    return group == 1 && j + 1 == Layout::keyTiles(it.m0, p) &&
           smem.item(it.round + 1, p).m0 < 0;
  };

  const ScoreScale scale = scoreScale(p.scale);
  const bool dropout = p.dropoutP > 0.0f;
  const uint64_t dropSeed = dropout ? static_cast<uint64_t>(*seed) : 0;
  const uint64_t dropOffset = dropout ? static_cast<uint64_t>(*offset) : 0;
  const float keepScale = 1.0f / (1.0f - p.dropoutP);
  auto headRowOf = [&](const Item &it) {
    return static_cast<long long>(it.b * p.qHeads + it.h) * p.tq;
  };

  float o[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i)
    o[i] = 0.0f;
  float rowMax[2] = {-infinity(), -infinity()}, rowSum[2] = {0.0f, 0.0f};
  float s[N / 2];         // scores of the tile just issued, then its probabilities
  uint32_t pa[N / 16][4]; // probabilities of the tile whose P V is in flight

  // Key tiles are counted over all items: the c-th goes through stage
  // c % S in phase (c / S) & 1.
  auto stageOf = [](int c) { return c % S; };
  auto parityOf = [](int c) { return static_cast<uint32_t>((c / S) & 1); };
  auto issueScores = [&](const Item &it, int c) {
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, N>::template ss<0, 0>(
          s, wgmma::kMajor<M, D>(smem.qBuf(it.round), group * 64, kk * 16),
          wgmma::kMajor<N, D>(smem.kBuf(stageOf(c)), 0, kk * 16), kk > 0);
    wgmma::commit();
  };
  auto issueValues = [&](int c) {
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(o, pa[kk],
                                       wgmma::mnMajor<N, D>(smem.vBuf(stageOf(c)), kk * 16), 1);
    wgmma::commit();
  };
  // Once the scores of step j (tile c overall) are in registers, K_c is
  // free, and after an item's last Q K^T so is its Q buffer.
  auto releaseScored = [&](const Item &it, int j, int c) {
    if (releases) {
      tma::arrive(smem.kEmpty(stageOf(c)));
      if (j + 1 == Layout::keyTiles(it.m0, p))
        tma::arrive(smem.qEmpty(it.round));
    }
  };

  // Scores of step j of `it` to probabilities (online softmax); alpha[r]
  // rescales what O and the row sums held before, and the result says
  // whether any of this warp's rows need it. Only an item's first step can
  // hold keys to mask out (`first`; see keyTile).
  auto softmax = [&](const Item &it, int j, float(&alpha)[2], bool first) {
    const int n0 = Layout::keyTile(j, Layout::keyTiles(it.m0, p)) * N;
    const int row0 = it.m0 + rowInTile + g; // this thread's rows: row0, row0 + 8
    const bool edge =
        first && (n0 + N > p.tk || (p.causal && n0 + N - 1 > it.m0 + rowInTile));
#pragma unroll
    for (int nt = 0; nt < N / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = row0 + (e >> 1) * 8, jj = n0 + nt * 8 + 2 * t + (e & 1);
        float x = s[4 * nt + e] * scale.pre;
        if (mask && i < p.tq && jj < p.tk)
          x += maskValue(mask[it.b * p.maskStrideB + it.h * p.maskStrideH + i * p.maskStrideQ +
                              jj]) *
               scale.mask;
        if (edge && (jj >= p.tk || (p.causal && jj > i)))
          x = -infinity();
        s[4 * nt + e] = x;
      }
    const bool moved = onlineSoftmaxRows(s, scale.factor, rowMax, rowSum, alpha);
    if (dropout)
      dropoutProbabilities(s, row0, n0, t, headRowOf(it), p, dropSeed, dropOffset, keepScale);
    return __any_sync(0xffffffffu, moved);
  };

  // An item's rows are complete: its log-sum-exp out, inverse[r] to
  // normalise O, and the row state reset for the next item.
  auto finishRows = [&](const Item &it, float(&inverse)[2]) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float sum = rowSum[r];
      sum += __shfl_xor_sync(0xffffffffu, sum, 1);
      sum += __shfl_xor_sync(0xffffffffu, sum, 2);
      inverse[r] = sum > 0.0f ? 1.0f / sum : 0.0f;
      const int i = it.m0 + rowInTile + g + 8 * r;
      if (t == 0 && i < p.tq)
        lse[headRowOf(it) + i] =
            sum > 0.0f ? rowMax[r] * (1.0f / kLog2e) + logf(sum) : -infinity();
      rowMax[r] = -infinity();
      rowSum[r] = 0.0f;
    }
  };
  // O normalised, through the warp's own 16 rows of the output tile for
  // 16-byte stores, then cleared for the next item.
  // The lane is made opaque here so that the compiler computes the staging
  // addresses where they are used: hoisted out of the loops that call this,
  // they would hold some twenty registers that the loops need.
  auto storeOutput = [&](const Item &it, const float(&inverse)[2]) {
    unsigned char *stage = fuseFlashShared + (smem.sO - sharedBase);
    int myLane = lane;
    asm volatile("" : "+r"(myLane));
    const int myG = myLane / 4, myT = myLane % 4;
#pragma unroll
    for (int r = 0; r < 2; ++r)
#pragma unroll
      for (int dt = 0; dt < D / 8; ++dt)
        *reinterpret_cast<uint32_t *>(stage +
                                      QTile::pair(rowInTile + myG + 8 * r, dt * 8 + 2 * myT)) =
            pack<T>(o[4 * dt + 2 * r] * inverse[r], o[4 * dt + 2 * r + 1] * inverse[r]);
    __syncwarp();
    constexpr int kChunks = D / 8;
#pragma unroll
    for (int c = myLane; c < 16 * kChunks; c += 32) {
      const int row = rowInTile + c / kChunks, chunk = c % kChunks;
      const int i = it.m0 + row;
      if (i < p.tq)
        *reinterpret_cast<uint4 *>(out + p.o.at(it.b, it.h, i) + chunk * 8) =
            *reinterpret_cast<const uint4 *>(stage + QTile::chunk(row, chunk));
    }
    __syncwarp(); // the staged rows are read before the next item writes them
#pragma unroll
    for (int i = 0; i < D / 2; ++i)
      o[i] = 0.0f;
  };

  if (p.tk == 0) {
    // No keys: every row is empty (O = 0, lse = -inf); Q is still loaded
    // and released item by item.
    for (int round = 0;; ++round) {
      const Item it = smem.item(round, p);
      if (it.m0 < 0)
        return;
      tma::wait(smem.qFull(round), Layout::qParity(round));
      if (releases)
        tma::arrive(smem.qEmpty(round));
      float inverse[2];
      finishRows(it, inverse);
      storeOutput(it, inverse);
    }
  }
  Item current = smem.item(0, p);
  if (current.m0 < 0)
    return;
  if (group == 1)
    tma::namedArrive<1>(2 * 128);

  // The first item's first step: its scores alone.
  {
    float alpha[2];
    tma::wait(smem.qFull(0), Layout::qParity(0));
    tma::wait(smem.kFull(stageOf(0)), parityOf(0));
    awaitTurn();
    wgmma::fence();
    issueScores(current, 0);
    passTurn(lastTurn(current, 0));
    wgmma::wait<0>();
    wgmma::pin(s);
    releaseScored(current, 0, 0);
    softmax(current, 0, alpha, true);
    packProbabilities<T>(s, pa);
  }
  int c = 1; // key tiles whose scores have been issued
  // Step j of `it`: the scores of its tile c beside the P V of tile c - 1,
  // which is the last of `previous` when j is 0 (`boundary`).
  auto step = [&](const Item &it, int j, bool boundary, const Item &previous) {
    if (boundary)
      tma::wait(smem.qFull(it.round), Layout::qParity(it.round));
    tma::wait(smem.kFull(stageOf(c)), parityOf(c));
    tma::wait(smem.vFull(stageOf(c - 1)), parityOf(c - 1));
    awaitTurn();
    wgmma::pin(o);
    wgmma::fence();
    issueScores(it, c);
    issueValues(c - 1);
    passTurn(lastTurn(it, j));
    wgmma::wait<1>();
    wgmma::pin(s);
    releaseScored(it, j, c);
    float alpha[2], inverse[2];
    if (boundary)
      finishRows(previous, inverse);
    const bool rescale = softmax(it, j, alpha, boundary);
    wgmma::wait<0>();
    wgmma::pin(o);
    if (releases)
      tma::arrive(smem.vEmpty(stageOf(c - 1)));
    if (boundary)
      storeOutput(previous, inverse);
    else if (rescale)
      rescaleRows(o, alpha);
    packProbabilities<T>(s, pa);
    ++c;
  };
  for (;;) {
    for (int j = 1, tiles = Layout::keyTiles(current.m0, p); j < tiles; ++j)
      step(current, j, false, current);
    const Item next = smem.item(current.round + 1, p);
    if (next.m0 < 0)
      break;
    step(next, 0, true, current);
    current = next;
  }
  // The last item's last P V.
  tma::wait(smem.vFull(stageOf(c - 1)), parityOf(c - 1));
  wgmma::pin(o);
  wgmma::fence();
  issueValues(c - 1);
  wgmma::wait<0>();
  wgmma::pin(o);
  if (releases)
    tma::arrive(smem.vEmpty(stageOf(c - 1)));
  float inverse[2];
  finishRows(current, inverse);
  storeOutput(current, inverse);
}

template <typename T, int D>
FUSE_DEVICE void flashAttentionForwardTma(const TensorMap &qMap, const TensorMap &kMap,
                                          const TensorMap &vMap, const T *mask,
                                          const long long *seed, const long long *offset, T *out,
                                          float *lse, const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  using Layout = FlashForwardTmaLayout<D>;
  constexpr int S = Layout::S;
  using QTile = typename Layout::QTile;
  using KVTile = typename Layout::KVTile;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];
  const Layout smem(sharedAddress(fuseFlashShared), p);

  if (threadIdx.x == 0) {
    for (int buffer = 0; buffer < Layout::Q; ++buffer) {
      tma::initBarrier(smem.qFull(buffer), 1);
      tma::initBarrier(smem.qEmpty(buffer), kFlashTmaConsumers);
    }
    for (int s = 0; s < S; ++s) {
      tma::initBarrier(smem.kFull(s), 1);
      tma::initBarrier(smem.vFull(s), 1);
      tma::initBarrier(smem.kEmpty(s), kFlashTmaConsumers);
      tma::initBarrier(smem.vEmpty(s), kFlashTmaConsumers);
    }
    tma::fenceBarrierInit();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    // Producer: each item's Q once both consumers are done with the one
    // kFlashTmaQueryBuffers items back, then its K_j and V_j into the stage of the c-th key tile
    // (counted over items) once both consumers are done with tile c - S
    // there.
    tma::lowerRegisters<24>();
    if (threadIdx.x == 0) {
      tma::prefetch(qMap);
      tma::prefetch(kMap);
      tma::prefetch(vMap);
      int issued = 0;
#pragma unroll 1
      for (int round = 0;; ++round) {
        const typename Layout::Item it = smem.item(round, p);
        if (it.m0 < 0)
          break;
        const int kvh = it.h / (p.qHeads / p.kvHeads);
        // The tile at row `row` of head `head` (this item's batch) of `map`
        // into `buffer`, once `empty` has passed phase `parity` (the
        // consumers are done with what the buffer held).
        auto load = [&](uint32_t buffer, int bytes, int panelBytes, const TensorMap &map,
                        uint32_t full, uint32_t empty, uint32_t parity, int row, int head) {
          tma::wait(empty, parity);
          tma::expectBytes(full, bytes);
#pragma unroll
          for (int panel = 0; panel < D / 64; ++panel)
            tma::load4d(buffer + panel * panelBytes, map, full, panel * 64, row, head, it.b);
        };
        load(smem.qBuf(round), QTile::kBytes, QTile::kPanelBytes, qMap, smem.qFull(round),
             smem.qEmpty(round), Layout::qParity(round) ^ 1, it.m0, it.h);
#pragma unroll 1
        for (int j = 0, tiles = Layout::keyTiles(it.m0, p); j < tiles; ++j, ++issued) {
          const int s = issued % S;
          const uint32_t parity = ((issued / S) & 1) ^ 1;
          const int n0 = Layout::keyTile(j, tiles) * Layout::N;
          load(smem.kBuf(s), KVTile::kBytes, KVTile::kPanelBytes, kMap, smem.kFull(s),
               smem.kEmpty(s), parity, n0, kvh);
          load(smem.vBuf(s), KVTile::kBytes, KVTile::kPanelBytes, vMap, smem.vFull(s),
               smem.vEmpty(s), parity, n0, kvh);
        }
      }
    }
  } else {
    tma::raiseRegisters<240>();
    flashForwardTmaConsumer<T, D>(warpgroup - 1, smem, mask, seed, offset, out, lse, p);
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_FORWARD_TMA_CUH
