//===- DeviceLibraryNvrtcTest.cpp - Helper files under NVRTC --------------===//
//
// Each kernels/ file, pasted after the files it depends on, must compile with
// NVRTC for sm_90a with no include path, as the code generator's translation
// units do. A wrapper kernel per file instantiates every template for f32,
// bf16 and f16, so template bodies are compiled and run through ptxas too.
// No GPU is needed.
//
//===----------------------------------------------------------------------===//

#include "fuse/Codegen/DeviceLibrary.h"

#include <nvrtc.h>

#include <gtest/gtest.h>

#include <map>
#include <regex>

using namespace fuse::codegen;

namespace {

/// One wrapper per helper file (kernel names unique across all of them).
const std::map<std::string, std::string> &wrappers() {
  static const std::map<std::string, std::string> sources = {
      {"common.cuh", R"cu(
template <typename T>
__device__ void fuseTestCommon(const T *in, T *out, float *f) {
  f[0] = fuse::toFloat(in[0]);
  out[0] = fuse::fromFloat<T>(f[1]);
}
extern "C" __global__ void fuse_test_common(const float *a, float *b,
    const fuse::bf16 *c, fuse::bf16 *d, const fuse::f16 *e, fuse::f16 *g,
    float *f) {
  fuseTestCommon(a, b, f);
  fuseTestCommon(c, d, f);
  fuseTestCommon(e, g, f);
  f[2] = fuse::maximum(f[3], f[4]) + fuse::minimum(f[5], f[6]);
  fuse::int64_t wide = fuse::uint32_t(1) + fuse::uint16_t(2) + fuse::int32_t(3);
  f[7] = static_cast<float>(wide + fuse::uint64_t(4));
}
)cu"},
      {"math.cuh", R"cu(
extern "C" __global__ void fuse_test_math(const float *x, float *y) {
  int i = threadIdx.x;
  float v = x[i];
  y[i] = fuse::geluErf(v) + fuse::geluTanh(v) + fuse::sigmoid(v) +
         fuse::silu(v) + fuse::relu(v) + fuse::rsqrt(v) +
         fuse::reciprocal(v) + fuse::power(v, x[i + 1]);
}
)cu"},
      {"philox.cuh", R"cu(
extern "C" __global__ void fuse_test_philox(float *y, unsigned char *keep) {
  unsigned long long i = threadIdx.x;
  y[i] = fuse::philox::uniformAt(1, 2, i) + fuse::philox::normalAt(1, 2, i) +
         fuse::philox::uniformBitsAt(1, 2, i, 8);
  keep[i] = fuse::philox::bernoulliAt(1, 2, i, 0.1f);
}
)cu"},
      {"vector_io.cuh", R"cu(
template <typename T, int N>
__device__ void fuseTestVector(const T *in, T *out) {
  int i = threadIdx.x * N;
  fuse::Vec<T, N> v = fuse::loadVec<T, N>(in + i);
  fuse::Vec<T, N> w = fuse::loadVecCoherent<T, N>(out + i);
  v.v[0] = w.v[N - 1];
  fuse::storeVec(out + i, v);
}
extern "C" __global__ void fuse_test_vector_io(const float *f, float *fo,
    const fuse::bf16 *b, fuse::bf16 *bo, const fuse::f16 *h, fuse::f16 *ho,
    const long long *l, long long *lo, const int *n, int *no,
    const unsigned char *c, unsigned char *co) {
  fuseTestVector<float, 1>(f, fo); fuseTestVector<float, 2>(f, fo);
  fuseTestVector<float, 4>(f, fo);
  fuseTestVector<fuse::bf16, 1>(b, bo); fuseTestVector<fuse::bf16, 2>(b, bo);
  fuseTestVector<fuse::bf16, 4>(b, bo); fuseTestVector<fuse::bf16, 8>(b, bo);
  fuseTestVector<fuse::f16, 1>(h, ho); fuseTestVector<fuse::f16, 2>(h, ho);
  fuseTestVector<fuse::f16, 4>(h, ho); fuseTestVector<fuse::f16, 8>(h, ho);
  fuseTestVector<long long, 1>(l, lo); fuseTestVector<long long, 2>(l, lo);
  fuseTestVector<int, 1>(n, no); fuseTestVector<int, 2>(n, no);
  fuseTestVector<int, 4>(n, no);
  fuseTestVector<unsigned char, 1>(c, co); fuseTestVector<unsigned char, 2>(c, co);
  fuseTestVector<unsigned char, 4>(c, co); fuseTestVector<unsigned char, 8>(c, co);
  fuseTestVector<unsigned char, 16>(c, co);
  extern __shared__ __align__(16) unsigned char staged[];
  fuse::startCopyToShared(reinterpret_cast<float *>(staged), f, 64, threadIdx.x, 32);
  fuse::startCopyToShared(reinterpret_cast<fuse::bf16 *>(staged), b, 64, threadIdx.x, 32);
  fuse::startCopyToShared(reinterpret_cast<fuse::f16 *>(staged), h, 7, threadIdx.x, 32);
  fuse::startCopyToShared(staged, c, 5, threadIdx.x, 32);
  fuse::finishCopiesToShared();
}
)cu"},
      {"reductions.cuh", R"cu(
extern "C" __global__ void fuse_test_reductions(const float *x, float *y) {
  __shared__ float scratch[32];
  float v = x[blockIdx.x * blockDim.x + threadIdx.x];
  float a = fuse::warpReduceSum(v) + fuse::warpReduceMax(v) +
            fuse::warpReduceMin(v);
  float b = fuse::blockReduceSum(v, scratch) +
            fuse::blockReduceMax(v, scratch) + fuse::blockReduceMin(v, scratch);
  fuse::atomicMaxFloat(y, a + b);
  fuse::atomicMinFloat(y + 1, a - b);
}
)cu"},
      {"flash_common.cuh", R"cu(
extern "C" __global__ void fuse_test_flash_common(int *o) {
  o[0] = fuse::flashForwardSharedBytes(64) + fuse::flashBackwardSharedBytes(128);
}
)cu"},
      {"flash_wgmma.cuh", R"cu(
extern "C" __global__ void __launch_bounds__(128) fuse_test_flash_wgmma(
    const fuse::bf16 *x, float *y) {
  extern __shared__ __align__(1024) unsigned char tile[];
  const unsigned s = fuse::flash::sharedAddress(tile);
  fuse::wgmma::loadTile<fuse::bf16, 64, 64, 128>(s, x, 64, 64);
  fuse::flash::cpAsyncCommit();
  fuse::flash::cpAsyncWait<0>();
  fuse::wgmma::asyncProxyFence();
  __syncthreads();
  float d[32];
  fuse::wgmma::fence();
  fuse::wgmma::Mma<fuse::bf16, 64>::ss<0, 1>(d, fuse::wgmma::kMajor<64, 64>(s, 0, 0),
                                             fuse::wgmma::mnMajor<64, 64>(s, 0), 0);
  fuse::wgmma::commit();
  fuse::wgmma::wait<0>();
  fuse::wgmma::pin(d);
  const unsigned a[4] = {1u, 2u, 3u, 4u};
  float e[64];
  fuse::wgmma::fence();
  fuse::wgmma::Mma<fuse::f16, 128>::rs<1>(e, a, fuse::wgmma::mnMajor<64, 128>(s, 16), 0);
  fuse::wgmma::commit();
  fuse::wgmma::wait<0>();
  fuse::wgmma::pin(e);
  y[threadIdx.x] = d[threadIdx.x % 32] + e[threadIdx.x % 64];
}
)cu"},
      {"flash_forward.cuh", R"cu(
extern "C" __global__ void __launch_bounds__(256) fuse_test_flash_fwd(
    const fuse::bf16 *q, const fuse::bf16 *k, const fuse::bf16 *v,
    const long long *s, fuse::bf16 *o, float *l, fuse::FlashParams p) {
  fuse::flashAttentionForward<fuse::bf16, 64>(q, k, v, nullptr, s, s, o, l, p);
}
)cu"},
      {"tma.cuh", R"cu(
extern "C" __global__ void __launch_bounds__(256, 1) fuse_test_tma(
    const __grid_constant__ fuse::TensorMap m, float *o) {
  __shared__ __align__(1024) unsigned char tile[1024];
  __shared__ __align__(8) unsigned long long barrier;
  const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(tile));
  const unsigned bar = static_cast<unsigned>(__cvta_generic_to_shared(&barrier));
  if (threadIdx.x == 0) {
    fuse::tma::initBarrier(bar, 1);
    fuse::tma::fenceBarrierInit();
  }
  __syncthreads();
  if (threadIdx.x < 128) {
    fuse::tma::lowerRegisters<24>();
    if (threadIdx.x == 0) {
      fuse::tma::prefetch(m);
      fuse::tma::expectBytes(bar, 1024);
      fuse::tma::load4d(s, m, bar, 0, 0, 0, 0);
    }
  } else {
    fuse::tma::raiseRegisters<240>();
    fuse::tma::wait(bar, 0);
    fuse::tma::namedArrive<1>(128);
    fuse::tma::namedSync<1>(128);
    fuse::tma::arrive(bar);
    o[threadIdx.x] = tile[threadIdx.x];
  }
}
)cu"},
      {"flash_forward_tma.cuh", R"cu(
extern "C" __global__ void __launch_bounds__(384, 1) fuse_test_flash_fwd_tma(
    const __grid_constant__ fuse::TensorMap q, const __grid_constant__ fuse::TensorMap k,
    const __grid_constant__ fuse::TensorMap v, fuse::f16 *o, float *l, fuse::FlashParams p) {
  fuse::flashAttentionForwardTma<fuse::f16, 128>(q, k, v, nullptr, nullptr, nullptr, o, l, p);
}
)cu"},
      {"flash_dropout_bits.cuh", R"cu(
extern "C" __global__ void __launch_bounds__(128) fuse_test_flash_dropout_bits(
    const long long *seed, const long long *offset, unsigned long long *bits,
    fuse::FlashParams p) {
  fuse::flashDropoutKeepBits(seed, offset, bits, p);
}
)cu"},
      {"flash_backward_tma.cuh", R"cu(
extern "C" __global__ void __launch_bounds__(384, 1) fuse_test_flash_bwd_tma(
    const __grid_constant__ fuse::TensorMap q, const __grid_constant__ fuse::TensorMap k,
    const __grid_constant__ fuse::TensorMap v, const __grid_constant__ fuse::TensorMap d,
    const __grid_constant__ fuse::TensorMap a, const float *s, fuse::bf16 *dk,
    fuse::bf16 *dv, fuse::FlashParams p) {
  fuse::flashAttentionBackwardTma<fuse::bf16, 64, 64>(q, k, v, d, a, nullptr, nullptr, nullptr,
                                                  nullptr, s, dk, dv, p);
}
)cu"},
      {"flash_backward.cuh", R"cu(
extern "C" __global__ void __launch_bounds__(256) fuse_test_flash_bwd(
    const fuse::f16 *o, const fuse::f16 *d, const float *l, float *s, float *a,
    fuse::f16 *dq, fuse::FlashParams p) {
  fuse::flashBackwardPreprocess<fuse::f16, 64, 64>(o, d, l, s, a, p);
  fuse::flashBackwardConvertDq<fuse::f16, 64>(a, dq, p);
}
)cu"},
      {"flash_attention.cuh", R"cu(
extern "C" __global__ void fuse_test_flash_attention(int *o) {
  o[0] = fuse::kFlashBlockM;
}
)cu"},
      {"tensor_map.cuh", R"cu(
extern "C" __global__ void fuse_test_tensor_map(unsigned long long *out,
    const __grid_constant__ fuse::TensorMap map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(&map) : "memory");
  out[threadIdx.x] = map.opaque[threadIdx.x % 16];
}
)cu"},
      {"attention_softmax.cuh", R"cu(
template <typename T>
__device__ void fuseTestAttention(const float *s, float *lse, const float *dp,
                                  const T *dout, const T *out, T *p, T *ds,
                                  int tq, int tk, int dv, bool causal) {
  fuse::attentionSoftmaxForward<T>(s, p, lse, tq, tk, causal);
  fuse::attentionProbabilities<T>(s, lse, p, tq, tk, causal);
  fuse::attentionSoftmaxBackward<T>(s, lse, dp, dout, out, ds, tq, tk, dv,
                                    0.125f, causal);
}
extern "C" __global__ void __launch_bounds__(fuse::kAttentionBlock)
fuse_test_attention_softmax(const float *s, float *lse, const float *dp,
    const float *f, float *fo, const fuse::bf16 *b, fuse::bf16 *bo,
    const fuse::f16 *h, fuse::f16 *ho, int tq, int tk, int dv, bool causal) {
  fuseTestAttention(s, lse, dp, f, f, fo, fo, tq, tk, dv, causal);
  fuseTestAttention(s, lse, dp, b, b, bo, bo, tq, tk, dv, causal);
  fuseTestAttention(s, lse, dp, h, h, ho, ho, tq, tk, dv, causal);
}
)cu"},
  };
  return sources;
}

struct CompileResult {
  bool ok = false;
  std::string log;
  size_t cubinBytes = 0;
};

CompileResult compile(const std::string &source, const std::string &name,
                      std::vector<const char *> extraOptions = {}) {
  CompileResult result;
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source.c_str(), name.c_str(), 0, nullptr,
                         nullptr) != NVRTC_SUCCESS) {
    result.log = "nvrtcCreateProgram failed";
    return result;
  }
  std::vector<const char *> options = {"--gpu-architecture=sm_90a",
                                       "-std=c++17"};
  options.insert(options.end(), extraOptions.begin(), extraOptions.end());
  nvrtcResult status = nvrtcCompileProgram(
      program, static_cast<int>(options.size()), options.data());
  size_t logSize = 0;
  nvrtcGetProgramLogSize(program, &logSize);
  result.log.resize(logSize);
  nvrtcGetProgramLog(program, result.log.data());
  result.log = result.log.c_str(); // drop the terminating NUL
  result.ok = status == NVRTC_SUCCESS;
  if (result.ok)
    nvrtcGetCUBINSize(program, &result.cubinBytes);
  nvrtcDestroyProgram(&program);
  return result;
}

std::string withClosure(const std::vector<std::string> &names) {
  std::string source;
  for (const std::string &name : helperClosure(names))
    source += deviceLibraryFile(name).text;
  return source;
}

TEST(DeviceLibraryNvrtc, EveryFileHasAWrapper) {
  for (const DeviceLibraryFile &file : deviceLibrary())
    EXPECT_EQ(wrappers().count(file.name), 1u)
        << file.name << ": add a wrapper kernel to this test";
}

TEST(DeviceLibraryNvrtc, EachFileCompilesWithItsClosureAlone) {
  for (const DeviceLibraryFile &file : deviceLibrary()) {
    auto wrapper = wrappers().find(file.name);
    if (wrapper == wrappers().end())
      continue;
    CompileResult result =
        compile(withClosure({file.name}) + wrapper->second, file.name + ".cu");
    EXPECT_TRUE(result.ok) << file.name << ":\n" << result.log;
    EXPECT_EQ(result.log, "") << file.name << " compiles with warnings";
    EXPECT_GT(result.cubinBytes, 0u) << file.name;
  }
}

/// The whole library in one unit, in deviceLibrary() order: no two files
/// clash, and the helpers also build under --use_fast_math (which users may
/// ask for; the conversions are asm and do not change under it).
TEST(DeviceLibraryNvrtc, AllFilesCompileTogether) {
  std::string source;
  for (const DeviceLibraryFile &file : deviceLibrary())
    source += file.text;
  for (const auto &[name, wrapper] : wrappers())
    source += wrapper;
  for (bool fastMath : {false, true}) {
    CompileResult result =
        compile(source, "all.cu",
                fastMath ? std::vector<const char *>{"--use_fast_math"}
                         : std::vector<const char *>{});
    EXPECT_TRUE(result.ok) << result.log;
    EXPECT_EQ(result.log, "");
  }
}

/// Register-held attention rows must stay in registers: a spill would turn
/// the single read of each score into local-memory traffic. One kernel per
/// function and type, as the code generator emits them, with tk at run time
/// so that every row form is compiled in.
TEST(DeviceLibraryNvrtc, AttentionSoftmaxDoesNotSpill) {
  std::string kernels;
  for (const char *type : {"float", "fuse::bf16", "fuse::f16"}) {
    std::string t = type, suffix = std::to_string(kernels.size());
    kernels += "extern \"C\" __global__ void __launch_bounds__(256) fwd" +
               suffix + "(const float *s, " + t +
               " *p, float *lse, int tq, int tk, bool causal) {\n"
               "  fuse::attentionSoftmaxForward<" + t +
               ">(s, p, lse, tq, tk, causal);\n}\n";
    kernels += "extern \"C\" __global__ void __launch_bounds__(256) probs" +
               suffix + "(const float *s, const float *lse, " + t +
               " *p, int tq, int tk, bool causal) {\n"
               "  fuse::attentionProbabilities<" + t +
               ">(s, lse, p, tq, tk, causal);\n}\n";
    kernels += "extern \"C\" __global__ void __launch_bounds__(256) bwd" +
               suffix + "(const float *s, const float *lse, const float *dp, "
               "const " + t + " *dout, const " + t + " *out, " + t +
               " *ds, int tq, int tk, int dv, float scale, bool causal) {\n"
               "  fuse::attentionSoftmaxBackward<" + t +
               ">(s, lse, dp, dout, out, ds, tq, tk, dv, scale, causal);\n}\n";
  }
  CompileResult result = compile(withClosure({"attention_softmax.cuh"}) + kernels,
                                 "attention.cu", {"--ptxas-options=--verbose"});
  ASSERT_TRUE(result.ok) << result.log;
  std::regex spills("(\\d+) bytes spill stores, (\\d+) bytes spill loads");
  int functions = 0;
  for (std::sregex_iterator it(result.log.begin(), result.log.end(), spills),
       end;
       it != end; ++it, ++functions)
    EXPECT_TRUE((*it)[1] == "0" && (*it)[2] == "0") << result.log;
  EXPECT_EQ(functions, 9) << result.log;
}

} // namespace
