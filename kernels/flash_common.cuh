// fuse-depends: common.cuh philox.cuh
//===- flash_common.cuh - Pieces shared by the flash-attention kernels ---===//
//
// The parameters, tile sizes and small device helpers of flash_forward.cuh
// and flash_backward.cuh (the tensor-core side is flash_wgmma.cuh). NVRTC
// compiles these with no include path, so everything is inline PTX rather
// than <cuda_bf16.h>.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_COMMON_CUH
#define FUSE_KERNELS_FLASH_COMMON_CUH

namespace fuse {

/// Forward: query rows per CTA (two warpgroups of 64). Backward: key rows
/// per CTA (one warpgroup) and query rows per inner step. Threads of each.
/// Mirrored on the host by include/fuse/Codegen/FlashAttentionConfig.h
/// (checked by a unit test).
constexpr int kFlashBlockM = 128;
constexpr int kFlashBlockN = 64;
constexpr int kFlashBackwardBlockM = 64;
constexpr int kFlashThreads = 256;
constexpr int kFlashBackwardThreads = 128;

/// Forward: key rows per inner step. 64 at head dim 64 keeps a CTA under
/// 128 registers a thread, so two CTAs share a multiprocessor and one's
/// softmax overlaps the other's products; 128 at head dim 128, where the
/// products are long enough to hide it within the CTA.
FUSE_HOST_DEVICE constexpr int flashForwardBlockN(int headDim) {
  return headDim == 64 ? 64 : 128;
}

/// Dynamic shared memory of the forward: the Q tile, two K and two V tiles,
/// and 1 KiB to align the swizzled tiles (flash_wgmma.cuh).
FUSE_HOST_DEVICE constexpr int flashForwardSharedBytes(int headDim) {
  return (kFlashBlockM + 4 * flashForwardBlockN(headDim)) * headDim * 2 + 1024;
}

/// Dynamic shared memory of the backward: K, V, two Q and two dO tiles, the
/// dS^T tile, two lse and two delta rows (f32), and 1 KiB to align. Small
/// enough for two CTAs a multiprocessor at head dim 128.
FUSE_HOST_DEVICE constexpr int flashBackwardSharedBytes(int headDim) {
  return (2 * kFlashBlockN + 4 * kFlashBackwardBlockM) * headDim * 2 +
         kFlashBlockN * kFlashBackwardBlockM * 2 + 4 * kFlashBackwardBlockM * 4 + 1024;
}

/// The warp-specialised forward (flash_forward_tma.cuh): a producer
/// warpgroup and two consumers of 64 query rows, key tiles of 128 rows
/// through two shared stages each for K and V.
constexpr int kFlashTmaConsumers = 2;
constexpr int kFlashTmaThreads = 128 * (1 + kFlashTmaConsumers);
constexpr int kFlashTmaBlockN = 128;
constexpr int kFlashTmaStages = 2;
/// Query tiles the persistent forward keeps: the next item's Q loads while
/// the consumers finish the current one's.
constexpr int kFlashTmaQueryBuffers = 2;

/// Its dynamic shared memory: the Q buffers, the K and V stages, the output
/// tile, 1 KiB to align the swizzled tiles and the mbarriers (Q full and
/// empty per buffer; K / V full / empty per stage). 230,496 bytes at head
/// dim 128, within the 227 KiB a CTA may have.
FUSE_HOST_DEVICE constexpr int flashForwardTmaSharedBytes(int headDim) {
  return ((kFlashTmaQueryBuffers + 1) * kFlashBlockM + 2 * kFlashTmaStages * kFlashTmaBlockN) *
             headDim * 2 +
         1024 + 8 * (2 * kFlashTmaQueryBuffers + 4 * kFlashTmaStages);
}

/// The warp-specialised backward (flash_backward_tma.cuh): keys per CTA,
/// 64 for each consumer.
constexpr int kFlashBackwardTmaBlockN = 128;

/// Its query rows per step: 80 at head dim 128 without causal masking or
/// dropout, 64 otherwise (Philox beside 80 rows would spill). A step's products are a quarter longer at 80 for the same
/// waits, barriers and dQ reductions a step, and the S^T and dP^T products
/// (n = query rows) read fewer shared bytes per flop; causal key tiles cut
/// at a 64-row step boundary, so 64 wastes less on the diagonal there
/// (FlashAttention-3 chooses the same). 80 x 2 stages fit only at 128's
/// budget because the dS and dQ staging tiles scale with it too.
FUSE_HOST_DEVICE constexpr int flashBackwardTmaBlockM(int headDim, bool causal, bool dropout) {
  return headDim == 128 && !causal && !dropout ? 80 : 64;
}

/// Its dynamic shared memory at `blockM` query rows a step: K and V tiles,
/// the Q and dO stages, two dS buffers, each consumer's f32 dQ staging
/// (blockM rows of 64 floats), the row-statistics stages, 1 KiB to align
/// and the mbarriers (K / V full; full and empty per stage). 198,696 bytes
/// at head dim 128 and 64 rows, 231,720 at 80 (of the 232,448 a CTA may
/// have).
FUSE_HOST_DEVICE constexpr int flashBackwardTmaSharedBytes(int headDim, int blockM) {
  return 2 * kFlashBackwardTmaBlockN * headDim * 2 + 2 * kFlashTmaStages * blockM * headDim * 2 +
         2 * kFlashBackwardTmaBlockN * blockM * 2 + kFlashTmaConsumers * blockM * 64 * 4 +
         kFlashTmaStages * 2 * blockM * 4 + 1024 + 8 * (1 + 2 * kFlashTmaStages);
}

/// Where row t of head h of batch b of a [batch, heads, rows, D] operand
/// starts, in elements; D is contiguous. The code generator passes the
/// strides of the buffer the operand lives in, so q / k / v can be read
/// straight out of a [B, T, H, D] projection and dq / dk / dv written into
/// one, with no layout kernel around the attention.
struct FlashStrides {
  long long b, h, t;
  FUSE_HOST_DEVICE long long at(int batch, int head, long long row) const {
    return batch * b + head * h + row * t;
  }
};

struct FlashParams {
  int batch, qHeads, kvHeads, tq, tk; // q [batch, qHeads, tq, D], k/v [batch, kvHeads, tk, D]
  float scale;
  bool causal; // query i sees keys j <= i (top-left aligned)
  // Additive mask[b, h, i, j] at b * maskStrideB + h * maskStrideH +
  // i * maskStrideQ + j (elements); a stride of 0 broadcasts.
  long long maskStrideB, maskStrideH, maskStrideQ;
  float dropoutP;
  // Layouts of the operands (the forward reads q, k, v and writes o; the
  // backward also reads dout and o and writes dq, dk, dv). lse, delta and
  // the dQ accumulator are the kernels' own contiguous [batch, qHeads, tq].
  FlashStrides q, k, v, o, dout, dq, dk, dv;
};

namespace flash {

constexpr float kLog2e = 1.4426950408889634f;

/// The (query tile, head, batch) of forward work item `item` out of
/// tiles x heads x batch. The hardware starts blocks in linear order (and a
/// persistent CTA takes its items in that order too), so the numbering
/// decides both the tail of the launch and which items share K and V
/// through L2.
///   - Non-causal: tile fastest. The items running together are all the
///     query tiles of a few heads, which read the same K and V.
///   - Causal: tile slowest, longest first over the whole launch, so that
///     the longest items (the last query tiles, which see the most keys) do
///     not start at the end and form its tail; or, when `headMajor`
///     (causalHeadMajor), head by head, each head's tiles longest first.
/// (The backward keeps blockIdx.x as its key tile, which already starts
/// each head's longest block first: numbered this way its causal forward +
/// backward did not gain, 406 -> 389 and 328 -> 306 TFLOP/s at head dim 128
/// on an H200, one run each.)
struct FlashBlock {
  int tile, head, batch;
};
FUSE_DEVICE FlashBlock flashForwardItem(int item, int tiles, int heads, int batch, bool causal,
                                        bool headMajor = false) {
  if (!causal)
    return {item % tiles, (item / tiles) % heads, item / (tiles * heads)};
  if (headMajor) {
    const int headBatch = item / tiles;
    return {tiles - 1 - item % tiles, headBatch % heads, headBatch / heads};
  }
  const int rank = item / (heads * batch), rest = item % (heads * batch);
  return {tiles - 1 - rank, rest % heads, rest / heads};
}

/// Whether a persistent causal forward running `concurrent` items at a
/// time numbers them head-major. Numbered tile slowest, the items in flight
/// belong to min(heads x batch, concurrent) heads; with fewer than two of a
/// head in flight, and the K and V of those heads past what L2 keeps
/// (32 MiB of the H100's 50 and the H200's 60), every K and V tile comes
/// from DRAM once per item: at (4, 32, 2048, 128) that is 4.6 TB/s, the
/// H200's whole bandwidth. Head-major, a head's items run together and
/// share its K and V; the persistent launch's snake (flashPersistentItem)
/// keeps the tail within 3% of the mean CTA load either way at the bench
/// shapes. (A launch of one CTA per item keeps tile slowest: the hardware
/// would start a head-major launch's last head's longest items last.)
FUSE_DEVICE bool causalHeadMajor(const FlashParams &p, int headDim, int concurrent) {
  const int heads = p.qHeads * p.batch;
  const long long headsInFlight = min(heads, concurrent);
  const long long kvBytes =
      headsInFlight * p.tk * headDim * 4 / (p.qHeads / p.kvHeads); // K and V, 16-bit
  return p.causal && 2 * heads > concurrent && kvBytes > (32ll << 20);
}

/// The item of a (tiles, heads, batch) grid's block.
FUSE_DEVICE FlashBlock flashForwardBlock(bool causal) {
  const int linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  return flashForwardItem(linear, gridDim.x, gridDim.y, gridDim.z, causal);
}

/// A persistent launch's item for this CTA in round `round` (0, 1, ...), or
/// -1 past the last of `items`: CTA c takes c, then 2 G - 1 - c, 2 G + c,
/// ... with G = gridDim.x. Rounds alternate direction ("snake") so that
/// with items numbered longest first, the CTA with the longest item of one
/// round has the shortest of the next, which evens out a CTA's total work
/// (within 2% of the mean at (1, 32, 8192) causal, where plain round robin
/// leaves one CTA 8% over it). A grid of `items` CTAs is the plain launch:
/// one item each.
FUSE_DEVICE int flashPersistentItem(int round, int items) {
  const int column = round % 2 == 0 ? blockIdx.x : gridDim.x - 1 - blockIdx.x;
  const long long item = static_cast<long long>(round) * gridDim.x + column;
  return item < items ? static_cast<int>(item) : -1;
}

FUSE_DEVICE uint32_t sharedAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// 16 bytes global -> shared, bypassing L1; zero-filled when !valid (the
/// source is then not read, but must still be a mapped address).
FUSE_DEVICE void cpAsync16(uint32_t dst, const void *src, bool valid) {
  int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(bytes));
}
FUSE_DEVICE void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> FUSE_DEVICE void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

/// Two f32 values rounded to one packed pair of T (lo in the low half):
/// an A fragment word of the tensor cores, or two adjacent outputs.
template <typename T> FUSE_DEVICE uint32_t pack(float lo, float hi);
template <> FUSE_DEVICE uint32_t pack<bf16>(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}
template <> FUSE_DEVICE uint32_t pack<f16>(float lo, float hi) {
  uint32_t r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
  return r;
}

/// An additive mask element as f32. For f16 a bare cvt: toFloat's NaN
/// payload repair costs registers the warp-specialised forward does not
/// have, and any NaN in a row's scores makes the row NaN whatever its
/// payload.
FUSE_DEVICE float maskValue(bf16 v) { return toFloat(v); }
FUSE_DEVICE float maskValue(f16 v) {
  float r;
  asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(v.bits));
  return r;
}

FUSE_DEVICE float exp2Approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}

/// How a forward's raw scores (q . k) reach the online softmax's log2
/// domain. The softmax multiplies by `factor` inside its exp2, where one
/// FFMA also subtracts the row maximum, so with a positive scale the scores
/// stay raw and the maximum is taken over them (FlashAttention-3 does the
/// same); that saves a multiply per score on the path the tensor cores wait
/// for. A non-positive scale would turn that maximum into a minimum: the
/// scores are then multiplied first (`pre`) and factor is 1. An additive
/// mask element joins the scores times `mask` (log2 e / factor).
struct ScoreScale {
  float pre, factor, mask;
};
FUSE_DEVICE ScoreScale scoreScale(float scale) {
  const float log2Scale = scale * kLog2e;
  return log2Scale > 0.0f ? ScoreScale{1.0f, log2Scale, 1.0f / scale}
                          : ScoreScale{log2Scale, 1.0f, kLog2e};
}

/// How far (log2 domain) a row's maximum may rise above the one its
/// probabilities are taken against before the online softmax moves it.
/// Until then probabilities reach at most 2^8 (exact in 16-bit P, far from
/// f32 overflow in O and the sums) and neither O nor the sums need a
/// rescale; past the first key tile a row's maximum almost never rises that
/// far, so the 64 multiplies a step spends rescaling O are skipped
/// (FlashAttention-4's conditional rescaling).
constexpr float kFlashRescaleSlackLog2 = 8.0f;

/// The online softmax's step over one key tile for a thread's two rows of
/// an mma accumulator fragment (s[4 nt + 2 r + {0, 1}] are row r's scores,
/// masked, in units that `factor` > 0 takes to the log2 domain; see
/// ScoreScale): each row's maximum over its 4 threads (lanes 4g .. 4g + 3),
/// the scores replaced by exp2(s factor - rowMax), the row sums updated,
/// and alpha[r] to rescale what O and the sums held before. rowMax (log2
/// domain) moves only when the tile's maximum exceeds it by more than
/// kFlashRescaleSlackLog2; returns whether it moved for either row (alpha
/// is 1 where it did not).
template <int Scores>
FUSE_DEVICE bool onlineSoftmaxRows(float (&s)[Scores], float factor, float (&rowMax)[2],
                                   float (&rowSum)[2], float (&alpha)[2]) {
  bool moved = false;
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = -infinity();
#pragma unroll
    for (int nt = 0; nt < Scores / 4; ++nt)
      mx = fmaxf(mx, fmaxf(s[4 * nt + 2 * r], s[4 * nt + 2 * r + 1]));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
    mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
    const float tileMax = mx * factor, stale = rowMax[r];
    // -inf + slack is -inf: a row's first finite scores always move it.
    const bool rises = tileMax > stale + kFlashRescaleSlackLog2;
    const float running = rises ? tileMax : stale;
    // All -inf so far: subtract 0 so exp gives 0, not NaN.
    const float base = running == -infinity() ? 0.0f : running;
    alpha[r] = rises ? exp2Approx(stale - base) : 1.0f;
    rowMax[r] = running;
    moved |= rises;
    float sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < Scores / 4; ++nt) {
      s[4 * nt + 2 * r] = exp2Approx(fmaf(s[4 * nt + 2 * r], factor, -base));
      s[4 * nt + 2 * r + 1] = exp2Approx(fmaf(s[4 * nt + 2 * r + 1], factor, -base));
      sum += s[4 * nt + 2 * r] + s[4 * nt + 2 * r + 1];
    }
    rowSum[r] = rowSum[r] * alpha[r] + sum;
  }
  return moved;
}

/// A thread's two rows of an accumulator fragment (o[4 dt + 2 r + {0, 1}]
/// are row r's) scaled by alpha[r]: the online softmax's rescale of O.
template <int Values>
FUSE_DEVICE void rescaleRows(float (&o)[Values], const float (&alpha)[2]) {
#pragma unroll
  for (int dt = 0; dt < Values / 4; ++dt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      o[4 * dt + 2 * r] *= alpha[r];
      o[4 * dt + 2 * r + 1] *= alpha[r];
    }
}

/// Dropout on a thread's probabilities of one key tile of the forward (an
/// mma accumulator fragment: rows row0 and row0 + 8, keys n0 + 8 nt + 2t
/// and + 1), after the row sums (the normaliser is undropped): each score
/// zeroed or scaled by keepScale with the reference's Philox index
/// (headRow + i) * tk + j; rows and keys past the ends are left alone.
/// When every row starts a group of four (tk % 4 == 0), lanes t and t ^ 1
/// hold the two halves of one group in both rows: each draws the block of
/// one row and hands its partner the half it needs (one Philox block a
/// lane per nt instead of two). All 32 lanes must call it together. Each
/// fragment's draws are applied at once: collecting the tile's decisions
/// first costs the registers the forwards do not have.
template <int Scores>
FUSE_DEVICE void dropoutProbabilities(float (&s)[Scores], int row0, int n0, int t,
                                      long long headRow, const FlashParams &p, uint64_t seed,
                                      uint64_t offset, float keepScale) {
  const bool shareBlocks = p.tk % 4 == 0;
#pragma unroll
  for (int nt = 0; nt < Scores / 4; ++nt) {
    const int j = n0 + nt * 8 + 2 * t;
    uint32_t draws[2][2];
    if (shareBlocks) {
      const int own = t & 1;
      const long long row = headRow + row0 + own * 8;
      const philox::Block block =
          philox::blockAt(seed, offset + (static_cast<uint64_t>(row) * p.tk + j - 2 * own) / 4);
      const uint32_t got0 = __shfl_xor_sync(0xffffffffu, own ? block.x[0] : block.x[2], 1);
      const uint32_t got1 = __shfl_xor_sync(0xffffffffu, own ? block.x[1] : block.x[3], 1);
      const uint32_t mine0 = own ? block.x[2] : block.x[0];
      const uint32_t mine1 = own ? block.x[3] : block.x[1];
      draws[0][0] = own ? got0 : mine0;
      draws[0][1] = own ? got1 : mine1;
      draws[1][0] = own ? mine0 : got0;
      draws[1][1] = own ? mine1 : got1;
    } else {
      // Each row's pair from one block, unless it straddles two.
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const uint64_t n = static_cast<uint64_t>(headRow + row0 + 8 * r) * p.tk + j;
        const philox::Block block = philox::blockAt(seed, offset + n / 4);
        draws[r][0] = philox::lane(block, static_cast<uint32_t>(n % 4));
        draws[r][1] = (n + 1) % 4 != 0
                          ? philox::lane(block, static_cast<uint32_t>((n + 1) % 4))
                          : philox::blockAt(seed, offset + (n + 1) / 4).x[0];
      }
    }
#pragma unroll
    for (int r = 0; r < 2; ++r)
      if (row0 + 8 * r < p.tq && j < p.tk)
#pragma unroll
        for (int k = 0; k < 2; ++k)
          s[4 * nt + 2 * r + k] *= philox::uniform(draws[r][k]) < p.dropoutP ? 0.0f : keepScale;
  }
}

/// The dropout factor of score (row, j) of one (b, h): 0 or keepScale,
/// drawn alone (element index ((b * qHeads + h) * tq + i) * tk + j,
/// philox::uniformAt).
FUSE_DEVICE float dropoutFactorAt(uint64_t seed, uint64_t offset, uint64_t n, float p,
                                  float keepScale) {
  return philox::uniformAt(seed, offset, n) < p ? 0.0f : keepScale;
}

/// The backward's dropout decisions for a thread's scores of `Steps`
/// fragments nt of a transposed score tile (score (nt, e) is query
/// rowIndex0 - headRow + 8 nt + (e & 1), key key0 + 8 (e >> 1), with key0 a
/// multiple of 16 plus g = lane / 4): bit 4 nt + e set where the score is
/// kept, drawn with the reference's Philox index (headRow + i) * tk + j
/// (philox::uniformAt). When tk % 4 == 0 the lanes g & 3 = 0..3 of one t
/// hold the four keys of one Philox group for each of their four (query,
/// key group) pairs: each lane draws the block of pair g & 3, and a 4 x 4
/// transpose over lane bits 2 and 3 (three shuffles) hands every lane its
/// key of the other three (one block a lane instead of four). All 32 lanes
/// must call it together; bits of scores past the ends are meaningless.
template <int Steps>
FUSE_DEVICE uint64_t dropoutKeepBitsTransposed(long long rowIndex0, int key0, int lane,
                                               const FlashParams &p, uint64_t seed,
                                               uint64_t offset) {
  static_assert(Steps * 4 <= 64, "one bit a score of the thread's fragment");
  const bool shareBlocks = p.tk % 4 == 0;
  const int q = (lane >> 2) & 3;
  uint64_t bits = 0;
#pragma unroll
  for (int nt = 0; nt < Steps; ++nt) {
    const long long row = rowIndex0 + nt * 8;
    uint32_t draws[4];
    if (shareBlocks) {
      const uint64_t n =
          static_cast<uint64_t>(row + (q & 1)) * p.tk + (key0 - q) + 8 * (q >> 1);
      const philox::Block block = philox::blockAt(seed, offset + n / 4);
      // Round r: lane q receives pair (q ^ r)'s component q from lane q ^ r.
      uint32_t got[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const uint32_t sent = philox::lane(block, static_cast<uint32_t>(q ^ r));
        got[r] = r == 0 ? sent : __shfl_xor_sync(0xffffffffu, sent, r << 2);
      }
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int r = q ^ e;
        draws[e] = r == 0 ? got[0] : r == 1 ? got[1] : r == 2 ? got[2] : got[3];
      }
    } else {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const uint64_t n = static_cast<uint64_t>(row + (e & 1)) * p.tk + key0 + 8 * (e >> 1);
        draws[e] = philox::lane(philox::blockAt(seed, offset + n / 4),
                                static_cast<uint32_t>(n % 4));
      }
    }
#pragma unroll
    for (int e = 0; e < 4; ++e)
      bits |= static_cast<uint64_t>(!(philox::uniform(draws[e]) < p.dropoutP)) << (4 * nt + e);
  }
  return bits;
}

/// The backward's dropout decisions of one step, drawn right after its
/// two products are issued so that the Philox rounds run beside the tensor
/// cores (dropoutKeepBitsTransposed; rowIndex0 = headRow + m0 + 2t): at
/// head dim 64 only. At 128 the registers of shared draws beside dK, dV and
/// the two products would spill, so each score draws its own where it is
/// used (backwardKeepFactor), and this returns 0.
template <int D, int M>
FUSE_DEVICE uint64_t backwardStepKeepBits(bool dropout, long long rowIndex0, int key0, int lane,
                                          const FlashParams &p, uint64_t seed, uint64_t offset) {
  if (D != 64 || !dropout)
    return 0;
  return dropoutKeepBitsTransposed<M / 8>(rowIndex0, key0, lane, p, seed, offset);
}

/// The dropout factor (0 or keepScale) of the backward's score `bit` = 4 nt
/// + e of a step, element index n: from the step's bits where it has them
/// (read from a keep mask, `fromMask`, or drawn at head dim 64 by
/// backwardStepKeepBits), else drawn alone.
template <int D>
FUSE_DEVICE float backwardKeepFactor(bool fromMask, uint64_t keepBits, int bit, uint64_t n,
                                     const FlashParams &p, uint64_t seed, uint64_t offset,
                                     float keepScale) {
  if (D == 64 || fromMask)
    return (keepBits >> bit) & 1 ? keepScale : 0.0f;
  return dropoutFactorAt(seed, offset, n, p.dropoutP, keepScale);
}

/// A thread's probabilities of one key tile as the A fragments of its P V
/// (mma.sync's A layout, which wgmma's register operand shares).
template <typename T, int Scores>
FUSE_DEVICE void packProbabilities(const float (&s)[Scores], uint32_t (&pa)[Scores / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < Scores / 8; ++kk)
#pragma unroll
    for (int w = 0; w < 4; ++w)
      pa[kk][w] = pack<T>(s[8 * kk + 2 * w], s[8 * kk + 2 * w + 1]);
}

} // namespace flash
} // namespace fuse

#endif // FUSE_KERNELS_FLASH_COMMON_CUH
