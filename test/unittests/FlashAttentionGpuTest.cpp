//===- FlashAttentionGpuTest.cpp - Flash kernels against a double reference ===//
//
// kernels/flash_attention.cuh run through the runtime (hand-built
// executables, FlashAttentionExecutable.h) on fresh random inputs and
// compared with attention computed in double on the host: forward out and
// lse, backward dq / dk / dv. Shapes sweep head dim 64 / 128, tails (1, 17,
// 100, 257), tq != tk both ways, causal, grouped-query heads, an additive
// mask with broadcast strides (fully masked rows included), and dropout,
// whose mask the host draws with kernels/philox.cuh exactly as the kernels
// and the interpreter do. Outputs are poisoned (NaN) before each run.
// Tolerance: relative error 2e-2 on out / dq / dk / dv, 1e-3 absolute on lse.
// Every case runs four ways: the cp.async kernels, the warp-specialised TMA
// forward (before the cp.async backward) launched as the code generator
// does (persistent, at most a CTA a multiprocessor, which at these sizes is
// mostly one item a CTA) and on 3 CTAs (each working through several query
// tiles, as on long sequences), and the TMA backward (after the cp.async
// forward), so that a failure names the kernel. Both forwards also run on
// scores whose row maximum rises from key tile to key tile (the online
// softmax's rescale path), and with a negative scale.
//
//===----------------------------------------------------------------------===//

#include "FlashAttentionExecutable.h"
#include "GpuTestUtil.h"

#include "philox.cuh"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::testing;
using fuse::testing::FlashCase;
using fuse::testing::FlashMask;

namespace {

constexpr uint64_t kSeed = 0x1234ABCD5678EF01ull, kOffset = 77;

struct HostData {
  std::vector<float> q, k, v, dout, mask;
};

struct Reference {
  std::vector<double> out, lse, dq, dk, dv;
};

Reference reference(const FlashCase &c, const HostData &in) {
  const int D = c.headDim, group = c.qHeads / c.kvHeads;
  const double ninf = -std::numeric_limits<double>::infinity();
  Reference r;
  r.out.assign(in.q.size(), 0.0);
  r.dq.assign(in.q.size(), 0.0);
  r.lse.assign(size_t(c.batch) * c.qHeads * c.tq, 0.0);
  r.dk.assign(in.k.size(), 0.0);
  r.dv.assign(in.v.size(), 0.0);
  std::vector<double> s(c.tk), prob(c.tk), dprob(c.tk);
  const float keepScale = 1.0f / (1.0f - c.dropout);
  for (int b = 0; b < c.batch; ++b)
    for (int h = 0; h < c.qHeads; ++h) {
      const int g = h / group;
      for (int i = 0; i < c.tq; ++i) {
        const int64_t row = (int64_t(b) * c.qHeads + h) * c.tq + i;
        const float *q = &in.q[row * D];
        double max = ninf;
        for (int j = 0; j < c.tk; ++j) {
          const float *k = &in.k[((int64_t(b) * c.kvHeads + g) * c.tk + j) * D];
          double dot = 0;
          for (int d = 0; d < D; ++d)
            dot += double(q[d]) * k[d];
          s[j] = dot * c.scale();
          if (c.mask != FlashMask::None)
            s[j] += in.mask[b * c.maskStrideB() + i * c.maskStrideQ() + j];
          if (c.causal && j > i)
            s[j] = ninf;
          max = std::max(max, s[j]);
        }
        double sum = 0;
        for (int j = 0; j < c.tk; ++j)
          sum += max == ninf ? 0.0 : std::exp(s[j] - max);
        const double lse = sum > 0 ? max + std::log(sum) : ninf;
        r.lse[row] = lse;
        const float *dO = &in.dout[row * D];
        double rowDot = 0;
        for (int j = 0; j < c.tk; ++j) {
          const float *v = &in.v[((int64_t(b) * c.kvHeads + g) * c.tk + j) * D];
          prob[j] = sum > 0 ? std::exp(s[j] - lse) : 0.0;
          double keep = 1.0;
          if (c.dropout > 0) {
            uint64_t n = uint64_t(row) * c.tk + j;
            keep = philox::uniformAt(kSeed, kOffset, n) < c.dropout ? 0.0 : keepScale;
          }
          double dOv = 0;
          for (int d = 0; d < D; ++d) {
            r.out[row * D + d] += prob[j] * keep * v[d];
            dOv += double(dO[d]) * v[d];
          }
          dprob[j] = dOv * keep;
          rowDot += prob[j] * dprob[j];
          double *dv = &r.dv[((int64_t(b) * c.kvHeads + g) * c.tk + j) * D];
          for (int d = 0; d < D; ++d)
            dv[d] += prob[j] * keep * dO[d];
        }
        for (int j = 0; j < c.tk; ++j) {
          const double dScore = prob[j] * (dprob[j] - rowDot) * c.scale();
          const int64_t kRow = ((int64_t(b) * c.kvHeads + g) * c.tk + j) * D;
          for (int d = 0; d < D; ++d) {
            r.dq[row * D + d] += dScore * in.k[kRow + d];
            r.dk[kRow + d] += dScore * q[d];
          }
        }
      }
    }
  return r;
}

/// Mask values in [-2, 2], and -inf on a pattern of keys; with PerBatch,
/// every 7th query row of batch 0 is masked entirely.
std::vector<float> makeMask(const FlashCase &c, DType dtype, uint32_t seed) {
  std::vector<float> mask = randomValues(c.maskElements(), dtype, seed);
  for (int64_t e = 0; e < c.maskElements(); ++e) {
    const int64_t j = e % c.tk, i = (e / c.tk) % std::max(1, c.tq);
    mask[e] *= 2.0f;
    if (j % 5 == 3)
      mask[e] = -INFINITY;
    if (c.mask == FlashMask::PerBatch && e < int64_t(c.tq) * c.tk && i % 7 == 2)
      mask[e] = -INFINITY;
  }
  return mask;
}

double gradientError(const std::vector<float> &got, const std::vector<double> &want) {
  double maxWant = 0;
  for (double w : want)
    maxWant = std::max(maxWant, std::fabs(w));
  return relativeError(got, want) * std::max(maxWant, 1e-30) / std::max(maxWant, 1e-3);
}

/// With `risingScores`, q . k gains 3 floor((tk - 1 - j) / 8) for key j
/// (q's first element 1, k's that ramp, exact in 16-bit floats for tk up to
/// 688): the scores rise toward the first key, which the forwards reach
/// last, by about 6 (head dim 128) or 9 (64) in the log2 domain per 128
/// keys, so a key tile's maximum passes the running one sometimes by more
/// than flash::kFlashRescaleSlackLog2 (O rescaled) and sometimes by less
/// (the stale maximum kept, probabilities above 1).
void runCase(const FlashCase &c, bool risingScores = false) {
  const uint32_t seed = freshSeed();
  SCOPED_TRACE("input seed " + std::to_string(seed));
  const int64_t qElems = int64_t(c.batch) * c.qHeads * c.tq * c.headDim;
  const int64_t kvElems = int64_t(c.batch) * c.kvHeads * c.tk * c.headDim;
  HostData in;
  in.q = randomValues(qElems, c.dtype, seed);
  in.k = randomValues(kvElems, c.dtype, seed + 1);
  if (risingScores) {
    for (int64_t row = 0; row < qElems / c.headDim; ++row)
      in.q[row * c.headDim] = 1.0f;
    for (int64_t row = 0; row < kvElems / c.headDim; ++row)
      in.k[row * c.headDim] = 3.0f * ((c.tk - 1 - row % c.tk) / 8);
  }
  in.v = randomValues(kvElems, c.dtype, seed + 2);
  in.dout = randomValues(qElems, c.dtype, seed + 3);
  if (c.mask != FlashMask::None)
    in.mask = makeMask(c, c.dtype, seed + 4);

  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(fuse::testing::makeFlashExecutable(c), testOptions(false));
  ASSERT_TRUE(executor.ok()) << executor.status().message();

  std::vector<DeviceBuffer> inputs;
  inputs.push_back(uploadValues(in.q, c.dtype));
  inputs.push_back(uploadValues(in.k, c.dtype));
  inputs.push_back(uploadValues(in.v, c.dtype));
  inputs.push_back(uploadValues(in.dout, c.dtype));
  for (uint64_t value : {kSeed, kOffset}) {
    StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(8, "seed");
    ASSERT_TRUE(buffer.ok());
    FUSE_ASSERT_OK(buffer->upload(&value, 8));
    inputs.push_back(std::move(*buffer));
  }
  if (c.mask != FlashMask::None)
    inputs.push_back(uploadValues(in.mask, c.dtype));
  const int64_t rows = int64_t(c.batch) * c.qHeads * c.tq;
  const size_t dsize = dtypeSize(c.dtype);
  std::vector<int64_t> outBytes = {qElems * int64_t(dsize), rows * 4};
  if (c.backward)
    outBytes.insert(outBytes.end(), {qElems * int64_t(dsize), kvElems * int64_t(dsize),
                                     kvElems * int64_t(dsize)});
  std::vector<DeviceBuffer> outputs;
  for (int64_t bytes : outBytes) {
    StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(bytes, "output");
    ASSERT_TRUE(buffer.ok());
    FUSE_ASSERT_OK(buffer->fill(0xFF)); // NaN: unwritten elements fail
    outputs.push_back(std::move(*buffer));
  }
  std::vector<void *> inPtrs, outPtrs;
  for (DeviceBuffer &buffer : inputs)
    inPtrs.push_back(buffer.data());
  for (DeviceBuffer &buffer : outputs)
    outPtrs.push_back(buffer.data());
  FUSE_ASSERT_OK((*executor)->run(inPtrs, outPtrs, nullptr));
  FUSE_ASSERT_OK((*executor)->synchronize(nullptr));

  const Reference want = reference(c, in);
  std::vector<float> out = downloadValues(outputs[0], qElems, c.dtype);
  std::vector<float> lse = downloadValues(outputs[1], rows, DType::F32);
  EXPECT_LE(relativeError(out, want.out), 2e-2) << "out";
  double lseError = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (std::isinf(want.lse[r])) {
      EXPECT_TRUE(std::isinf(lse[r]) && lse[r] < 0) << "lse[" << r << "] = " << lse[r];
      continue;
    }
    lseError = std::isnan(lse[r]) ? INFINITY : std::max(lseError, std::fabs(lse[r] - want.lse[r]));
  }
  EXPECT_LE(lseError, 1e-3) << "lse";
  if (!c.backward)
    return;
  // With one key the softmax is constant and dq = dk = 0 exactly; the GPU's
  // rounding noise (delta comes from the rounded out) is then measured
  // against a floor of 1e-3 instead of against zero.
  EXPECT_LE(gradientError(downloadValues(outputs[2], qElems, c.dtype), want.dq), 2e-2) << "dq";
  EXPECT_LE(gradientError(downloadValues(outputs[3], kvElems, c.dtype), want.dk), 2e-2) << "dk";
  EXPECT_LE(relativeError(downloadValues(outputs[4], kvElems, c.dtype), want.dv), 2e-2) << "dv";
}

struct Shape {
  const char *name;
  int batch, qHeads, kvHeads, tq, tk, headDim;
  bool causal;
  FlashMask mask;
  float dropout;
};

const Shape kShapes[] = {
    {"Square64", 2, 2, 2, 64, 64, 64, false, FlashMask::None, 0},
    {"Square128Causal", 1, 2, 2, 257, 257, 128, true, FlashMask::None, 0},
    {"Square64Causal", 1, 3, 3, 100, 100, 64, true, FlashMask::None, 0},
    {"ShortQueries", 2, 2, 2, 17, 257, 64, false, FlashMask::None, 0},
    {"OneQuery", 1, 2, 2, 1, 100, 128, false, FlashMask::None, 0},
    {"OneKey", 1, 2, 2, 100, 1, 64, false, FlashMask::None, 0},
    {"LongQueriesCausal", 1, 2, 2, 257, 100, 128, true, FlashMask::None, 0},
    {"ShortQueriesCausal", 1, 2, 2, 100, 257, 64, true, FlashMask::None, 0},
    {"GroupedQuery", 2, 4, 2, 130, 130, 128, true, FlashMask::None, 0},
    {"GroupedQuery64", 1, 4, 2, 100, 200, 64, false, FlashMask::None, 0},
    {"MaskPerBatch", 2, 2, 2, 100, 77, 64, false, FlashMask::PerBatch, 0},
    {"MaskKeysOnly", 2, 2, 1, 64, 130, 128, false, FlashMask::KeysOnly, 0},
    {"MaskCausal", 1, 2, 2, 100, 100, 64, true, FlashMask::PerBatch, 0},
    {"Dropout64Causal", 1, 2, 2, 100, 100, 64, true, FlashMask::None, 0.1f},
    {"Dropout128", 2, 2, 1, 64, 129, 128, false, FlashMask::None, 0.25f},
    // Keys a multiple of four: lanes share each Philox block (flash_common.cuh).
    {"MaskDropout64", 2, 2, 2, 96, 132, 64, false, FlashMask::KeysOnly, 0.1f},
    {"Dropout128Shared", 1, 2, 2, 80, 200, 128, false, FlashMask::None, 0.1f},
};

enum class Kernels { CpAsync, TmaForward, TmaForwardOnThreeCtas, TmaBackward };

class FlashAttentionGpu
    : public ::testing::TestWithParam<std::tuple<Shape, DType, Kernels>> {};

TEST_P(FlashAttentionGpu, MatchesDoubleReference) {
  FUSE_REQUIRE_GPU();
  const Shape &s = std::get<0>(GetParam());
  FlashCase c;
  c.dtype = std::get<1>(GetParam());
  c.batch = s.batch;
  c.qHeads = s.qHeads;
  c.kvHeads = s.kvHeads;
  c.tq = s.tq;
  c.tk = s.tk;
  c.headDim = s.headDim;
  c.causal = s.causal;
  c.mask = s.mask;
  c.dropout = s.dropout;
  const Kernels kernels = std::get<2>(GetParam());
  c.tmaForward = kernels == Kernels::TmaForward || kernels == Kernels::TmaForwardOnThreeCtas;
  c.forwardCtas = kernels == Kernels::TmaForwardOnThreeCtas ? 3 : 0;
  c.tmaBackward = kernels == Kernels::TmaBackward;
  runCase(c);
}

// The TMA backward drawing its dropout decisions itself, as it does where
// no keep mask is drawn before it (keys not a multiple of four, or a mask
// above kFlashKeepBitsMaxBytes): the shapes above read the mask wherever
// tk % 4 == 0, so the draws that share Philox blocks between lanes are
// checked here.
TEST(FlashAttentionGpuDropout, TmaBackwardDrawsItsOwnDecisions) {
  FUSE_REQUIRE_GPU();
  for (const Shape &s : kShapes) {
    if (s.dropout == 0)
      continue;
    SCOPED_TRACE(s.name);
    FlashCase c;
    c.batch = s.batch, c.qHeads = s.qHeads, c.kvHeads = s.kvHeads;
    c.tq = s.tq, c.tk = s.tk, c.headDim = s.headDim;
    c.causal = s.causal, c.mask = s.mask, c.dropout = s.dropout;
    c.tmaBackward = true;
    c.keepBits = false;
    runCase(c);
  }
}

// The online softmax's conditional rescale (flash::onlineSoftmaxRows) on
// scores whose maximum keeps rising from key tile to key tile, in both
// forwards, at both head dims, with and without causal masking. Forward
// only: keys of magnitude up to 141 make dq = dS K a sum of large
// cancelling terms that the 16-bit dS cannot carry to 2e-2 (dq errors of
// 3-15% there, with out, lse, dk and dv within tolerance).
TEST(FlashAttentionGpuRescale, RisingScores) {
  FUSE_REQUIRE_GPU();
  for (int headDim : {64, 128})
    for (bool causal : {false, true})
      for (bool tma : {false, true}) {
        SCOPED_TRACE("head dim " + std::to_string(headDim) + (causal ? ", causal" : "") +
                     (tma ? ", TMA forward" : ", cp.async forward"));
        FlashCase c;
        c.qHeads = c.kvHeads = 2;
        c.tq = c.tk = 384;
        c.headDim = headDim;
        c.causal = causal;
        c.tmaForward = tma;
        c.backward = false;
        runCase(c, true);
      }
}

// A negative scale: the forwards multiply the scores before taking the
// row maximum (flash::scoreScale), which a positive scale skips; forward
// and backward, both forwards, a mask and causal masking.
TEST(FlashAttentionGpuRescale, NegativeScale) {
  FUSE_REQUIRE_GPU();
  for (int headDim : {64, 128})
    for (bool tma : {false, true}) {
      SCOPED_TRACE("head dim " + std::to_string(headDim) +
                   (tma ? ", TMA kernels" : ", cp.async kernels"));
      FlashCase c;
      c.qHeads = c.kvHeads = 2;
      c.tq = 200;
      c.tk = 300;
      c.headDim = headDim;
      c.causal = headDim == 128;
      c.mask = headDim == 64 ? FlashMask::KeysOnly : FlashMask::None;
      c.negativeScale = true;
      c.tmaForward = c.tmaBackward = tma;
      runCase(c);
    }
}

// Causal items numbered head by head (flash::causalHeadMajor): on three
// CTAs with three heads, whose K and V (3 x 24000 keys x 128 x 4 bytes =
// 36.9 MB) pass the 32 MiB the numbering keeps in L2. Once, in bf16: the
// double reference over 24000 keys takes seconds.
TEST(FlashAttentionGpuNumbering, HeadMajorCausalItems) {
  FUSE_REQUIRE_GPU();
  FlashCase c;
  c.qHeads = c.kvHeads = 3;
  c.tq = 200;
  c.tk = 24000;
  c.headDim = 128;
  c.causal = true;
  c.tmaForward = true;
  c.forwardCtas = 3;
  runCase(c);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, FlashAttentionGpu,
    ::testing::Combine(::testing::ValuesIn(kShapes),
                       ::testing::Values(DType::BF16, DType::F16),
                       ::testing::Values(Kernels::CpAsync, Kernels::TmaForward,
                                         Kernels::TmaForwardOnThreeCtas,
                                         Kernels::TmaBackward)),
    [](const ::testing::TestParamInfo<FlashAttentionGpu::ParamType> &info) {
      const Kernels kernels = std::get<2>(info.param);
      return std::string(std::get<0>(info.param).name) +
             (std::get<1>(info.param) == DType::BF16 ? "_bf16" : "_f16") +
             (kernels == Kernels::CpAsync      ? ""
              : kernels == Kernels::TmaForward ? "_tmaForward"
              : kernels == Kernels::TmaForwardOnThreeCtas ? "_tmaForwardOnThreeCtas"
                                                          : "_tmaBackward");
    });

} // namespace
