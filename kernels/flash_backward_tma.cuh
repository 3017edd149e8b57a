// fuse-depends: flash_backward.cuh tma.cuh
//===- flash_backward_tma.cuh - Warp-specialised flash backward (TMA) -----===//
//
// The key-tile kernel of the backward (flash_backward.cuh's middle launch,
// same products and semantics) with a producer warpgroup and two consumer
// warpgroups, as flash_forward_tma.cuh does for the forward. One CTA per
// kFlashBackwardTmaBlockN = 128 keys of one kv head; consumer c owns keys
// 64c .. 64c + 63 of them and keeps their dK and dV rows in f32
// accumulators. The producer brings K and V once, then per step the Q and
// dO tiles of kFlashBackwardBlockM queries (bulk tensor copies, thread 0)
// and their lse and delta rows (warp 1, which also applies the +inf / log2
// conventions), through kFlashTmaStages stages guarded by full / empty
// mbarriers. Per step each consumer computes, keys x queries,
//   S^T = K Q^T, dP^T = V dO^T, P^T, dS^T      (as flash_backward.cuh)
//   dV += (P^T keep) dO, dK += dS^T Q          (A from registers)
// writes its half of dS^T to shared memory and multiplies dQ = dS K for 64
// of dQ's columns, staging the f32 tile (swizzled) for two bulk tensor
// reductions into the accumulator: four large copies a CTA-step (one a row
// cost the backward a fifth of its time at head dim 128). Head dim 128: consumer c takes columns 64c .. over all 128 keys,
// after a named barrier (both halves written); dS^T is double-buffered, so
// one barrier a step is enough: a consumer writes buffer i % 2 at step i
// only after passing step i - 1's barrier, which the other consumer
// reaches only once its step i - 2 products that read that buffer are
// done. Head dim 64: each consumer adds its own keys' part of all 64
// columns (a barrier of its own warpgroup only, twice the reductions).
// With dropout at head dim 128 the consumers need more than their 232
// registers (Philox beside 128 accumulator values) and spill; the code
// generator runs the cp.async backward there (flashBackwardUsesTma).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_BACKWARD_TMA_CUH
#define FUSE_KERNELS_FLASH_BACKWARD_TMA_CUH

namespace fuse {

namespace flash {

/// Shared-memory map of flashAttentionBackwardTma (byte addresses).
template <int D> struct BackwardTmaLayout {
  static constexpr int N = kFlashBackwardTmaBlockN, M = kFlashBackwardBlockM,
                       S = kFlashTmaStages;
  using KVTile = wgmma::SwizzledTile<N, D>;
  using QTile = wgmma::SwizzledTile<M, D>;
  using DsTile = wgmma::SwizzledTile<N, M>;
  /// Each consumer's f32 dQ part of a step, staged for the bulk tensor
  /// reductions: 64 rows x 64 columns as two boxes of 32 columns (128-byte
  /// rows, 128-byte swizzle: 16-byte chunk c of row r at chunk c ^ (r % 8),
  /// so a warp's fragment stores spread over the banks).
  static constexpr int kDqBoxBytes = M * 32 * 4;
  static constexpr int kDqBytes = 2 * kDqBoxBytes;
  uint32_t k, v, q, dout, ds, dq, rows, barriers;
  FUSE_DEVICE explicit BackwardTmaLayout(uint32_t base) {
    k = (base + 1023) & ~1023u;
    v = k + KVTile::kBytes;
    q = v + KVTile::kBytes;              // S stages
    dout = q + S * QTile::kBytes;        // S stages
    ds = dout + S * QTile::kBytes;       // 2 buffers
    dq = ds + 2 * DsTile::kBytes;        // one per consumer
    rows = dq + kFlashTmaConsumers * kDqBytes; // lse then delta, M floats each, per stage
    barriers = rows + S * 2 * M * 4;
  }
  FUSE_DEVICE uint32_t qStage(int s) const { return q + s * QTile::kBytes; }
  FUSE_DEVICE uint32_t doStage(int s) const { return dout + s * QTile::kBytes; }
  FUSE_DEVICE uint32_t lseStage(int s) const { return rows + s * 2 * M * 4; }
  FUSE_DEVICE uint32_t deltaStage(int s) const { return lseStage(s) + M * 4; }
  FUSE_DEVICE uint32_t kvFull() const { return barriers; }
  FUSE_DEVICE uint32_t full(int s) const { return barriers + 8 * (1 + s); }
  FUSE_DEVICE uint32_t empty(int s) const { return barriers + 8 * (1 + S + s); }
};

} // namespace flash

/// One consumer warpgroup of flashAttentionBackwardTma.
template <typename T, int D>
FUSE_DEVICE void flashBackwardTmaConsumer(int group, int n0, int kvh, int b, int mStart,
                                          int total, const T *mask,
                                          const long long *seed, const long long *offset,
                                          const TensorMap &dqMap, T *dk, T *dv,
                                          const FlashParams &p) {
  using namespace flash;
  using L = BackwardTmaLayout<D>;
  constexpr int M = L::M, S = L::S;
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
  // This consumer's dQ part of a step (64 rows x 64 columns: at head dim
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
          keep = dropoutKeep(dropSeed, dropOffset,
                             static_cast<uint64_t>(headRow + i) * p.tk + j,
                             p.dropoutP, keepScale);
        const float prob = st[4 * nt + e];
        dpt[4 * nt + e] = prob * (dpt[4 * nt + e] * keep - sDelta[c]) * p.scale;
        st[4 * nt + e] = prob * keep;
      }

    uint32_t pa[M / 16][4], da[M / 16][4];
    unsigned char *dsTile = sharedPtr(dsb);
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk) {
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        pa[kk][w] = pack<T>(st[8 * kk + 2 * w], st[8 * kk + 2 * w + 1]);
        da[kk][w] = pack<T>(dpt[8 * kk + 2 * w], dpt[8 * kk + 2 * w + 1]);
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = 64 * group + warp * 16 + g + 8 * r;
        *reinterpret_cast<uint32_t *>(dsTile + L::DsTile::pair(row, kk * 16 + 2 * t)) = da[kk][r];
        *reinterpret_cast<uint32_t *>(dsTile + L::DsTile::pair(row, kk * 16 + 8 + 2 * t)) =
            da[kk][2 + r];
      }
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

    // dQ rows of this step, 64 columns: at head dim 128 consumer c takes
    // columns 64c .. over all 128 keys, once both halves of dS^T are in
    // shared memory (the barrier); at 64 each consumer adds the part of its
    // own 64 keys (its own warpgroup's barrier, twice the reductions).
    // The barrier also orders this warpgroup's own warps: each wrote 16 rows
    // of dS^T that the warpgroup's product reads.
    float acc[32];
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
    if (D == 128) {
#pragma unroll
      for (int kk = 0; kk < L::N / 16; ++kk)
        wgmma::Mma<T, 64>::template ss<1, 1>(
            acc, wgmma::mnMajor<L::N, M>(dsb, kk * 16),
            wgmma::mnMajor<L::N, D>(at.k + group * L::KVTile::kPanelBytes, kk * 16), kk > 0);
    } else {
#pragma unroll
      for (int kk = 0; kk < 64 / 16; ++kk)
        wgmma::Mma<T, 64>::template ss<1, 1>(
            acc, wgmma::mnMajor<L::N, M>(dsb, 64 * group + kk * 16),
            wgmma::mnMajor<L::N, D>(at.k, 64 * group + kk * 16), kk > 0);
    }
    wgmma::commit();
    wgmma::wait<1>();
    wgmma::pin(dvAcc);
    wgmma::pin(dkAcc);
    // Q, dO, lse and delta of this stage are no longer read.
    if (leader)
      tma::arrive(at.empty(s));
    wgmma::wait<0>();
    wgmma::pin(acc);
    {
      // Column nt * 8 + 2t of row (warp * 16 + g + 8r) sits in box nt / 4,
      // chunk ((nt % 4) * 2 + t / 2) ^ g of its 128-byte row (row % 8 is g),
      // 8 bytes in when t is odd. The XOR with g splits into a part fixed
      // per thread and (32 (nt % 4)) ^ swizzle, recomputed each step: the
      // swizzle is opaque to the compiler, which would otherwise keep all
      // sixteen addresses in registers across the loop.
      uint32_t swizzle = (g & 6) * 16;
      asm volatile("" : "+r"(swizzle));
      const uint32_t rowAddress = dqStage + (warp * 16 + g) * 128 +
                                  (((t / 2) ^ (g & 1)) * 16) + (t % 2) * 8;
#pragma unroll
      for (int r = 0; r < 2; ++r)
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
          asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(
                           rowAddress + r * 8 * 128 + (nt / 4) * L::kDqBoxBytes +
                           ((32 * (nt % 4)) ^ swizzle)),
                       "f"(acc[4 * nt + 2 * r]), "f"(acc[4 * nt + 2 * r + 1])
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

/// dK, dV of kFlashBackwardTmaBlockN keys and their contributions to dQ.
/// Grid (ceil(tk / kFlashBackwardTmaBlockN), kvHeads, batch),
/// kFlashTmaThreads threads, flashBackwardTmaSharedBytes(D). q and dout are
/// read through maps with boxes of kFlashBackwardBlockM rows, k and v with
/// boxes of kFlashBackwardTmaBlockN rows (dims as flash_forward_tma.cuh's);
/// dQ contributions are added to the f32 accumulator through dqMap (dims
/// {D, tq, batch x qHeads}, boxes of 32 x kFlashBackwardBlockM, 128-byte
/// swizzle: FlashTensorMaps.h's flashDqAccumulatorMap).
template <typename T, int D>
FUSE_DEVICE void flashAttentionBackwardTma(const TensorMap &qMap, const TensorMap &kMap,
                                           const TensorMap &vMap, const TensorMap &doMap,
                                           const TensorMap &dqMap, const T *mask,
                                           const long long *seed, const long long *offset,
                                           const float *lse, const float *delta, T *dk, T *dv,
                                           const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  using L = BackwardTmaLayout<D>;
  constexpr int M = L::M, S = L::S;
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
      tma::initBarrier(at.full(s), 1 + 32); // the copies' thread and warp 1
      tma::initBarrier(at.empty(s), kFlashTmaConsumers);
    }
    tma::fenceBarrierInit();
  }
  __syncthreads();

  if (threadIdx.x < 128) {
    // 32, not the forward's 24: warp 1's lse / delta loop spills at 24.
    // 32 x 128 + 232 x 256 threads fit the 64K registers.
    tma::lowerRegisters<32>();
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x == 0) {
      tma::expectBytes(at.kvFull(), 2 * L::KVTile::kBytes);
#pragma unroll
      for (int panel = 0; panel < D / 64; ++panel) {
        tma::load4d(at.k + panel * L::KVTile::kPanelBytes, kMap, at.kvFull(), panel * 64, n0,
                    kvh, b);
        tma::load4d(at.v + panel * L::KVTile::kPanelBytes, vMap, at.kvFull(), panel * 64, n0,
                    kvh, b);
      }
      for (int it = 0; it < total; ++it) {
        const int s = it % S, h = kvh * headGroup + it / tilesPerHead;
        const int m0 = mStart + (it % tilesPerHead) * M;
        tma::wait(at.empty(s), ((it / S) & 1) ^ 1);
        tma::expectBytes(at.full(s), 2 * L::QTile::kBytes);
#pragma unroll
        for (int panel = 0; panel < D / 64; ++panel) {
          tma::load4d(at.qStage(s) + panel * L::QTile::kPanelBytes, qMap, at.full(s),
                      panel * 64, m0, h, b);
          tma::load4d(at.doStage(s) + panel * L::QTile::kPanelBytes, doMap, at.full(s),
                      panel * 64, m0, h, b);
        }
      }
    } else if (warp == 1) {
      // lse in the log2 domain (-inf, a fully masked row, as +inf so that
      // its probabilities are 0) and delta; rows past tq get +inf and 0.
      for (int it = 0; it < total; ++it) {
        const int s = it % S, h = kvh * headGroup + it / tilesPerHead;
        const int m0 = mStart + (it % tilesPerHead) * M;
        const long long row = static_cast<long long>(b * p.qHeads + h) * p.tq + m0;
        tma::wait(at.empty(s), ((it / S) & 1) ^ 1);
        float *sLse = reinterpret_cast<float *>(fuseFlashShared + (at.lseStage(s) - sharedBase));
        float *sDelta =
            reinterpret_cast<float *>(fuseFlashShared + (at.deltaStage(s) - sharedBase));
#pragma unroll
        for (int r = lane; r < M; r += 32) {
          const bool ok = m0 + r < p.tq;
          const float l = ok ? lse[row + r] : infinity();
          sLse[r] = l == -infinity() ? infinity() : l * kLog2e;
          sDelta[r] = ok ? delta[row + r] : 0.0f;
        }
        tma::arrive(at.full(s));
      }
    }
  } else {
    tma::raiseRegisters<232>();
    flashBackwardTmaConsumer<T, D>(threadIdx.x / 128 - 1, n0, kvh, b, mStart, total, mask,
                                   seed, offset, dqMap, dk, dv, p);
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_BACKWARD_TMA_CUH
