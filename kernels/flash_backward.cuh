// fuse-depends: flash_wgmma.cuh
//===- flash_backward.cuh - Flash-attention backward (wgmma) --------------===//
//
// Three launches:
//  1. flashBackwardPreprocess: dqAccum = 0 and the row statistics the
//     key-tile kernels read, one record of 2 x kFlashBackwardBlockM floats
//     a query tile (flash::rowStatsOffset): lse in the log2 domain, then
//     delta_i = dO_i . O_i (f32). Rows past tq, to the tile's end, get lse
//     +inf and delta 0, so that their probabilities are 0 and every record
//     is whole: the TMA kernel copies one with a single bulk copy.
//  2. flashAttentionBackward: one CTA of kFlashBackwardThreads (one
//     warpgroup) per kFlashBlockN = 64 keys of one kv head; warp w owns keys
//     16w .. 16w + 15 and keeps their dK and dV rows in f32 wgmma
//     accumulators. The CTA walks every query tile (kFlashBackwardBlockM
//     rows) of every query head that reads this kv head (grouped-query
//     attention), with Q / dO / row statistics double-buffered through shared
//     memory, and per tile computes, in the transposed (keys x queries)
//     orientation so that no register tile is transposed:
//       S^T = K Q^T,  dP^T = V dO^T            (wgmma, both from shared)
//       P^T = exp(S^T - lse),  dS^T = P^T (dP^T keep - delta) scale
//       dV += (P^T keep) dO,  dK += dS^T Q      (A from registers; dO and Q
//                                                read MN-major)
//       dQ += dS K                              (dS^T staged in shared and
//                                                read MN-major; each dQ row
//                                                added to the f32 accumulator
//                                                by one bulk reduction)
//     Two CTAs (three at head dim 64) fit on a multiprocessor, so one's
//     softmax overlaps another's matrix products. lse of a fully masked
//     row is -inf; the preprocess stores it as +inf so that every
//     probability of that row is exp(-inf) = 0, like its output. Dropout draws the
//     forward's Philox mask again (same element indices).
//  3. flashBackwardConvertDq: dq = T(dqAccum).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_BACKWARD_CUH
#define FUSE_KERNELS_FLASH_BACKWARD_CUH

namespace fuse {

namespace flash {

FUSE_DEVICE void unpack8(uint4 raw, bf16, float *out) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = bitsAsFloat(w[i] << 16);
    out[2 * i + 1] = bitsAsFloat(w[i] & 0xFFFF0000u);
  }
}
FUSE_DEVICE void unpack8(uint4 raw, f16, float *out) {
  const uint32_t w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    out[2 * i] = toFloat(f16{static_cast<unsigned short>(w[i] & 0xFFFFu)});
    out[2 * i + 1] = toFloat(f16{static_cast<unsigned short>(w[i] >> 16)});
  }
}

/// global[0 .. bytes) += shared[0 .. bytes) (f32), element by element and
/// atomically, by the copy engine: one instruction for a whole row of dQ
/// instead of a vector atomic per two elements. Completes as a bulk group.
FUSE_DEVICE void bulkReduceAdd(float *global, uint32_t shared, uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n"
               ::"l"(global), "r"(shared), "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
/// Waits until the bulk groups of this thread have read their shared memory.
FUSE_DEVICE void bulkWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

/// Float offset of the row-statistics record of query rows m0 .. m0 + M - 1
/// (m0 a multiple of M, the reading kernel's rows a step) of head
/// `headBatch` (b x qHeads + h): lse (log2 domain) of the record's rows,
/// then their delta.
template <int M>
FUSE_DEVICE long long rowStatsOffset(const FlashParams &p, int headBatch, int m0) {
  return (static_cast<long long>(headBatch) * ((p.tq + M - 1) / M) + m0 / M) * (2 * M);
}

} // namespace flash

/// Grid (ceil(ceil(tq / M) M / kFlashBlockM), qHeads, batch): every row of
/// every record, padding included. M is the key-tile kernel's query rows a
/// step (kFlashBackwardBlockM, or flashBackwardTmaBlockM).
template <typename T, int D, int M>
FUSE_DEVICE void flashBackwardPreprocess(const T *out, const T *dout, const float *lse,
                                         float *rowStats, float *dqAccum, const FlashParams &p) {
  constexpr int kChunks = D / 8; // 16-byte chunks per row; a power of 2 <= 32
  const int headBatch = blockIdx.z * p.qHeads + blockIdx.y;
  const long long headRow = static_cast<long long>(headBatch) * p.tq;
  const int m0 = blockIdx.x * kFlashBlockM;
  const int paddedRows = (p.tq + M - 1) / M * M;
#pragma unroll
  for (int c = threadIdx.x; c < kFlashBlockM * kChunks; c += kFlashThreads) {
    const int row = c / kChunks, chunk = c % kChunks, i = m0 + row;
    float sum = 0.0f;
    if (i < p.tq) {
      const long long at = (headRow + i) * D + chunk * 8;
      float a[8], b[8];
      flash::unpack8(*reinterpret_cast<const uint4 *>(out + p.o.at(blockIdx.z, blockIdx.y, i) +
                                                      chunk * 8), T{}, a);
      flash::unpack8(*reinterpret_cast<const uint4 *>(dout + p.dout.at(blockIdx.z, blockIdx.y, i) +
                                                      chunk * 8), T{}, b);
#pragma unroll
      for (int e = 0; e < 8; ++e)
        sum += a[e] * b[e];
      float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      reinterpret_cast<float4 *>(dqAccum + at)[0] = zero;
      reinterpret_cast<float4 *>(dqAccum + at)[1] = zero;
    }
#pragma unroll
    for (int o = kChunks / 2; o > 0; o /= 2)
      sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (chunk == 0 && i < paddedRows) {
      float *record = rowStats + flash::rowStatsOffset<M>(p, headBatch, i - i % M);
      const float l = i < p.tq ? lse[headRow + i] : -infinity();
      record[i % M] = l == -infinity() ? infinity() : l * flash::kLog2e;
      record[M + i % M] = sum;
    }
  }
}

template <typename T, int D>
FUSE_DEVICE void flashBackwardConvertDq(const float *dqAccum, T *dq, const FlashParams &p) {
  constexpr int kChunks = D / 8;
  const long long headRow = static_cast<long long>(blockIdx.z * p.qHeads + blockIdx.y) * p.tq;
  const int m0 = blockIdx.x * kFlashBlockM;
  for (int c = threadIdx.x; c < kFlashBlockM * kChunks; c += kFlashThreads) {
    const int i = m0 + c / kChunks;
    if (i >= p.tq)
      continue;
    const long long at = (headRow + i) * D + (c % kChunks) * 8;
    const long long to = p.dq.at(blockIdx.z, blockIdx.y, i) + (c % kChunks) * 8;
    const float4 lo = reinterpret_cast<const float4 *>(dqAccum + at)[0];
    const float4 hi = reinterpret_cast<const float4 *>(dqAccum + at)[1];
    uint4 packed;
    packed.x = flash::pack<T>(lo.x, lo.y);
    packed.y = flash::pack<T>(lo.z, lo.w);
    packed.z = flash::pack<T>(hi.x, hi.y);
    packed.w = flash::pack<T>(hi.z, hi.w);
    *reinterpret_cast<uint4 *>(dq + to) = packed;
  }
}

template <typename T, int D>
FUSE_DEVICE void flashAttentionBackward(const T *q, const T *k, const T *v,
                                             const T *mask, const long long *seed,
                                             const long long *offset, const T *dout,
                                             const float *rowStats, float *dqAccum, T *dk,
                                             T *dv,
                                             const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  constexpr int N = kFlashBlockN, M = kFlashBackwardBlockM;
  static_assert(N == 64 && M == 64 && kFlashBackwardThreads == 128,
                "one warpgroup: 64 keys x 64 queries per step");
  using KVTile = wgmma::SwizzledTile<N, D>;
  using QTile = wgmma::SwizzledTile<M, D>;
  using DsTile = wgmma::SwizzledTile<N, M>;
  extern __shared__ __align__(1024) unsigned char fuseFlashShared[];

  const int n0 = blockIdx.x * N, kvh = blockIdx.y, b = blockIdx.z;
  const int group = p.qHeads / p.kvHeads;
  const uint32_t sharedBase = sharedAddress(fuseFlashShared);
  const uint32_t sK = (sharedBase + 1023) & ~1023u, sV = sK + KVTile::kBytes;
  // Q and dO of one buffer are adjacent: once a step's products are done,
  // the pair stages that step's f32 dQ tile (M x D x 4 bytes).
  const uint32_t sQ = sV + KVTile::kBytes;
  const uint32_t sdS = sQ + 4 * QTile::kBytes;
  unsigned char *dsTile = fuseFlashShared + (sdS - sharedBase);
  float *sLse = reinterpret_cast<float *>(dsTile + DsTile::kBytes);
  float *sDelta = sLse + 2 * M;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;

  // Causal: query tiles before the first one holding query n0 see none of
  // these keys.
  const int mStart = p.causal ? (n0 / M) * M : 0;
  const int tilesPerHead = mStart < p.tq ? (p.tq - mStart + M - 1) / M : 0;
  const int total = group * tilesPerHead;

  auto loadQueries = [&](int it, int buf) {
    const int h = kvh * group + it / tilesPerHead;
    const int m0 = mStart + (it % tilesPerHead) * M;
    wgmma::loadTile<T, M, D, kFlashBackwardThreads>(sQ + 2 * buf * QTile::kBytes,
                                                    q + p.q.at(b, h, m0), p.q.t, p.tq - m0);
    wgmma::loadTile<T, M, D, kFlashBackwardThreads>(
        sQ + (2 * buf + 1) * QTile::kBytes, dout + p.dout.at(b, h, m0), p.dout.t, p.tq - m0);
    const float *record = rowStats + rowStatsOffset<M>(p, b * p.qHeads + h, m0);
    for (int r = threadIdx.x; r < M; r += kFlashBackwardThreads) {
      sLse[buf * M + r] = record[r];
      sDelta[buf * M + r] = record[M + r];
    }
  };

  wgmma::loadTile<T, N, D, kFlashBackwardThreads>(sK, k + p.k.at(b, kvh, n0), p.k.t, p.tk - n0);
  wgmma::loadTile<T, N, D, kFlashBackwardThreads>(sV, v + p.v.at(b, kvh, n0), p.v.t, p.tk - n0);
  if (total > 0)
    loadQueries(0, 0);
  cpAsyncCommit();
  cpAsyncWait<0>();
  wgmma::asyncProxyFence();
  __syncthreads();

  float dkAcc[D / 2], dvAcc[D / 2];
#pragma unroll
  for (int i = 0; i < D / 2; ++i)
    dkAcc[i] = dvAcc[i] = 0.0f;
  const float scaleLog2 = p.scale * kLog2e;
  const bool dropout = p.dropoutP > 0.0f;
  const uint64_t dropSeed = dropout ? static_cast<uint64_t>(*seed) : 0;
  const uint64_t dropOffset = dropout ? static_cast<uint64_t>(*offset) : 0;
  const float keepScale = 1.0f / (1.0f - p.dropoutP);
  const int key0 = n0 + warp * 16 + g; // this thread's keys: key0, key0 + 8

  for (int it = 0; it < total; ++it) {
    const int buf = it & 1;
    if (it + 1 < total)
      loadQueries(it + 1, buf ^ 1);
    cpAsyncCommit();
    const int h = kvh * group + it / tilesPerHead;
    const int m0 = mStart + (it % tilesPerHead) * M;
    const long long headRow = static_cast<long long>(b * p.qHeads + h) * p.tq;
    const uint32_t qb = sQ + 2 * buf * QTile::kBytes, dob = qb + QTile::kBytes;

    // S^T = K Q^T, then dP^T = V dO^T: the probabilities are computed while
    // the second product runs.
    float st[M / 2], dpt[M / 2];
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, M>::template ss<0, 0>(st, wgmma::kMajor<N, D>(sK, 0, kk * 16),
                                          wgmma::kMajor<M, D>(qb, 0, kk * 16), kk > 0);
    wgmma::commit();
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk)
      wgmma::Mma<T, M>::template ss<0, 0>(dpt, wgmma::kMajor<N, D>(sV, 0, kk * 16),
                                          wgmma::kMajor<M, D>(dob, 0, kk * 16), kk > 0);
    wgmma::commit();
    // The step's dropout decisions while the tensor cores run both products.
    const uint64_t keepBits = backwardStepKeepBits<D, M>(dropout, headRow + m0 + 2 * t, key0, lane,
                                                         p, dropSeed, dropOffset);
    wgmma::wait<1>();
    wgmma::pin(st);

    // P^T (undropped) in place of S^T.
    const bool edge = m0 + M > p.tq || n0 + N > p.tk || (p.causal && n0 + N - 1 > m0);
#pragma unroll
    for (int nt = 0; nt < M / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = nt * 8 + 2 * t + (e & 1), i = m0 + c, j = key0 + (e >> 1) * 8;
        float x = st[4 * nt + e] * scaleLog2;
        if (mask && i < p.tq && j < p.tk)
          x += toFloat(mask[b * p.maskStrideB + h * p.maskStrideH +
                            i * p.maskStrideQ + j]) * kLog2e;
        if (edge && (j >= p.tk || (p.causal && j > i)))
          x = -infinity();
        st[4 * nt + e] = exp2Approx(x - sLse[buf * M + c]);
      }
    wgmma::wait<0>();
    wgmma::pin(dpt);

    // dS^T in place of dP^T, P^T keep in place of P^T.
#pragma unroll
    for (int nt = 0; nt < M / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = nt * 8 + 2 * t + (e & 1), i = m0 + c, j = key0 + (e >> 1) * 8;
        float keep = 1.0f;
        if (dropout && i < p.tq && j < p.tk)
          keep = backwardKeepFactor<D>(false, keepBits, 4 * nt + e,
                                       static_cast<uint64_t>(headRow + i) * p.tk + j, p, dropSeed,
                                       dropOffset, keepScale);
        const float prob = st[4 * nt + e];
        dpt[4 * nt + e] = prob * (dpt[4 * nt + e] * keep - sDelta[buf * M + c]) * p.scale;
        st[4 * nt + e] = prob * keep;
      }

    // Repack as A fragments (k = this tile's queries); dS^T also to shared
    // memory, where dQ's product reads it transposed.
    uint32_t pa[M / 16][4], da[M / 16][4];
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk) {
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        pa[kk][w] = pack<T>(st[8 * kk + 2 * w], st[8 * kk + 2 * w + 1]);
        da[kk][w] = pack<T>(dpt[8 * kk + 2 * w], dpt[8 * kk + 2 * w + 1]);
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = warp * 16 + g + 8 * r;
        *reinterpret_cast<uint32_t *>(dsTile + DsTile::pair(row, kk * 16 + 2 * t)) = da[kk][r];
        *reinterpret_cast<uint32_t *>(dsTile + DsTile::pair(row, kk * 16 + 8 + 2 * t)) =
            da[kk][2 + r];
      }
    }

    // dV += (P^T keep) dO and dK += dS^T Q.
    wgmma::fence();
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(dvAcc, pa[kk], wgmma::mnMajor<M, D>(dob, kk * 16), 1);
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk)
      wgmma::Mma<T, D>::template rs<1>(dkAcc, da[kk], wgmma::mnMajor<M, D>(qb, kk * 16), 1);
    wgmma::commit();
    wgmma::asyncProxyFence();
    __syncthreads();

    // dQ (this tile's 64 queries) += dS K, 64 columns at a time; A = dS is
    // the dS^T tile read MN-major, B = K read MN-major. Each part is staged
    // in f32 over this step's Q and dO (their products are done once the
    // first wait returns), then every row is added to the accumulator in
    // global memory by one bulk reduction.
    unsigned char *dqTile = fuseFlashShared + (qb - sharedBase);
#pragma unroll
    for (int c = 0; c < D / 64; ++c) {
      float acc[32];
      wgmma::fence();
#pragma unroll
      for (int kk = 0; kk < N / 16; ++kk)
        wgmma::Mma<T, 64>::template ss<1, 1>(
            acc, wgmma::mnMajor<N, M>(sdS, kk * 16),
            wgmma::mnMajor<N, D>(sK + c * KVTile::kPanelBytes, kk * 16), kk > 0);
      wgmma::commit();
      wgmma::wait<0>();
      wgmma::pin(acc);
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float *row = reinterpret_cast<float *>(dqTile) + (warp * 16 + g + 8 * r) * D + c * 64;
#pragma unroll
        for (int nt = 0; nt < 8; ++nt)
          *reinterpret_cast<float2 *>(row + nt * 8 + 2 * t) =
              make_float2(acc[4 * nt + 2 * r], acc[4 * nt + 2 * r + 1]);
      }
    }
    wgmma::asyncProxyFence();
    __syncthreads();
    if (threadIdx.x < M && m0 + static_cast<int>(threadIdx.x) < p.tq)
      bulkReduceAdd(dqAccum + (headRow + m0 + threadIdx.x) * D, qb + threadIdx.x * D * 4,
                    D * 4);
    wgmma::pin(dvAcc);
    wgmma::pin(dkAcc);
    if (threadIdx.x < M)
      bulkWaitRead(); // the next step loads over the staged dQ
    cpAsyncWait<0>();
    wgmma::asyncProxyFence();
    __syncthreads();
  }

  // dK and dV rows of this warp's keys, written once.
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

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_BACKWARD_CUH
