//===- PlanFormatTest.cpp - The launch plan and the translation unit ------===//

#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Runtime/TranslationUnit.h"

#include "RuntimeTestUtil.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace fuse;
using namespace fuse::runtime;
using fuse::runtime::testing::makeRichExecutable;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

TEST(FormatBufferRef, NamesRegionIndexAndOffset) {
  Executable exe = makeRichExecutable();
  EXPECT_EQ(formatBufferRef(exe, BufferRef::arena(4096)), "arena+4096");
  EXPECT_EQ(formatBufferRef(exe, BufferRef::workspace(0)), "workspace+0");
  EXPECT_EQ(formatBufferRef(exe, BufferRef::input(1)), "input 1 (ids)");
  EXPECT_EQ(formatBufferRef(exe, BufferRef{BufferRef::Kind::Output, 0, 256}),
            "output 0 (y)+256");
  EXPECT_EQ(formatBufferRef(exe, BufferRef::constant(0)), "constant 0 (table)");
  // Out of range: printed, not a crash (the plan is how one debugs that).
  EXPECT_EQ(formatBufferRef(exe, BufferRef::input(9)), "input 9 (?)");
}

TEST(FormatPlan, HeaderListsSignatureMemoryAndConstants) {
  std::string plan = formatPlan(makeRichExecutable());
  EXPECT_THAT(plan, HasSubstr("executable @train_step for sm_90a\n"));
  EXPECT_THAT(plan,
              HasSubstr("  inputs: 0 x: 4x8xbf16, 1 ids: 4xi64, 2 mask: 4x4xi1 (in the arena at byte 512)\n"));
  EXPECT_THAT(plan, HasSubstr("  outputs: 0 y: 4x16xf32, 1 loss: f32\n"));
  EXPECT_THAT(plan, HasSubstr("  arena: 8192 bytes (8.00 KiB), workspace: "
                              "4096 bytes (4.00 KiB)\n"));
  EXPECT_THAT(plan, HasSubstr("  constants: 0 table: 3xf16 (6 bytes), 1 "
                              "scale: 2xi32 (8 bytes)\n"));
  EXPECT_THAT(plan, HasSubstr("  kernels: 2, helpers: common.cuh "
                              "reductions.cuh\nsteps: 10\n"));
}

TEST(FormatPlan, OneLinePerStep) {
  std::string plan = formatPlan(makeRichExecutable());
  EXPECT_THAT(plan, HasSubstr("\n  0 fill arena+0 bytes=4096  # zero: grad\n"));
  EXPECT_THAT(plan,
              HasSubstr("\n  1 launch fuse_k1 grid=(96,2,1) block=(256,1,1) "
                        "smem=1024 args=[input 0 (x), arena+4096, output 1 "
                        "(loss), workspace+128, constant 1 (scale)]  # loop: "
                        "add, mul (model.py:34)\n"));
  EXPECT_THAT(plan,
              HasSubstr("\n  2 gemm bf16 x bf16 -> f32 m=4 n=16 k=8 batch=1 "
                        "transB lda=8 ldb=8 ldc=16 ldd=16 alpha=0.5 beta=1 "
                        "epilogue=gelu_bias A=input 0 (x) B=arena+0 "
                        "C=workspace+0 D=output 0 (y) bias=arena+1024 (bf16)  "
                        "# gemm: linear (model.py:40)\n"));
  // No label, no comment.
  EXPECT_THAT(plan,
              HasSubstr("\n  3 copy input 1 (ids) -> workspace+64 bytes=32\n"));
  // A persistent launch says so after its grid.
  EXPECT_THAT(plan, HasSubstr("\n  4 launch fuse_k0 grid=(300,1,1) persistent=2/SM "
                              "block=(1,1,1) smem=0 args=[output 0 (y)+128]"));
  EXPECT_THAT(plan, HasSubstr("\n  5 gemm f16 x f16 -> f16 m=2 n=3 k=4 "
                              "batch=3 transA lda=2 ldb=3 ldd=3 strideA=8 "
                              "strideB=0 strideD=6 alpha=1 beta=0 "
                              "epilogue=relu A=arena+2048 B=arena+3072 "
                              "D=arena+5120  # batched\n"));
  EXPECT_THAT(plan, HasSubstr("epilogue=relu_bias"));
}

// Tensor maps follow the arguments, dimensions innermost first; a launch
// without maps prints no `maps=`.
TEST(FormatPlan, TensorMapsAfterArguments) {
  std::string plan = formatPlan(makeRichExecutable());
  EXPECT_THAT(plan,
              HasSubstr("\n  4 launch fuse_k0 grid=(300,1,1) persistent=2/SM block=(1,1,1) "
                        "smem=0 args=[output 0 (y)+128] maps=[input 0 (x) "
                        "bf16 dims=(8,4) strides=(16) box=(8,2), output 0 (y) "
                        "f32 dims=(16,4) strides=(64) box=(8,4) swizzle=32B, "
                        "arena+1024 f16 dims=(64,4,2) strides=(128,512) "
                        "box=(32,4,1) swizzle=64B, workspace+256 i32 "
                        "dims=(32,2,2,2,2) strides=(128,256,512,1024) "
                        "box=(32,1,2,1,2) swizzle=128B, constant 0 (table) "
                        "f16 dims=(3) box=(8)]  # loop: neg\n"));
  EXPECT_THAT(plan, HasSubstr("constant 1 (scale)]  # loop: add, mul"));
}

TEST(FormatPlan, SurvivesBadIndices) {
  Executable exe = makeRichExecutable();
  exe.steps[1].index = 12;
  exe.launches[0].kernel = 5;
  std::string plan = formatPlan(exe);
  EXPECT_THAT(plan, HasSubstr("  1 launch <no launch 12>"));
  EXPECT_THAT(plan, HasSubstr("  4 launch <no kernel 5>"));
  // A map of a rank out of range prints the rank and what the arrays hold.
  exe.launches[0].tensorMaps[4].rank = 9;
  EXPECT_THAT(formatPlan(exe),
              HasSubstr("constant 0 (table) f16 rank=9 dims=(3,1,1,1,1) "
                        "strides=(0,0,0,0) box=(8,1,1,1,1)]"));
}

//===---------------------------- translationUnit -------------------------===//

size_t at(const std::string &text, const std::string &what) {
  size_t position = text.find(what);
  EXPECT_NE(position, std::string::npos) << what << " not in:\n" << text;
  return position;
}

size_t occurrences(const std::string &text, const std::string &what) {
  size_t count = 0;
  for (size_t p = text.find(what); p != std::string::npos;
       p = text.find(what, p + 1))
    ++count;
  return count;
}

TEST(TranslationUnit, HelpersOnceInExecutableOrderThenKernels) {
  Executable exe = makeRichExecutable();
  // fuse_k1 names reductions.cuh before common.cuh; helperSources order wins.
  std::string tu = translationUnit(exe, {1, 0});
  EXPECT_EQ(tu.rfind("// Generated by Fuse from @train_step for sm_90a: "
                     "kernels fuse_k0 fuse_k1.\n",
                     0),
            0u)
      << tu;
  EXPECT_EQ(occurrences(tu, "// ---- kernels/common.cuh ----\n// common\n"), 1u);
  EXPECT_EQ(occurrences(tu, "// ---- kernels/reductions.cuh ----\n"), 1u);
  EXPECT_LT(at(tu, "kernels/common.cuh"), at(tu, "kernels/reductions.cuh"));
  EXPECT_LT(at(tu, "kernels/reductions.cuh"), at(tu, "void fuse_k0"));
  // Kernels in index order, whatever order they were asked for in.
  EXPECT_LT(at(tu, "void fuse_k0"), at(tu, "void fuse_k1"));
  EXPECT_THAT(tu, Not(HasSubstr("#include")));
  EXPECT_THAT(tu, Not(HasSubstr("#error")));
  EXPECT_EQ(translationUnit(exe), tu);
}

TEST(TranslationUnit, OnlyTheHelpersTheChosenKernelsUse) {
  Executable exe = makeRichExecutable();
  std::string tu = translationUnit(exe, {0});
  EXPECT_THAT(tu, HasSubstr("kernels/common.cuh"));
  EXPECT_THAT(tu, Not(HasSubstr("reductions")));
  EXPECT_THAT(tu, Not(HasSubstr("fuse_k1")));
  EXPECT_EQ(translationUnit(exe, {0, 0}), tu);
}

TEST(TranslationUnit, MissingPiecesBecomeErrors) {
  Executable exe = makeRichExecutable();
  exe.kernels[0].helpers.push_back("gone.cuh");
  std::string tu = translationUnit(exe, {0, 7});
  EXPECT_THAT(tu, HasSubstr("#error \"fuse: helper kernels/gone.cuh is "
                            "missing from the executable's helper sources\""));
  EXPECT_THAT(tu, HasSubstr("#error \"fuse: the executable has no kernel 7\""));
}

} // namespace
