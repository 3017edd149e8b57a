//===- FlashAttentionExecutable.h - Hand-built flash executables -*- C++ -*-===//
//
// An Executable that runs kernels/flash_attention.cuh the way the code
// generator launches it (thin extern "C" wrappers, FlashParams as a literal,
// grids and shared bytes from FlashAttentionConfig.h): the forward alone, or
// the forward followed by the three backward launches. Shared by the GPU
// test and the benchmark harness. The forward and the backward's key-tile
// launch run either the cp.async kernels or the warp-specialised TMA ones
// (FlashCase::tmaForward / tmaBackward), whose q, k, v and dout come
// through tensor maps (FlashTensorMaps.h) instead of pointers.
//
// Inputs : 0 q, 1 k, 2 v, 3 dout, 4 seed (i64), 5 offset (i64), [6 mask]
// Outputs: 0 out, 1 lse (f32 [b, h, tq]), and with backward 2 dq, 3 dk, 4 dv
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_TEST_UNITTESTS_FLASHATTENTIONEXECUTABLE_H
#define FUSE_TEST_UNITTESTS_FLASHATTENTIONEXECUTABLE_H

#include "fuse/Codegen/DeviceLibrary.h"
#include "fuse/Codegen/FlashAttentionConfig.h"
#include "fuse/Codegen/FlashStrides.h"
#include "fuse/Codegen/FlashTensorMaps.h"
#include "fuse/Runtime/Executable.h"

#include "KernelArgs.h"

#include <cmath>
#include <cstdio>
#include <string>

namespace fuse::testing {

enum class FlashMask { None, PerBatch /*[b,1,tq,tk]*/, KeysOnly /*[1,1,1,tk]*/ };

struct FlashCase {
  DType dtype = DType::BF16;
  int batch = 1, qHeads = 1, kvHeads = 1, tq = 1, tk = 1, headDim = 64;
  bool causal = false;
  FlashMask mask = FlashMask::None;
  float dropout = 0.0f;
  bool backward = true;
  /// The warp-specialised kernels (flashAttentionForwardTma,
  /// flashAttentionBackwardTma) instead of the cp.async ones.
  bool tmaForward = false, tmaBackward = false;
  /// With dropout, the TMA backward reads a keep mask drawn before it
  /// (flashDropoutKeepBits) wherever the code generator draws one
  /// (flashBackwardUsesKeepBits); false: it draws its decisions itself.
  bool keepBits = true;
  /// CTAs of the TMA forward, which strides over its query-tile items: 0
  /// for the code generator's persistent launch (one CTA a multiprocessor
  /// at most), else exactly this many (few, so that each works through
  /// several items on any device).
  int forwardCtas = 0;

  /// The softmax scale: 1 / sqrt(D), negated with `negativeScale` (the
  /// kernels then scale the scores before the row maximum, ScoreScale).
  bool negativeScale = false;
  float scale() const {
    return (negativeScale ? -1.0f : 1.0f) / std::sqrt(static_cast<float>(headDim));
  }
  long long maskStrideB() const {
    return mask == FlashMask::PerBatch ? static_cast<long long>(tq) * tk : 0;
  }
  long long maskStrideQ() const { return mask == FlashMask::PerBatch ? tk : 0; }
  int64_t maskElements() const {
    return mask == FlashMask::None ? 0
           : mask == FlashMask::PerBatch ? static_cast<int64_t>(batch) * tq * tk
                                         : tk;
  }
};

inline uint32_t flashTiles(int n, int tile) {
  return static_cast<uint32_t>((n + tile - 1) / tile);
}

inline runtime::Executable makeFlashExecutable(const FlashCase &c) {
  using namespace runtime;
  using runtime::testing::argsOf;
  using namespace fuse::codegen;
  const std::string t = c.dtype == DType::BF16 ? "fuse::bf16" : "fuse::f16";
  const std::string targs = "<" + t + ", " + std::to_string(c.headDim) + ">";
  const int64_t qElems = int64_t(c.batch) * c.qHeads * c.tq * c.headDim;
  const int64_t kvElems = int64_t(c.batch) * c.kvHeads * c.tk * c.headDim;
  const bool hasMask = c.mask != FlashMask::None;
  const int64_t B = c.batch, H = c.qHeads, KVH = c.kvHeads, TQ = c.tq, TK = c.tk,
                D = c.headDim;

  Executable exe;
  exe.entry = "flash_test";
  exe.arch = "sm_90a";
  exe.inputs = {{"q", c.dtype, {B, H, TQ, D}},
                {"k", c.dtype, {B, KVH, TK, D}},
                {"v", c.dtype, {B, KVH, TK, D}},
                {"dout", c.dtype, {B, H, TQ, D}},
                {"seed", DType::I64, {}},
                {"offset", DType::I64, {}}};
  if (hasMask)
    exe.inputs.push_back({"mask", c.dtype, {c.maskElements()}});
  exe.outputs = {{"out", c.dtype, {B, H, TQ, D}},
                 {"lse", DType::F32, {B, H, TQ}}};
  if (c.backward) {
    exe.outputs.push_back({"dq", c.dtype, {B, H, TQ, D}});
    exe.outputs.push_back({"dk", c.dtype, {B, KVH, TK, D}});
    exe.outputs.push_back({"dv", c.dtype, {B, KVH, TK, D}});
  }
  // Arena: the row statistics (flashRowStatsBytes), then dqAccum (f32 like
  // q), 256-aligned.
  // The backward's query rows a step, as the code generator picks them.
  const int blockM =
      c.tmaBackward ? flashBackwardTmaBlockM(c.headDim, c.causal, c.dropout > 0)
                    : kFlashBackwardBlockM;
  const std::string bargs =
      "<" + t + ", " + std::to_string(c.headDim) + ", " + std::to_string(blockM) + ">";
  const int64_t statsBytes = (flashRowStatsBytes(B * H, TQ, blockM) + 255) / 256 * 256;
  const int64_t accBytes = (qElems * 4 + 255) / 256 * 256;
  const bool useKeepBits = c.backward && c.tmaBackward && c.dropout > 0 && c.keepBits &&
                           flashBackwardUsesKeepBits(B * H, TQ, TK);
  exe.arenaBytes = statsBytes + accBytes + (useKeepBits ? flashKeepBitsBytes(B * H, TQ, TK) : 0);
  (void)kvElems;
  // The runtime pastes exactly the files a kernel names: the whole closure.
  for (const std::string &name : helperClosure({"flash_attention.cuh"}))
    exe.helperSources.push_back({name, deviceLibraryFile(name).text});

  char head[512];
  std::snprintf(head, sizeof(head),
                "  fuse::FlashParams p{%d, %d, %d, %d, %d, %af, %s, %lldLL, 0LL, "
                "%lldLL, %af",
                c.batch, c.qHeads, c.kvHeads, c.tq, c.tk, c.scale(),
                c.causal ? "true" : "false", c.maskStrideB(), c.maskStrideQ(),
                c.dropout);
  // q, k, v, o, dout, dq, dk, dv: all contiguous here.
  const FlashOperandStrides strides = contiguousFlashOperandStrides(H, KVH, TQ, TK, D);
  const std::string params = std::string(head) + ", " + flashStridesLiteral(strides) + "};\n";
  const std::string maskParam = hasMask ? ", const " + t + " *mask" : "";
  const std::string maskArg = hasMask ? "mask" : "nullptr";
  // `bounds` is __launch_bounds__'s argument list.
  auto kernel = [&](const std::string &name, const std::string &bounds,
                    const std::string &sig, const std::string &call) {
    exe.kernels.push_back({name,
                           "extern \"C\" __global__ void __launch_bounds__(" + bounds +
                               ") " + name + "(" + sig + ") {\n" + params + "  " + call +
                               ";\n}\n",
                           helperClosure({"flash_attention.cuh"})});
  };
  const std::string tmaBounds = std::to_string(kFlashTmaThreads) + ", 1";
  const std::string mapParams = ", const __grid_constant__ fuse::TensorMap qMap, "
                                "const __grid_constant__ fuse::TensorMap kMap, "
                                "const __grid_constant__ fuse::TensorMap vMap";
  auto map = [&](int input, int boxRows) {
    const bool query = input == 0 || input == 3;
    return flashTensorMap(BufferRef::input(input), c.dtype,
                          {B, query ? H : KVH, query ? TQ : TK, D},
                          strides[query ? 0 : 1], boxRows);
  };
  std::vector<BufferRef> fwdArgs;
  if (c.tmaForward) {
    kernel("flash_fwd", tmaBounds,
           "const long long *seed, const long long *offset" + maskParam + ", " + t +
               " *out, float *lse" + mapParams,
           "fuse::flashAttentionForwardTma" + targs + "(qMap, kMap, vMap, " + maskArg +
               ", seed, offset, out, lse, p)");
  } else {
    const int minBlocks = flashForwardMinBlocks(c.headDim);
    kernel("flash_fwd",
           std::to_string(kFlashThreads) + (minBlocks ? ", " + std::to_string(minBlocks) : ""),
           "const " + t + " *q, const " + t + " *k, const " + t +
               " *v, const long long *seed, const long long *offset" + maskParam +
               ", " + t + " *out, float *lse",
           "fuse::flashAttentionForward" + targs + "(q, k, v, " + maskArg +
               ", seed, offset, out, lse, p)");
    fwdArgs = {BufferRef::input(0), BufferRef::input(1), BufferRef::input(2)};
  }
  fwdArgs.push_back(BufferRef::input(4));
  fwdArgs.push_back(BufferRef::input(5));
  if (hasMask)
    fwdArgs.push_back(BufferRef::input(6));
  fwdArgs.push_back(BufferRef::output(0));
  fwdArgs.push_back(BufferRef::output(1));
  const std::array<uint32_t, 3> queryGrid{flashTiles(c.tq, kFlashBlockM),
                                          uint32_t(c.qHeads), uint32_t(c.batch)};
  if (c.tmaForward) {
    const uint32_t items = queryGrid[0] * queryGrid[1] * queryGrid[2];
    KernelLaunch launch{0,
                        {c.forwardCtas > 0 ? uint32_t(c.forwardCtas) : items, 1, 1},
                        {uint32_t(kFlashTmaThreads), 1, 1},
                        uint32_t(flashForwardTmaSharedBytes(c.headDim)),
                        argsOf(exe, fwdArgs)};
    if (c.forwardCtas == 0)
      launch.persistentBlocksPerMultiprocessor = kFlashForwardTmaPersistentBlocks;
    launch.tensorMaps = {map(0, kFlashBlockM), map(1, kFlashTmaBlockN),
                         map(2, kFlashTmaBlockN)};
    exe.launches.push_back(launch);
  } else {
    exe.launches.push_back({0, queryGrid, {uint32_t(kFlashThreads), 1, 1},
                            uint32_t(flashForwardSharedBytes(c.headDim)),
                            argsOf(exe, fwdArgs)});
  }
  exe.steps.push_back({Step::Kind::Launch, 0, "flash forward", 0, 0});
  if (!c.backward)
    return exe;

  const std::string fwdBounds = std::to_string(kFlashThreads);
  kernel("flash_pre", fwdBounds,
         "const " + t + " *out, const " + t + " *dout, const float *lse, float *stats, float *acc",
         "fuse::flashBackwardPreprocess" + bargs + "(out, dout, lse, stats, acc, p)");
  // The TMA kernel adds to dQ's accumulator through a map, not a pointer.
  const std::string dkdv = ", " + t + " *dk, " + t + " *dv";
  if (c.tmaBackward)
    kernel("flash_bwd", tmaBounds,
           "const long long *seed, const long long *offset" + maskParam +
               (useKeepBits ? ", const unsigned long long *bits" : "") +
               ", const float *stats" + dkdv + mapParams +
               ", const __grid_constant__ fuse::TensorMap doMap, "
               "const __grid_constant__ fuse::TensorMap accMap",
           "fuse::flashAttentionBackwardTma" + bargs + "(qMap, kMap, vMap, doMap, accMap, " +
               maskArg + ", seed, offset, " + (useKeepBits ? "bits" : "nullptr") +
               ", stats, dk, dv, p)");
  else
    kernel("flash_bwd", std::to_string(kFlashBackwardThreads),
           "const " + t + " *q, const " + t + " *k, const " + t +
               " *v, const long long *seed, const long long *offset" + maskParam +
               ", const " + t + " *dout, const float *stats, float *acc" +
               dkdv,
           "fuse::flashAttentionBackward" + targs + "(q, k, v, " + maskArg +
               ", seed, offset, dout, stats, acc, dk, dv, p)");
  kernel("flash_dq", fwdBounds, "const float *acc, " + t + " *dq",
         "fuse::flashBackwardConvertDq" + targs + "(acc, dq, p)");
  if (useKeepBits)
    kernel("flash_bits", std::to_string(kFlashKeepBitsThreads),
           "const long long *seed, const long long *offset, unsigned long long *bits",
           "fuse::flashDropoutKeepBits(seed, offset, bits, p)");
  const BufferRef stats = BufferRef::arena(0), acc = BufferRef::arena(statsBytes),
                  bits = BufferRef::arena(statsBytes + accBytes);
  const std::array<uint32_t, 3> recordGrid{
      flashTiles(int64_t(flashTiles(c.tq, blockM)) * blockM, kFlashBlockM), queryGrid[1],
      queryGrid[2]};
  exe.launches.push_back({1, recordGrid, {uint32_t(kFlashThreads), 1, 1}, 0,
                          argsOf(exe, {BufferRef::output(0), BufferRef::input(3),
                                       BufferRef::output(1), stats, acc})});
  std::vector<BufferRef> bwdArgs;
  if (!c.tmaBackward)
    bwdArgs = {BufferRef::input(0), BufferRef::input(1), BufferRef::input(2)};
  bwdArgs.push_back(BufferRef::input(4));
  bwdArgs.push_back(BufferRef::input(5));
  if (hasMask)
    bwdArgs.push_back(BufferRef::input(6));
  if (useKeepBits)
    bwdArgs.push_back(bits);
  if (!c.tmaBackward)
    bwdArgs.push_back(BufferRef::input(3));
  bwdArgs.push_back(stats);
  if (!c.tmaBackward)
    bwdArgs.push_back(acc);
  bwdArgs.push_back(BufferRef::output(3));
  bwdArgs.push_back(BufferRef::output(4));
  if (c.tmaBackward) {
    KernelLaunch launch{2,
                        {flashTiles(c.tk, kFlashBackwardTmaBlockN), uint32_t(c.kvHeads),
                         uint32_t(c.batch)},
                        {uint32_t(kFlashTmaThreads), 1, 1},
                        uint32_t(flashBackwardTmaSharedBytes(c.headDim, blockM)),
                        argsOf(exe, bwdArgs)};
    launch.tensorMaps = {map(0, blockM), map(1, kFlashBackwardTmaBlockN),
                         map(2, kFlashBackwardTmaBlockN), map(3, blockM),
                         flashDqAccumulatorMap(acc, B, H, TQ, D, blockM)};
    exe.launches.push_back(launch);
  } else {
    exe.launches.push_back({2,
                            {flashTiles(c.tk, kFlashBlockN), uint32_t(c.kvHeads),
                             uint32_t(c.batch)},
                            {uint32_t(kFlashBackwardThreads), 1, 1},
                            uint32_t(flashBackwardSharedBytes(c.headDim)),
                            argsOf(exe, bwdArgs)});
  }
  exe.launches.push_back({3, queryGrid, {uint32_t(kFlashThreads), 1, 1}, 0,
                          argsOf(exe, {acc, BufferRef::output(2)})});
  exe.steps.push_back({Step::Kind::Launch, 1, "flash preprocess", 0, 0});
  if (useKeepBits) {
    exe.launches.push_back({4, {flashKeepBitsBlocks(TQ, TK), uint32_t(H), uint32_t(B)},
                            {uint32_t(kFlashKeepBitsThreads), 1, 1}, 0,
                            argsOf(exe, {BufferRef::input(4), BufferRef::input(5), bits})});
    exe.steps.push_back({Step::Kind::Launch, 4, "flash keep bits", 0, 0});
  }
  exe.steps.push_back({Step::Kind::Launch, 2, "flash backward", 0, 0});
  exe.steps.push_back({Step::Kind::Launch, 3, "flash dq", 0, 0});
  return exe;
}

} // namespace fuse::testing

#endif // FUSE_TEST_UNITTESTS_FLASHATTENTIONEXECUTABLE_H
