// fuse-depends: flash_common.cuh
//===- flash_backward.cuh - Flash-attention backward (FlashAttention-2) ---===//
//
// Three launches:
//  1. flashBackwardPreprocess: delta_i = dO_i . O_i (f32) and dqAccum = 0.
//  2. flashAttentionBackward: one CTA of kFlashBackwardThreads (4 warps) per
//     kFlashBlockN keys of one kv head; each warp owns 16 keys and keeps
//     their dK and dV rows in f32 registers. The CTA walks every query tile
//     (kFlashBackwardBlockM rows) of every query head that reads this kv head
//     (grouped-query attention), with Q / dO / lse / delta double-buffered
//     through shared memory, and per tile computes, in the transposed
//     (keys x queries) orientation so that no register tile is transposed:
//       S^T = K Q^T,  P^T = exp(S^T - lse),  dP^T = V dO^T,
//       dV += (P^T keep) dO,  dS^T = P^T (dP^T keep - delta) scale,
//       dK += dS^T Q,  dQ += dS K  (dS^T via shared memory, f32 atomics).
//     lse of a fully masked row is -inf; it is stored as +inf here so that
//     every probability of that row is exp(-inf) = 0, like its output.
//  3. flashBackwardConvertDq: dq = T(dqAccum).
//
// Dropout draws the forward's Philox mask again (same element indices).
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

/// dst[0] += a, dst[1] += b (8-byte aligned) in one sm_90 vector reduction:
/// half the atomic instructions of two atomicAdds.
FUSE_DEVICE void atomicAdd2(float *dst, float a, float b) {
  asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(dst), "f"(a),
               "f"(b)
               : "memory");
}

} // namespace flash

template <typename T, int D>
FUSE_DEVICE void flashBackwardPreprocess(const T *out, const T *dout, float *delta,
                                         float *dqAccum, const FlashParams &p) {
  constexpr int kChunks = D / 8; // 16-byte chunks per row; a power of 2 <= 32
  const long long headRow = static_cast<long long>(blockIdx.z * p.qHeads + blockIdx.y) * p.tq;
  const int m0 = blockIdx.x * kFlashBlockM;
#pragma unroll
  for (int c = threadIdx.x; c < kFlashBlockM * kChunks; c += kFlashThreads) {
    const int row = c / kChunks, chunk = c % kChunks, i = m0 + row;
    float sum = 0.0f;
    if (i < p.tq) {
      const long long at = (headRow + i) * D + chunk * 8;
      float a[8], b[8];
      flash::unpack8(*reinterpret_cast<const uint4 *>(out + at), T{}, a);
      flash::unpack8(*reinterpret_cast<const uint4 *>(dout + at), T{}, b);
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
    if (chunk == 0 && i < p.tq)
      delta[headRow + i] = sum;
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
    const float4 lo = reinterpret_cast<const float4 *>(dqAccum + at)[0];
    const float4 hi = reinterpret_cast<const float4 *>(dqAccum + at)[1];
    uint4 packed;
    packed.x = flash::Mma<T>::pack(lo.x, lo.y);
    packed.y = flash::Mma<T>::pack(lo.z, lo.w);
    packed.z = flash::Mma<T>::pack(hi.x, hi.y);
    packed.w = flash::Mma<T>::pack(hi.z, hi.w);
    *reinterpret_cast<uint4 *>(dq + at) = packed;
  }
}

template <typename T, int D>
FUSE_DEVICE void flashAttentionBackward(const T *q, const T *k, const T *v, const T *mask,
                                        const long long *seed, const long long *offset,
                                        const T *dout, const float *lse, const float *delta,
                                        float *dqAccum, T *dk, T *dv, const FlashParams &p) {
  using namespace flash;
  static_assert(D == 64 || D == 128, "head dim 64 or 128");
  constexpr int N = kFlashBlockN, M = kFlashBackwardBlockM, S = D + kFlashPad;
  constexpr int kThreads = kFlashBackwardThreads;
  static_assert(M == 16 * (kThreads / 32), "each warp takes 16 query rows of dQ");
  constexpr int kQTile = M * S * 2;
  extern __shared__ __align__(16) unsigned char fuseFlashShared[];

  const int n0 = blockIdx.x * N, kvh = blockIdx.y, b = blockIdx.z;
  const int group = p.qHeads / p.kvHeads;
  const long long kvRow = static_cast<long long>(b * p.kvHeads + kvh) * p.tk;
  const uint32_t sK = sharedAddress(fuseFlashShared), sV = sK + N * S * 2;
  const uint32_t sQ = sV + N * S * 2, sdO = sQ + 2 * kQTile, sdS = sdO + 2 * kQTile;
  unsigned char *dsTile = fuseFlashShared + (sdS - sK);
  float *sLse = reinterpret_cast<float *>(dsTile + N * (M + kFlashPad) * 2);
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
    const long long row = static_cast<long long>(b * p.qHeads + h) * p.tq + m0;
    loadTile<T, D, M, kThreads>(sQ + buf * kQTile, q + row * D, p.tq - m0);
    loadTile<T, D, M, kThreads>(sdO + buf * kQTile, dout + row * D, p.tq - m0);
    for (int r = threadIdx.x; r < M; r += kThreads) {
      bool ok = m0 + r < p.tq;
      float l = ok ? lse[row + r] : infinity();
      sLse[buf * M + r] = l == -infinity() ? infinity() : l * kLog2e;
      sDelta[buf * M + r] = ok ? delta[row + r] : 0.0f;
    }
  };

  loadTile<T, D, N, kThreads>(sK, k + (kvRow + n0) * D, p.tk - n0);
  loadTile<T, D, N, kThreads>(sV, v + (kvRow + n0) * D, p.tk - n0);
  if (total > 0)
    loadQueries(0, 0);
  cpAsyncCommit();
  cpAsyncWait<0>();
  __syncthreads();

  float dkAcc[D / 8][4], dvAcc[D / 8][4];
#pragma unroll
  for (int i = 0; i < D / 8; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      dkAcc[i][e] = dvAcc[i][e] = 0.0f;
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
    const uint32_t qb = sQ + buf * kQTile, dob = sdO + buf * kQTile;

    // S^T = K Q^T and dP^T = V dO^T for this warp's 16 keys.
    float st[M / 8][4], dpt[M / 8][4];
#pragma unroll
    for (int i = 0; i < M / 8; ++i)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        st[i][e] = dpt[i][e] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
      uint32_t a[4], bb[4];
      loadA<D>(sK, warp * 16, kk * 16, a);
#pragma unroll
      for (int np = 0; np < M / 16; ++np) {
        loadBNK<D>(qb, np * 16, kk * 16, bb);
        Mma<T>::run(st[2 * np], a, bb[0], bb[1]);
        Mma<T>::run(st[2 * np + 1], a, bb[2], bb[3]);
      }
      loadA<D>(sV, warp * 16, kk * 16, a);
#pragma unroll
      for (int np = 0; np < M / 16; ++np) {
        loadBNK<D>(dob, np * 16, kk * 16, bb);
        Mma<T>::run(dpt[2 * np], a, bb[0], bb[1]);
        Mma<T>::run(dpt[2 * np + 1], a, bb[2], bb[3]);
      }
    }

    // P^T keep in place of S^T, dS^T in place of dP^T.
    const bool edge = m0 + M > p.tq || n0 + N > p.tk || (p.causal && n0 + N - 1 > m0);
#pragma unroll
    for (int nt = 0; nt < M / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int c = nt * 8 + 2 * t + (e & 1), i = m0 + c, j = key0 + (e >> 1) * 8;
        float x = st[nt][e] * scaleLog2;
        if (mask && i < p.tq && j < p.tk)
          x += toFloat(mask[b * p.maskStrideB + h * p.maskStrideH +
                            i * p.maskStrideQ + j]) * kLog2e;
        if (edge && (j >= p.tk || (p.causal && j > i)))
          x = -infinity();
        float prob = exp2Approx(x - sLse[buf * M + c]);
        float keep = 1.0f;
        if (dropout && i < p.tq && j < p.tk)
          keep = dropoutKeep(dropSeed, dropOffset,
                             static_cast<uint64_t>(headRow + i) * p.tk + j,
                             p.dropoutP, keepScale);
        dpt[nt][e] = prob * (dpt[nt][e] * keep - sDelta[buf * M + c]) * p.scale;
        st[nt][e] = prob * keep;
      }

    // dV += (P^T keep) dO and dK += dS^T Q, k = this tile's queries.
#pragma unroll
    for (int kk = 0; kk < M / 16; ++kk) {
      uint32_t pa[4] = {Mma<T>::pack(st[2 * kk][0], st[2 * kk][1]),
                        Mma<T>::pack(st[2 * kk][2], st[2 * kk][3]),
                        Mma<T>::pack(st[2 * kk + 1][0], st[2 * kk + 1][1]),
                        Mma<T>::pack(st[2 * kk + 1][2], st[2 * kk + 1][3])};
      uint32_t da[4] = {Mma<T>::pack(dpt[2 * kk][0], dpt[2 * kk][1]),
                        Mma<T>::pack(dpt[2 * kk][2], dpt[2 * kk][3]),
                        Mma<T>::pack(dpt[2 * kk + 1][0], dpt[2 * kk + 1][1]),
                        Mma<T>::pack(dpt[2 * kk + 1][2], dpt[2 * kk + 1][3])};
      // dS^T to shared memory for dQ (rows = keys, columns = queries).
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = warp * 16 + g + 8 * r;
        *reinterpret_cast<uint32_t *>(dsTile + (row * (M + kFlashPad) + kk * 16 + 2 * t) * 2) = da[r];
        *reinterpret_cast<uint32_t *>(dsTile + (row * (M + kFlashPad) + kk * 16 + 8 + 2 * t) * 2) = da[2 + r];
      }
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        uint32_t bb[4];
        loadBKN<D>(dob, kk * 16, dp * 16, bb);
        Mma<T>::run(dvAcc[2 * dp], pa, bb[0], bb[1]);
        Mma<T>::run(dvAcc[2 * dp + 1], pa, bb[2], bb[3]);
        loadBKN<D>(qb, kk * 16, dp * 16, bb);
        Mma<T>::run(dkAcc[2 * dp], da, bb[0], bb[1]);
        Mma<T>::run(dkAcc[2 * dp + 1], da, bb[2], bb[3]);
      }
    }
    __syncthreads();

    // dQ (this warp's 16 queries) += dS K, 32 columns at a time.
    uint32_t dsa[N / 16][4];
#pragma unroll
    for (int kk = 0; kk < N / 16; ++kk)
      loadATransposed<M>(sdS, warp * 16, kk * 16, dsa[kk]);
    const int qi = m0 + warp * 16 + g;
#pragma unroll
    for (int d0 = 0; d0 < D; d0 += 32) {
      float acc[4][4];
#pragma unroll
      for (int i = 0; i < 4; ++i)
        acc[i][0] = acc[i][1] = acc[i][2] = acc[i][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < N / 16; ++kk)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          uint32_t bb[4];
          loadBKN<D>(sK, kk * 16, d0 + half * 16, bb);
          Mma<T>::run(acc[2 * half], dsa[kk], bb[0], bb[1]);
          Mma<T>::run(acc[2 * half + 1], dsa[kk], bb[2], bb[3]);
        }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        if (qi + 8 * r >= p.tq)
          continue;
        float *dst = dqAccum + (headRow + qi + 8 * r) * D + d0 + 2 * t;
#pragma unroll
        for (int nt = 0; nt < 4; ++nt)
          atomicAdd2(dst + nt * 8, acc[nt][2 * r], acc[nt][2 * r + 1]);
      }
    }
    cpAsyncWait<0>();
    __syncthreads();
  }

  // dK and dV rows of this warp's keys, written once.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int j = key0 + 8 * r;
    if (j >= p.tk)
      continue;
    T *dkRow = dk + (kvRow + j) * D + 2 * t, *dvRow = dv + (kvRow + j) * D + 2 * t;
#pragma unroll
    for (int dt = 0; dt < D / 8; ++dt) {
      *reinterpret_cast<uint32_t *>(dkRow + dt * 8) = Mma<T>::pack(dkAcc[dt][2 * r], dkAcc[dt][2 * r + 1]);
      *reinterpret_cast<uint32_t *>(dvRow + dt * 8) = Mma<T>::pack(dvAcc[dt][2 * r], dvAcc[dt][2 * r + 1]);
    }
  }
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_BACKWARD_CUH
