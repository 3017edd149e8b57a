//===- FlashAttentionConfig.h - Tile sizes of the flash kernels -*- C++ -*-===//
//
// The host's copy of the launch constants in kernels/flash_common.cuh, for
// the code generator, which computes grids and shared-memory sizes without
// compiling device code. test/unittests/FlashAttentionNvrtcTest.cpp compiles
// the .cuh with NVRTC and static_asserts that both agree.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_CODEGEN_FLASHATTENTIONCONFIG_H
#define FUSE_CODEGEN_FLASHATTENTIONCONFIG_H

namespace fuse::codegen {

/// Forward and the backward's preprocess / dQ conversion: query rows per CTA.
constexpr int kFlashBlockM = 128;
/// Backward: key rows per CTA.
constexpr int kFlashBlockN = 64;
/// Backward: query rows per inner step (shared memory only).
constexpr int kFlashBackwardBlockM = 64;
/// Threads of the forward, preprocess and dQ conversion launches (two
/// warpgroups).
constexpr int kFlashThreads = 256;
/// Threads of the backward's main launch (one warpgroup).
constexpr int kFlashBackwardThreads = 128;

/// Forward: key rows per inner step (shared memory only).
constexpr int flashForwardBlockN(int headDim) { return headDim == 64 ? 64 : 128; }

/// __launch_bounds__' minimum blocks a multiprocessor of
/// flashAttentionForward: two at head dim 64 (50 KiB of shared memory each),
/// which holds ptxas to 128 registers a thread, so that a change needing
/// more spills, which the NVRTC test reports, instead of silently halving
/// the occupancy (the causal kernel once grew from 121 to 132 registers
/// and ran at half speed); none at 128, where shared memory allows one.
constexpr int flashForwardMinBlocks(int headDim) { return headDim == 64 ? 2 : 0; }

/// Dynamic shared memory of flashAttentionForward (above 48 KiB: the
/// runtime opts in): 164,864 bytes at head dim 128, 50,176 at 64.
constexpr int flashForwardSharedBytes(int headDim) {
  return (kFlashBlockM + 4 * flashForwardBlockN(headDim)) * headDim * 2 + 1024;
}

/// flashAttentionForwardTma: a producer warpgroup and two consumers, key
/// tiles of 128 rows through two shared stages.
constexpr int kFlashTmaConsumers = 2;
constexpr int kFlashTmaThreads = 128 * (1 + kFlashTmaConsumers);
constexpr int kFlashTmaBlockN = 128;
constexpr int kFlashTmaStages = 2;
/// Query tiles the persistent forward keeps: the next item's Q loads while
/// the consumers finish the current one's.
constexpr int kFlashTmaQueryBuffers = 2;

/// Its dynamic shared memory: the Q buffers, the K and V stages, the output
/// tile, 1 KiB to align and the mbarriers. 230,496 bytes at head dim 128.
constexpr int flashForwardTmaSharedBytes(int headDim) {
  return ((kFlashTmaQueryBuffers + 1) * kFlashBlockM + 2 * kFlashTmaStages * kFlashTmaBlockN) *
             headDim * 2 +
         1024 + 8 * (2 * kFlashTmaQueryBuffers + 4 * kFlashTmaStages);
}

/// Its launches are persistent, this many CTAs a multiprocessor (shared
/// memory holds one).
constexpr unsigned kFlashForwardTmaPersistentBlocks = 1;

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
constexpr int flashBackwardTmaBlockM(int headDim, bool causal, bool dropout) {
  return headDim == 128 && !causal && !dropout ? 80 : 64;
}

/// Its dynamic shared memory at `blockM` query rows a step: K and V tiles,
/// the Q and dO stages, two dS buffers, each consumer's f32 dQ staging
/// (blockM rows of 64 floats), the row-statistics stages, 1 KiB to align
/// and the mbarriers (K / V full; full and empty per stage). 198,696 bytes
/// at head dim 128 and 64 rows, 231,720 at 80 (of the 232,448 a CTA may
/// have).
constexpr int flashBackwardTmaSharedBytes(int headDim, int blockM) {
  return 2 * kFlashBackwardTmaBlockN * headDim * 2 + 2 * kFlashTmaStages * blockM * headDim * 2 +
         2 * kFlashBackwardTmaBlockN * blockM * 2 + kFlashTmaConsumers * blockM * 64 * 4 +
         kFlashTmaStages * 2 * blockM * 4 + 1024 + 8 * (1 + 2 * kFlashTmaStages);
}

/// Which forward the code generator runs where the copy engine can address
/// the operands: the warp-specialised TMA kernel (faster at both head dims,
/// bench/attention/README.md) or the cp.async one. Where the TMA forward
/// would need more than its consumers' registers and spill, the cp.async
/// kernel takes the case: dropout (Philox beside its item loop) or, at head
/// dim 128, a mask. The TMA backward takes every case the copy engine can
/// address (dropout at 64 query rows a step: flashBackwardTmaBlockM).
constexpr bool flashForwardUsesTma(int headDim, bool mask, bool dropout) {
  return !dropout && (headDim == 64 || (headDim == 128 && !mask));
}

/// Bytes of the backward's row statistics (flash::rowStatsOffset) in
/// records of `blockM` rows: per head, lse and delta for its query rows
/// rounded up to whole records.
constexpr long long flashRowStatsBytes(long long heads, long long tq, int blockM) {
  return heads * ((tq + blockM - 1) / blockM) * blockM * 2 * 4;
}

/// flashDropoutKeepBits (kernels/flash_dropout_bits.cuh): threads a block,
/// and the bytes of its keep mask (a bit a score, 64 queries a word, each
/// key's words of each query head).
constexpr int kFlashKeepBitsThreads = 128;
constexpr long long flashKeepBitsBytes(long long heads, long long tq, long long tk) {
  return heads * tk * ((tq + 63) / 64) * 8;
}
/// Its grid.x (grid.y is qHeads, grid.z batch): a thread for each group of
/// four keys and each 64 queries.
constexpr unsigned flashKeepBitsBlocks(long long tq, long long tk) {
  const long long items = tk / 4 * ((tq + 63) / 64);
  return static_cast<unsigned>((items + kFlashKeepBitsThreads - 1) / kFlashKeepBitsThreads);
}

/// The largest keep mask the code generator puts in the workspace (BERT-
/// large's B4 H16 T512 takes 2 MiB, (4, 32, 2048) 64 MiB); a larger one
/// would cost more memory than the backward's own draws cost time.
constexpr long long kFlashKeepBitsMaxBytes = 256ll << 20;

/// Whether the TMA backward reads its dropout decisions from a keep mask
/// drawn before it: where a thread's four keys are one Philox group (tk %
/// 4 == 0) and the mask fits kFlashKeepBitsMaxBytes. Else it draws them.
constexpr bool flashBackwardUsesKeepBits(long long heads, long long tq, long long tk) {
  return tk % 4 == 0 && flashKeepBitsBytes(heads, tq, tk) <= kFlashKeepBitsMaxBytes;
}

/// Dynamic shared memory of flashAttentionBackward: 108,544 bytes at head
/// dim 128, 59,392 at 64 (room for two CTAs a multiprocessor at 128, three
/// at 64).
constexpr int flashBackwardSharedBytes(int headDim) {
  return (2 * kFlashBlockN + 4 * kFlashBackwardBlockM) * headDim * 2 +
         kFlashBlockN * kFlashBackwardBlockM * 2 + 4 * kFlashBackwardBlockM * 4 + 1024;
}

} // namespace fuse::codegen

#endif // FUSE_CODEGEN_FLASHATTENTIONCONFIG_H
