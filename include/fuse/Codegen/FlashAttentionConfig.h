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
/// Backward: key rows per CTA (also the forward's inner key tile).
constexpr int kFlashBlockN = 64;
/// Threads of the forward, preprocess and dQ conversion launches (8 warps).
constexpr int kFlashThreads = 256;
/// Threads of the backward's main launch (4 warps, 16 keys each).
constexpr int kFlashBackwardThreads = 128;
/// Query rows per inner step of the backward (shared memory only).
constexpr int kFlashBackwardBlockM = 64;
/// Elements of padding after each shared-memory row.
constexpr int kFlashPad = 8;

/// Dynamic shared memory of flashAttentionForward (above 48 KiB: the
/// runtime opts in): 104,448 bytes at head dim 128, 55,296 at 64.
constexpr int flashForwardSharedBytes(int headDim) {
  return (kFlashBlockM + 4 * kFlashBlockN) * (headDim + kFlashPad) * 2;
}

/// Dynamic shared memory of flashAttentionBackward: 114,688 bytes at head
/// dim 128, 65,536 at 64.
constexpr int flashBackwardSharedBytes(int headDim) {
  return (2 * kFlashBlockN + 4 * kFlashBackwardBlockM) * (headDim + kFlashPad) * 2 +
         kFlashBlockN * (kFlashBackwardBlockM + kFlashPad) * 2 +
         4 * kFlashBackwardBlockM * 4;
}

} // namespace fuse::codegen

#endif // FUSE_CODEGEN_FLASHATTENTIONCONFIG_H
