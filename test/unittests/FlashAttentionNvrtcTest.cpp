//===- FlashAttentionNvrtcTest.cpp - Flash kernels under NVRTC, no GPU ----===//
//
// The flash-attention device functions, wrapped as the code generator wraps
// them, compile with NVRTC for sm_90a (no include path) for every element
// type and head dim, without a byte of register spill (a spilled
// accumulator tile would cost more than the kernel saves), and the launch
// constants the host computes grids with (FlashAttentionConfig.h) equal the
// device file's (static_asserts compiled into the unit).
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/DeviceLibrary.h"
#include "fuse/Codegen/FlashAttentionConfig.h"
#include "fuse/Runtime/KernelCompiler.h"

#include "FlashAttentionExecutable.h"

#include <gtest/gtest.h>

#include <string>

using namespace fuse::codegen;

namespace {

/// `const fuse::FlashParams <name>{...}` at head dim d, as the code
/// generator emits FlashParams: causal or not, a per-batch mask, grouped
/// heads, lengths off the tiles, packed-projection strides, and `dropout`.
/// The TMA kernels are checked with it: with run-time shapes ptxas keeps
/// them in registers across their loops and spills a few bytes.
std::string paramsLiteral(const std::string &name, int d, bool causal, const std::string &dropout) {
  const std::string packed = "{" + std::to_string(8000 * d) + "LL, " + std::to_string(d) + "LL, " +
                             std::to_string(8 * d) + "LL}";
  const std::string grouped = "{" + std::to_string(4000 * d) + "LL, " + std::to_string(d) + "LL, " +
                              std::to_string(4 * d) + "LL}";
  return "  const fuse::FlashParams " + name + "{2, 4, 2, 1000, 1000, 0.088f, " +
         (causal ? "true" : "false") + ", 1000000LL, 0LL, 1000LL, " + dropout + ", " + packed +
         ", " + packed + ", " + packed + ", " + grouped + ", " + grouped + ", " + packed + ", " +
         packed + ", " + packed + "};\n";
}

/// A TMA forward kernel `name` whose FlashParams is `literal` and whose mask
/// is `mask` (a parameter, or nullptr as the code generator passes it to a
/// causal op, which has none).
std::string tmaForward(const std::string &targs, const std::string &t, const std::string &name,
                       const std::string &literal, const std::string &mask) {
  return "extern \"C\" __global__ void __launch_bounds__(fuse::kFlashTmaThreads, 1) " + name +
         "(const " + t + " *mask, const long long *seed, const long long *offset, " + t +
         " *out, float *lse, const __grid_constant__ fuse::TensorMap qMap, "
         "const __grid_constant__ fuse::TensorMap kMap, "
         "const __grid_constant__ fuse::TensorMap vMap) {\n" +
         literal + "  fuse::flashAttentionForwardTma" + targs + "(qMap, kMap, vMap, " + mask +
         ", seed, offset, out, lse, literal);\n}\n";
}

/// A TMA backward kernel `name` with `blockM` query rows a step, whose
/// FlashParams is `literal`, and the preprocess writing its row records.
std::string tmaBackward(const std::string &t, int d, const std::string &name,
                        const std::string &literal, int blockM) {
  const std::string bargs =
      "<" + t + ", " + std::to_string(d) + ", " + std::to_string(blockM) + ">";
  return "extern \"C\" __global__ void __launch_bounds__(fuse::kFlashThreads) " + name +
         "_pre(const " + t + " *out, const " + t +
         " *dout, const float *lse, float *stats, float *acc, fuse::FlashParams p) {\n"
         "  fuse::flashBackwardPreprocess" + bargs + "(out, dout, lse, stats, acc, p);\n}\n"
         "extern \"C\" __global__ void __launch_bounds__(fuse::kFlashTmaThreads, 1) " + name +
         "(const " + t +
         " *mask, const long long *seed, const long long *offset, "
         "const unsigned long long *bits, const float *stats, " + t +
         " *dk, " + t +
         " *dv, "
         "const __grid_constant__ fuse::TensorMap qMap, "
         "const __grid_constant__ fuse::TensorMap kMap, "
         "const __grid_constant__ fuse::TensorMap vMap, "
         "const __grid_constant__ fuse::TensorMap doMap, "
         "const __grid_constant__ fuse::TensorMap accMap) {\n" +
         literal + "  fuse::flashAttentionBackwardTma" + bargs +
         "(qMap, kMap, vMap, doMap, accMap, mask, seed, offset, bits, stats, dk, dv, literal);\n}\n";
}

std::string wrappers(const std::string &t, int d, const std::string &tag) {
  const std::string targs = "<" + t + ", " + std::to_string(d) + ">";
  const int minBlocks = flashForwardMinBlocks(d);
  const std::string fwdBounds = "__launch_bounds__(fuse::kFlashThreads" +
                                (minBlocks ? ", " + std::to_string(minBlocks) : "") + ") ";
  const std::string preBounds = "__launch_bounds__(fuse::kFlashThreads) ";
  const std::string bwdBounds = "__launch_bounds__(fuse::kFlashBackwardThreads) ";
  return "extern \"C\" __global__ void " + fwdBounds + "flash_fwd_" + tag + "(const " + t +
         " *q, const " + t + " *k, const " + t + " *v, const " + t +
         " *mask, const long long *seed, const long long *offset, " + t +
         " *out, float *lse, fuse::FlashParams p) {\n"
         "  fuse::flashAttentionForward" +
         targs + "(q, k, v, mask, seed, offset, out, lse, p);\n}\n" +
         // The TMA forward as the code generator uses it
         // (flashForwardUsesTma): with a mask, and causal, one kernel each,
         // no dropout (the mask at head dim 64 only).
         tmaForward(targs, t, "flash_fwd_tma_" + tag, paramsLiteral("literal", d, false, "0.0f"),
                    d == 64 ? "mask" : "nullptr") +
         tmaForward(targs, t, "flash_fwd_tma_causal_" + tag,
                    paramsLiteral("literal", d, true, "0.0f"), "nullptr") +
         "extern \"C\" __global__ void " + preBounds + "flash_pre_" + tag + "(const " + t +
         " *out, const " + t +
         " *dout, const float *lse, float *stats, float *acc, fuse::FlashParams p) {\n"
         "  fuse::flashBackwardPreprocess<" + t + ", " + std::to_string(d) +
         ", fuse::kFlashBackwardBlockM>(out, dout, lse, stats, acc, p);\n}\n"
         "extern \"C\" __global__ void " +
         bwdBounds + "flash_bwd_" + tag + "(const " + t + " *q, const " + t + " *k, const " + t +
         " *v, const " + t + " *mask, const long long *seed, const long long *offset, const " + t +
         " *dout, const float *stats, float *acc, " + t + " *dk, " + t +
         " *dv, fuse::FlashParams p) {\n"
         "  fuse::flashAttentionBackward" +
         targs +
         "(q, k, v, mask, seed, offset, dout, stats, acc, dk, dv, p);\n}\n" +
         // The TMA backward as the code generator uses it
         // (flashBackwardTmaBlockM): causal with dropout; not causal, with a
         // mask (80 query rows a step at head dim 128).
         tmaBackward(t, d, "flash_bwd_tma_causal_" + tag, paramsLiteral("literal", d, true, "0.1f"),
                     flashBackwardTmaBlockM(d, true, true)) +
         tmaBackward(t, d, "flash_bwd_tma_" + tag, paramsLiteral("literal", d, false, "0.0f"),
                     flashBackwardTmaBlockM(d, false, false)) +
         "extern \"C\" __global__ void __launch_bounds__(fuse::kFlashKeepBitsThreads) "
         "flash_bits_" + tag + "(const long long *seed, const long long *offset, "
         "unsigned long long *bits, fuse::FlashParams p) {\n"
         "  fuse::flashDropoutKeepBits(seed, offset, bits, p);\n}\n"
         "extern \"C\" __global__ void " +
         preBounds + "flash_dq_" + tag + "(const float *acc, " + t +
         " *dq, fuse::FlashParams p) {\n"
         "  fuse::flashBackwardConvertDq" +
         targs + "(acc, dq, p);\n}\n";
}

std::string constantChecks() {
  std::string s;
  auto check = [&](const std::string &device, int host) {
    s += "static_assert(" + device + " == " + std::to_string(host) + ", \"" + device +
         " differs from FlashAttentionConfig.h\");\n";
  };
  check("fuse::kFlashBlockM", kFlashBlockM);
  check("fuse::kFlashBlockN", kFlashBlockN);
  check("fuse::kFlashThreads", kFlashThreads);
  check("fuse::kFlashKeepBitsThreads", kFlashKeepBitsThreads);
  s += "static_assert(fuse::flashKeepBitsBytes(64, 130, 512) == " +
       std::to_string(flashKeepBitsBytes(64, 130, 512)) +
       "LL, \"flashKeepBitsBytes differs from FlashAttentionConfig.h\");\n";
  check("fuse::kFlashBackwardThreads", kFlashBackwardThreads);
  check("fuse::kFlashBackwardBlockM", kFlashBackwardBlockM);
  check("fuse::kFlashTmaConsumers", kFlashTmaConsumers);
  check("fuse::kFlashTmaThreads", kFlashTmaThreads);
  check("fuse::kFlashTmaBlockN", kFlashTmaBlockN);
  check("fuse::kFlashTmaStages", kFlashTmaStages);
  check("fuse::kFlashTmaQueryBuffers", kFlashTmaQueryBuffers);
  check("fuse::kFlashBackwardTmaBlockN", kFlashBackwardTmaBlockN);
  for (int d : {64, 128}) {
    check("fuse::flashForwardBlockN(" + std::to_string(d) + ")", flashForwardBlockN(d));
    check("fuse::flashForwardSharedBytes(" + std::to_string(d) + ")", flashForwardSharedBytes(d));
    check("fuse::flashBackwardSharedBytes(" + std::to_string(d) + ")", flashBackwardSharedBytes(d));
    check("fuse::flashForwardTmaSharedBytes(" + std::to_string(d) + ")",
          flashForwardTmaSharedBytes(d));
    for (bool causal : {false, true}) {
      const int m = flashBackwardTmaBlockM(d, causal, false);
      check("fuse::flashBackwardTmaBlockM(" + std::to_string(d) + ", " +
                (causal ? "true" : "false") + ", false)",
            m);
      check("fuse::flashBackwardTmaBlockM(" + std::to_string(d) + ", " +
                (causal ? "true" : "false") + ", true)",
            flashBackwardTmaBlockM(d, causal, true));
      check("fuse::flashBackwardTmaSharedBytes(" + std::to_string(d) + ", " +
                std::to_string(m) + ")",
            flashBackwardTmaSharedBytes(d, m));
    }
  }
  return s;
}

std::string flashSource() {
  std::string source;
  for (const std::string &name : helperClosure({"flash_attention.cuh"}))
    source += deviceLibraryFile(name).text;
  return source;
}

TEST(FlashAttentionNvrtc, HostConstantsMatchDevice) {
  fuse::runtime::StatusOr<fuse::runtime::CompiledModule> module =
      fuse::runtime::compileWithNvrtc(flashSource() + constantChecks(), "flash_constants", {});
  ASSERT_TRUE(module.ok()) << module.status().message();
  // Shared memory stays within one H100 SM's 227 KiB opt-in limit.
  EXPECT_LE(flashForwardSharedBytes(128), 227 * 1024);
  EXPECT_LE(flashBackwardSharedBytes(128), 227 * 1024);
  EXPECT_LE(flashForwardTmaSharedBytes(128), 227 * 1024);
  EXPECT_LE(flashBackwardTmaSharedBytes(128, flashBackwardTmaBlockM(128, false, false)), 227 * 1024);
}

TEST(FlashAttentionNvrtc, EveryVariantCompilesWithoutSpills) {
  std::string source = flashSource();
  for (const char *type : {"fuse::bf16", "fuse::f16"})
    for (int d : {64, 128})
      source +=
          wrappers(type, d, std::string(type[6] == 'b' ? "bf16_" : "f16_") + std::to_string(d));
  fuse::runtime::StatusOr<fuse::runtime::CompiledModule> module =
      fuse::runtime::compileWithNvrtc(source, "flash_all", {});
  ASSERT_TRUE(module.ok()) << module.status().message();
  // Per type and head dim: 3 forwards, the cp.async preprocess and backward,
  // 2 TMA backwards (one reading a keep mask under dropout) with their
  // preprocesses, the keep-mask draw, the dQ conversion.
  ASSERT_EQ(module->kernels.size(), 44u) << module->log;
  for (const fuse::runtime::KernelResources &kernel : module->kernels) {
    EXPECT_EQ(kernel.spillStoreBytes, 0) << kernel.name << "\n" << module->log;
    EXPECT_EQ(kernel.spillLoadBytes, 0) << kernel.name << "\n" << module->log;
    EXPECT_LE(kernel.registers, 255) << kernel.name;
    std::printf("%-22s %3d registers\n", kernel.name.c_str(), kernel.registers);
  }
  EXPECT_EQ(module->log.find("warning"), std::string::npos) << module->log;
}

// FlashAttentionGpuTests hand the executor executables built by hand
// (FlashAttentionExecutable.h); the executor refuses any that
// validateExecutable does. Checked here, where there is no GPU, for every
// kind of launch they make.
TEST(FlashAttentionNvrtc, HandBuiltExecutablesAreValid) {
  using fuse::testing::FlashCase;
  using fuse::testing::FlashMask;
  for (bool tma : {false, true})
    for (FlashMask mask : {FlashMask::None, FlashMask::PerBatch, FlashMask::KeysOnly})
      for (int kvHeads : {1, 2}) {
        FlashCase c;
        c.batch = 2, c.qHeads = 2, c.kvHeads = kvHeads, c.tq = 70, c.tk = 130;
        c.headDim = 128;
        c.mask = mask;
        c.dropout = mask == FlashMask::KeysOnly ? 0.1f : 0.0f;
        c.tmaForward = c.tmaBackward = tma;
        fuse::runtime::Status status = fuse::runtime::validateExecutable(
            fuse::testing::makeFlashExecutable(c), "flash");
        EXPECT_TRUE(status.ok()) << status.message();
      }
  // Dropout where the TMA backward reads a keep mask (tk % 4 == 0).
  FlashCase c;
  c.batch = 2, c.qHeads = 2, c.tq = 70, c.tk = 128, c.headDim = 64, c.dropout = 0.1f;
  c.tmaForward = c.tmaBackward = true;
  const fuse::runtime::Executable exe = fuse::testing::makeFlashExecutable(c);
  EXPECT_EQ(exe.kernels.size(), 5u) << "the keep-mask draw joins the four flash kernels";
  fuse::runtime::Status status = fuse::runtime::validateExecutable(exe, "flash");
  EXPECT_TRUE(status.ok()) << status.message();
}

} // namespace
