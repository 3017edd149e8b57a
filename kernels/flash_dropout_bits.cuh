// fuse-depends: flash_common.cuh
//===- flash_dropout_bits.cuh - The backward's dropout decisions, drawn first ===//
//
// The flash backward recomputes every score the forward dropped or kept and
// needs the same decision: Philox at the reference's index (headRow + i) *
// tk + j (philox::uniformAt), about 70 integer instructions a block of four.
// Drawn inside the key-tile kernel, the rounds take the issue slots of its
// softmax and tensor-core work: at BERT-large's shape (B4 H16 T512 D64) the
// kernel ran 0.137 ms with dropout against about 0.045 ms without.
// flashDropoutKeepBits draws them all before it, at the whole machine's
// integer throughput and with every block's four lanes used (a thread
// takes four consecutive keys, one Philox group when tk % 4 == 0), as one
// bit a score; the key-tile kernel then reads two 64-bit words a step
// (flash::maskStepKeepBits).
//
// Layout, for query head bh = b * qHeads + h, key j and words =
// ceil(tq / 64): keepBits[(bh * tk + j) * words + w], bit q = query 64 w + q,
// set where the score is kept. Key-major, as the key-tile kernel holds its
// scores transposed (rows are keys).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_DROPOUT_BITS_CUH
#define FUSE_KERNELS_FLASH_DROPOUT_BITS_CUH

namespace fuse {

/// Threads a block of flashDropoutKeepBits.
constexpr int kFlashKeepBitsThreads = 128;

/// Bytes of the keep mask of `heads` query heads (batch x qHeads).
FUSE_HOST_DEVICE constexpr long long flashKeepBitsBytes(long long heads, long long tq, long long tk) {
  return heads * tk * ((tq + 63) / 64) * 8;
}

namespace flash {

/// 64-bit words of one key's row of the keep mask.
FUSE_HOST_DEVICE int keepBitsWords(int tq) { return (tq + 63) / 64; }

/// A thread's keep bits of one backward step of M = 64 query rows, in
/// backwardStepKeepBits' layout (bit 4 nt + e: query m0 + 8 nt + 2 t + (e &
/// 1), key key0 + 8 (e >> 1)), read from flashDropoutKeepBits' mask: the
/// words of its two keys for the 64 queries from m0 (a multiple of 64).
/// Keys past tk read nothing (their scores are masked out). Steps of 80
/// rows run without dropout (flashBackwardTmaBlockM): none to read.
template <int M>
FUSE_DEVICE uint64_t maskStepKeepBits(const uint64_t *keepBits, long long headIndex, int m0,
                                      int key0, int t, const FlashParams &p) {
  if constexpr (M != 64)
    return 0;
  constexpr int Steps = M == 64 ? 8 : 0;
  const int words = keepBitsWords(p.tq);
  const uint64_t *row = keepBits + (headIndex * p.tk + key0) * words + m0 / 64;
  const uint64_t low = key0 < p.tk ? row[0] >> (2 * t) : 0;
  const uint64_t high = key0 + 8 < p.tk ? row[8 * words] >> (2 * t) : 0;
  uint64_t bits = 0;
#pragma unroll
  for (int nt = 0; nt < Steps; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      bits |= (((e >> 1) ? high : low) >> (8 * nt + (e & 1)) & 1) << (4 * nt + e);
  return bits;
}

} // namespace flash

/// The keep mask of one attention call's dropout (this file's header). Grid
/// (ceil(tk / 4 x keepBitsWords(tq) / kFlashKeepBitsThreads), qHeads, batch),
/// kFlashKeepBitsThreads threads; tk % 4 == 0 (a thread's four keys are one
/// Philox block).
FUSE_DEVICE void flashDropoutKeepBits(const long long *seed, const long long *offset,
                                      uint64_t *keepBits, const FlashParams &p) {
  using namespace flash;
  const int words = keepBitsWords(p.tq);
  const long long item = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= static_cast<long long>(p.tk / 4) * words)
    return;
  const int key = 4 * static_cast<int>(item / words), w = static_cast<int>(item % words);
  const long long headIndex = static_cast<long long>(blockIdx.z) * p.qHeads + blockIdx.y;
  const uint64_t dropSeed = static_cast<uint64_t>(*seed);
  const uint64_t dropOffset = static_cast<uint64_t>(*offset);
  const int rows = p.tq - 64 * w < 64 ? p.tq - 64 * w : 64;
  uint64_t bits[4] = {0, 0, 0, 0};
#pragma unroll 4
  for (int q = 0; q < rows; ++q) {
    const uint64_t n = static_cast<uint64_t>(headIndex * p.tq + 64 * w + q) * p.tk + key;
    const philox::Block block = philox::blockAt(dropSeed, dropOffset + n / 4);
#pragma unroll
    for (int l = 0; l < 4; ++l)
      bits[l] |= static_cast<uint64_t>(!(philox::uniform(block.x[l]) < p.dropoutP)) << q;
  }
  uint64_t *out = keepBits + (headIndex * p.tk + key) * words + w;
#pragma unroll
  for (int l = 0; l < 4; ++l)
    out[l * words] = bits[l];
}

} // namespace fuse

#endif // FUSE_KERNELS_FLASH_DROPOUT_BITS_CUH
