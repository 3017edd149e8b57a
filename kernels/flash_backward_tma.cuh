// fuse-depends: flash_backward.cuh tma.cuh flash_dropout_bits.cuh
//===- flash_backward_tma.cuh - Warp-specialised flash backward (TMA) -----===//
//
// The key-tile kernel of the backward (flash_backward.cuh's middle launch,
// same products and semantics) with a producer warpgroup and two consumer
// warpgroups, as flash_forward_tma.cuh does for the forward. One CTA per
// kFlashBackwardTmaBlockN = 128 keys of one kv head; consumer c owns keys
// 64c .. 64c + 63 of them and keeps their dK and dV rows in f32
// accumulators. M = flashBackwardTmaBlockM(D, causal, dropout) query rows a step:
// 80 at head dim 128 without causal masking or dropout, else 64. The producer's
// thread 0 brings K and V once, then per step the Q and dO tiles of M
// queries (bulk tensor copies) and their row-statistics record (lse in the
// log2 domain and delta, as flashBackwardPreprocess<T, D, M> wrote it: one
// plain bulk copy), through kFlashTmaStages stages guarded by full / empty
// mbarriers; it needs 24 registers, which leaves the consumers 240 (24 x
// 128 + 240 x 256 = the 168 x 384 the CTA starts with; setmaxnreg.inc
// can only take what the decrements gave back). Per step each consumer
// computes, keys x queries,
//   S^T = K Q^T, dP^T = V dO^T, P^T, dS^T      (m64 x nM; as flash_backward.cuh)
//   dV += (P^T keep) dO, dK += dS^T Q          (A from registers)
// stores its 64 keys of dS to shared memory, queries x keys (stmatrix.trans
// of the dS^T fragments), and multiplies dQ^T = K^T dS^T for 64 of dQ's
// columns (m64 = columns, so that M = 80 still fits wgmma), staging the
// f32 tile (swizzled, element by element) for two bulk tensor reductions
// into the accumulator: four large copies a CTA-step (one a row cost the
// backward a fifth of its time at head dim 128). Head dim 128: consumer c
// takes columns 64c .. over all 128 keys, after a named barrier (both
// halves written); dS is double-buffered, so one barrier a step is enough:
// a consumer writes buffer i % 2 at step i only after passing step i - 1's
// barrier, which the other consumer reaches only once its step i - 2
// products that read that buffer are done. Head dim 64: each consumer adds
// its own keys' part of all 64 columns (a barrier of its own warpgroup
// only, twice the reductions). Dropout at head dim 128 takes 64 rows a
// step: Philox beside the 128 accumulator values fits the consumers' 240
// registers there, not at 80.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_BACKWARD_TMA_CUH
#define FUSE_KERNELS_FLASH_BACKWARD_TMA_CUH

namespace fuse {

namespace flash {

/// Shared-memory map of flashAttentionBackwardTma<T, D, M> (byte addresses).
template <int D, int M_> struct BackwardTmaLayout {
  static constexpr int N = kFlashBackwardTmaBlockN, M = M_, S = kFlashTmaStages;
  using KVTile = wgmma::SwizzledTile<N, D>;
  using QTile = wgmma::SwizzledTile<M, D>;
  /// dS, queries x keys (dQ^T's B operand, keys along the row).
  using DsTile = wgmma::SwizzledTile<M, N>;
  /// Each consumer's f32 dQ part of a step, staged for the bulk tensor
  /// reductions: M rows x 64 columns as two boxes of 32 columns (128-byte
  /// rows, 128-byte swizzle: 16-byte chunk c of row r at chunk c ^ (r % 8),
  /// so a warp's fragment stores spread over the banks).
  static constexpr int kDqBoxBytes = M * 32 * 4;
  static constexpr int kDqBytes = 2 * kDqBoxBytes;
  /// A step's row statistics (flash::rowStatsOffset): lse then delta.
  static constexpr int kRowStatsBytes = 2 * M * 4;
  uint32_t k, v, q, dout, ds, dq, rows, barriers;
  FUSE_DEVICE explicit BackwardTmaLayout(uint32_t base) {
    k = (base + 1023) & ~1023u;
    v = k + KVTile::kBytes;
    q = v + KVTile::kBytes;              // S stages
    dout = q + S * QTile::kBytes;        // S stages
    ds = dout + S * QTile::kBytes;       // 2 buffers
    dq = ds + 2 * DsTile::kBytes;        // one per consumer
    rows = dq + kFlashTmaConsumers * kDqBytes; // a row-statistics record per stage
    barriers = rows + S * kRowStatsBytes;
  }
  FUSE_DEVICE uint32_t qStage(int s) const { return q + s * QTile::kBytes; }
  FUSE_DEVICE uint32_t doStage(int s) const { return dout + s * QTile::kBytes; }
  FUSE_DEVICE uint32_t lseStage(int s) const { return rows + s * kRowStatsBytes; }
  FUSE_DEVICE uint32_t deltaStage(int s) const { return lseStage(s) + M * 4; }
  FUSE_DEVICE uint32_t kvFull() const { return barriers; }
  FUSE_DEVICE uint32_t full(int s) const { return barriers + 8 * (1 + s); }
  FUSE_DEVICE uint32_t empty(int s) const { return barriers + 8 * (1 + S + s); }
};

} // namespace flash

/// One consumer warpgroup of flashAttentionBackwardTma.
template <typename T, int D, int M>
FUSE_DEVICE void flashBackwardTmaConsumer(int group, int n0, int kvh, int b, int mStart,
                                          int total, const T *mask,
                                          const long long *seed, const long long *offset,
                                          const uint64_t *keepBits, const TensorMap &dqMap,
                                          T *dk, T *dv, const FlashParams &p) {
  using namespace flash;
  using L = BackwardTmaLayout<D, M>;
  constexpr int S = L::S;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];
  const uint32_t sharedBase = sharedAddress(fuseFlashShared);
  const L at(sharedBase);
  auto sharedPtr = [&](uint32_t address) { return fuseFlashShared + (address - sharedBase); };

  const int tid = threadIdx.x - 128 * (1 + group);
  const int warp = tid / 32, lane = tid % 32;
  const int g = lane / 4, t = lane % 4;
  const int headGroup = p.qHeads / p.kvHeads;
  const int keyBase = n0 + 64 * group;       // this consumer's 64 keys
  const int key0 = keyBase + warp * 16 + g;  // this thread's: key0, key0 + 8
  const bool leader = tid == 0; // releases stages, issues dQ's reductions

  float dkAcc[D / 2], dvAcc[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i)
    dkAcc[i] = dvAcc[i] = 0.0f;
  const float scaleLog2 = p.scale * kLog2e;
  const bool dropout = p.dropoutP > 0.0f;
  const uint64_t dropSeed = dropout ? static_cast<uint64_t>(*seed) : 0;
  const uint64_t dropOffset = dropout ? static_cast<uint64_t>(*offset) : 0;
  const float keepScale = 1.0f / (1.0f - p.dropoutP);
  // This consumer's dQ part of a step (M rows x 64 columns: at head dim
  // 128 its half of the columns over all 128 keys, at 64 all columns over
  // its own keys) goes to dqAccum as two boxes of 32 columns through dqMap
  // (dims {D, tq, batch x qHeads}: rows past tq are dropped), issued by
  // its first thread.
  const uint32_t dqStage = at.dq + group * L::kDqBytes;
  const int dqColumn0 = D == 128 ? 64 * group : 0;

  tma::wait(at.kvFull(), 0);
  // Steps run over each query head of the group, its query tiles from
  // mStart (counters: no divisions).
  int h = kvh * headGroup, m0 = mStart;
  for (int it = 0; it < total; ++it, m0 += M) {
    if (m0 >= p.tq) {
      m0 = mStart;
      ++h;
    }
    const int s = it % S;
    const long long headRow = static_cast<long long>(b * p.qHeads + h) * p.tq;
    const uint32_t qb = at.qStage(s), dob = at.doStage(s), dsb = at.ds + (it & 1) * L::DsTile::kBytes;
    const float *sLse = reinterpret_cast<const float *>(sharedPtr(at.lseStage(s)));
    const float *sDelta = reinterpret_cast<const float *>(sharedPtr(at.deltaStage(s)));
    tma::wait(at.full(s), (it / S) & 1);

    float st[M / 2], dpt[M / 2];
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, M>::template ss<0, 0>(st, wgmma::kMajor<L::N, D>(at.k, 64 * group, kk * 16),
                                          wgmma::kMajor<M, D>(qb, 0, kk * 16), kk > 0);
    wgmma::commit();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, M>::template ss<0, 0>(dpt, wgmma::kMajor<L::N, D>(at.v, 64 * group, kk * 16),
                                          wgmma::kMajor<M, D>(dob, 0, kk * 16), kk > 0);
    wgmma::commit();
    // The step's dropout decisions while the tensor cores run both products:
    // read from the keep mask where one was drawn before this kernel, else
    // drawn here (at head dim 64; at 128 per score below).
    const uint64_t stepBits =
        keepBits ? maskStepKeepBits<M>(keepBits, b * p.qHeads + h, m0, key0, t, p)
                 : backwardStepKeepBits<D, M>(dropout, headRow + m0 + 2 * t, key0, lane, p,
                                              dropSeed, dropOffset);
    wgmma::wait<1>();
    wgmma::pin(st);

    const bool edge =
        m0 + M > p.tq || keyBase + 64 > p.tk || (p.causal && keyBase + 63 > m0);
    // P^T, then dS^T: the same arithmetic as flash_backward.cuh's loops,
    // written out again because every shared helper tried (pointer or flag
    // for the mask) made the head-dim-128 consumer spill 4-8 bytes.
    const T *maskRows = mask ? mask + b * p.maskStrideB + h * p.maskStrideH : nullptr;
#pragma unroll
    for (int nt = 0; nt < M / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = nt * 8 + 2 * t + (e & 1), i = m0 + c, j = key0 + (e >> 1) * 8;
        float x = st[4 * nt + e] * scaleLog2;
        if (mask && i < p.tq && j < p.tk)
          x += maskValue(maskRows[i * p.maskStrideQ + j]) * kLog2e;
        if (edge && (j >= p.tk || (p.causal && j > i)))
          x = -infinity();
        st[4 * nt + e] = exp2Approx(x - sLse[c]);
      }
    wgmma::wait<0>();
    wgmma::pin(dpt);
#pragma unroll
    for (int nt = 0; nt < M / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = nt * 8 + 2 * t + (e & 1), i = m0 + c, j = key0 + (e >> 1) * 8;
        float keep = 1.0f;
        if (dropout && i < p.tq && j < p.tk)
          keep = backwardKeepFactor<D>(keepBits != nullptr, stepBits, 4 * nt + e,
                                       static_cast<uint64_t>(headRow + i) * p.tk + j, p, dropSeed,
                                       dropOffset, keepScale);
        const float prob = st[4 * nt + e];
        dpt[4 * nt + e] = prob * (dpt[4 * nt + e] * keep - sDelta[c]) * p.scale;
        st[4 * nt + e] = prob * keep;
      }

    // dS goes to shared memory queries x keys, each 16 x 16 block of the
    // dS^T fragments stored transposed (stmatrix): lane 8i + j addresses
    // query row 16 kk + j + 8 (i / 2), keys 8 (i % 2) .. of this warp's 16.
    uint32_t pa[M / 16][4], da[M / 16][4];
    const int dsRow = lane % 8 + 8 * (lane / 16);
    const uint32_t dsChunk = dsb + L::DsTile::chunk(dsRow, (64 * group + 16 * warp) / 8 +
                                                               (lane / 8) % 2);
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk) {
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        pa[kk][w] = pack<T>(st[8 * kk + 2 * w], st[8 * kk + 2 * w + 1]);
        da[kk][w] = pack<T>(dpt[8 * kk + 2 * w], dpt[8 * kk + 2 * w + 1]);
      }
      // Rows 16 kk on keep row % 8 and the chunk's swizzle.
      wgmma::storeTransposed(dsChunk + kk * 16 * 128, da[kk][0], da[kk][1], da[kk][2],
                             da[kk][3]);
    }
    wgmma::asyncProxyFence();

    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(dvAcc, pa[kk], wgmma::mnMajor<M, D>(dob, kk * 16), 1);
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(dkAcc, da[kk], wgmma::mnMajor<M, D>(qb, kk * 16), 1);
    wgmma::commit();

    // dQ^T of this step (64 of dQ's columns x M query rows, so that a step
    // of 80 queries still fits wgmma's m64): at head dim 128 consumer c
    // takes columns 64c .. over all 128 keys, once both halves of dS are in
    // shared memory (the barrier); at 64 each consumer adds the part of its
    // own 64 keys (its own warpgroup's barrier, twice the reductions). The
    // barrier also orders this warpgroup's own warps: each wrote 16 keys of
    // dS that the warpgroup's product reads.
    float acc[M / 2];
    // The staged dQ tile is rewritten below: its last reduction must have
    // read it (every thread passes the barrier after the issuer's wait).
    if (leader)
      bulkWaitRead();
    if (D == 128)
      tma::namedSync<1>(2 * 128);
    else if (group == 0)
      tma::namedSync<2>(128);
    else
      tma::namedSync<3>(128);
    wgmma::fence();
    {
      constexpr int kKeys = D == 128 ? L::N : 64;
      const int key0 = D == 128 ? 0 : 64 * group;
      const uint32_t kPanel = at.k + (D == 128 ? group * L::KVTile::kPanelBytes : 0);
#pragma unroll
      for (int kk = 0; kk < kKeys / 16; ++kk)
        wgmma::Mma<T, M>::template ss<1, 0>(acc, wgmma::mnMajor<L::N, D>(kPanel, key0 + kk * 16),
                                            wgmma::kMajor<M, L::N>(dsb, 0, key0 + kk * 16),
                                            kk > 0);
    }
    wgmma::commit();
    wgmma::wait<1>();
    wgmma::pin(dvAcc);
    wgmma::pin(dkAcc);
    // Q, dO and the row statistics of this stage are no longer read.
    if (leader)
      tma::arrive(at.empty(s));
    wgmma::wait<0>();
    wgmma::pin(acc);
    {
      // acc[4 nt + e] is dQ (query 8 nt + 2t + e % 2, column 16 warp + g +
      // 8 (e / 2)) of this consumer's 64: box warp / 2, 16-byte chunk
      // (4 (warp % 2) + g / 4 + 2 (e / 2)) ^ (query % 8) of the query's
      // 128-byte row, word g % 4. The chunk splits into a part fixed per
      // thread and (2 (e / 2)) ^ (e % 2), so the stores need no per-element
      // arithmetic beyond a constant.
      const uint32_t chunk0 = (4 * (warp % 2) + g / 4) ^ (2 * t);
      const uint32_t base = dqStage + (warp / 2) * L::kDqBoxBytes + 2 * t * 128 + (g % 4) * 4;
#pragma unroll
      for (int nt = 0; nt < M / 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e)
          asm volatile("st.shared.f32 [%0], %1;\n" ::"r"(
                           base + (8 * nt + (e & 1)) * 128 +
                           ((chunk0 ^ (2 * (e >> 1) + (e & 1))) << 4)),
                       "f"(acc[4 * nt + e])
                       : "memory");
    }
    wgmma::asyncProxyFence();
    if (group == 0)
      tma::namedSync<2>(128);
    else
      tma::namedSync<3>(128);
    if (leader) {
      const int headBatch = b * p.qHeads + h;
      tma::reduceAdd3d(dqMap, dqStage, dqColumn0, m0, headBatch);
      tma::reduceAdd3d(dqMap, dqStage + L::kDqBoxBytes, dqColumn0 + 32, m0, headBatch);
    }
  }
  if (leader)
    bulkWaitRead(); // shared memory must outlive the reductions' reads

#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int j = key0 + 8 * r;
    if (j >= p.tk)
      continue;
    T *dkRow = dk + p.dk.at(b, kvh, j) + 2 * t, *dvRow = dv + p.dv.at(b, kvh, j) + 2 * t;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      *reinterpret_cast<uint32_t *>(dkRow + dt * 8) =
          pack<T>(dkAcc[4 * dt + 2 * r], dkAcc[4 * dt + 2 * r + 1]);
      *reinterpret_cast<uint32_t *>(dvRow + dt * 8) =
          pack<T>(dvAcc[4 * dt + 2 * r], dvAcc[4 * dt + 2 * r + 1]);
    }
  }
}

/// dK, dV of kFlashBackwardTmaBlockN keys and their contributions to dQ,
/// M = flashBackwardTmaBlockM(D, causal, dropout) query rows a step.
/// Grid (ceil(tk / kFlashBackwardTmaBlockN), kvHeads, batch),
/// kFlashTmaThreads threads, flashBackwardTmaSharedBytes(D, M). q and dout
/// are read through maps with boxes of M rows, k and v with boxes of
/// kFlashBackwardTmaBlockN rows (dims as flash_forward_tma.cuh's); the row
/// statistics are flashBackwardPreprocess<T, D, M>'s; dQ contributions are
/// added to the f32 accumulator through dqMap (dims {D, tq, batch x
/// qHeads}, boxes of 32 x M, 128-byte swizzle: FlashTensorMaps.h's
/// flashDqAccumulatorMap).
template <typename T, int D, int M>
FUSE_DEVICE void flashAttentionBackwardTma(const TensorMap &qMap, const TensorMap &kMap,
                                           const TensorMap &vMap, const TensorMap &doMap,
                                           const TensorMap &dqMap, const T *mask,
                                           const long long *seed, const long long *offset,
                                           const uint64_t *keepBits, const float *rowStats,
                                           T *dk, T *dv, const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  static_assert(M == 64 || (M == 80 && D == 128), "wgmma n64 or n80; 80 fits at 128 only");
  using L = BackwardTmaLayout<D, M>;
  constexpr int S = L::S;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];
  const uint32_t sharedBase = sharedAddress(fuseFlashShared);
  const L at(sharedBase);

  const int n0 = blockIdx.x * L::N, kvh = blockIdx.y, b = blockIdx.z;
  const int headGroup = p.qHeads / p.kvHeads;
  // Causal: query tiles before the one holding query n0 see none of these keys.
  const int mStart = p.causal ? (n0 / M) * M : 0;
  const int tilesPerHead = mStart < p.tq ? (p.tq - mStart + M - 1) / M : 0;
  const int total = headGroup * tilesPerHead;

  if (threadIdx.x == 0) {
    tma::initBarrier(at.kvFull(), 1);
    for (int s = 0; s < S; ++s) {
      tma::initBarrier(at.full(s), 1); // the copies' thread
      tma::initBarrier(at.empty(s), kFlashTmaConsumers);
    }
    tma::fenceBarrierInit();
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    // The producer's one thread issues every copy: 24 registers are
    // plenty, and 24 x 128 + 240 x 256 is the 168 x 384 the CTA was
    // launched with (setmaxnreg.inc waits for registers the group's
    // decrements released, so asking for more never returns).
    tma::lowerRegisters<24>();
    if (threadIdx.x == 0) {
      tma::expectBytes(at.kvFull(), 2 * L::KVTile::kBytes);
#pragma unroll
      for (int panel = 0; panel < D / 64; ++panel) {
        tma::load4d(at.k + panel * L::KVTile::kPanelBytes, kMap, at.kvFull(), panel * 64, n0,
                    kvh, b);
        tma::load4d(at.v + panel * L::KVTile::kPanelBytes, vMap, at.kvFull(), panel * 64, n0,
                    kvh, b);
      }
      // Running pointers, no divisions in the loop: the producer has 24
      // registers.
      const long long headStride = static_cast<long long>((p.tq + M - 1) / M) * 2 * M;
      const float *headStats = rowStats + rowStatsOffset<M>(p, b * p.qHeads + kvh * headGroup,
                                                            mStart);
      const float *record = headStats;
      int h = kvh * headGroup, m0 = mStart;
#pragma unroll 1
      for (int it = 0; it < total; ++it, m0 += M, record += 2 * M) {
        if (m0 >= p.tq) {
          m0 = mStart;
          ++h;
          headStats += headStride;
          record = headStats;
        }
        const int s = it % S;
        tma::wait(at.empty(s), ((it / S) & 1) ^ 1);
        tma::expectBytes(at.full(s), 2 * L::QTile::kBytes + L::kRowStatsBytes);
#pragma unroll
        for (int panel = 0; panel < D / 64; ++panel) {
          tma::load4d(at.qStage(s) + panel * L::QTile::kPanelBytes, qMap, at.full(s),
                      panel * 64, m0, h, b);
          tma::load4d(at.doStage(s) + panel * L::QTile::kPanelBytes, doMap, at.full(s),
                      panel * 64, m0, h, b);
        }
        tma::loadBulk(at.lseStage(s), record, L::kRowStatsBytes, at.full(s));
      }
    }
  } else {
    tma::raiseRegisters<240>();
    flashBackwardTmaConsumer<T, D, M>(threadIdx.x / 128 - 1, n0, kvh, b, mStart, total, mask,
                                   seed, offset, keepBits, dqMap, dk, dv, p);
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_BACKWARD_TMA_CUH
