//===- FlashAttentionBench.cpp - Times the flash kernels (not a test) -----===//
//
//   FlashAttentionBench B H T D causal(0|1) [dtype bf16|f16] [variants]
//                       [--mask=keys|batch] [--dropout=P] [--draw-dropout]
//
// prints one JSON object: for the cp.async kernels ("cp_async"), the
// warp-specialised TMA ones ("tma", the forward's launch persistent as the
// code generator makes it) and the TMA ones with one forward CTA per query
// tile ("tma_cta_per_tile"), the median step time (CUDA graph
// replay, CUDA events) of the forward alone and of forward + backward (the
// forward then the three backward launches), and TFLOP/s by
// FlashAttention's convention: forward 4 B H T^2 D (halved when causal),
// backward 2.5 x the forward.
// `variants` (comma-separated, default all three) times only those, so that
// a profiler sees only their launches. `--mask` adds an additive mask
// (keys: one row [1, 1, 1, T] for every query, as an encoder's padding mask;
// batch: [B, 1, T, T]) and `--dropout` a dropout probability, each given
// after the positional arguments; `--draw-dropout` has the TMA backward draw
// its dropout decisions itself instead of reading the keep mask drawn
// before it (flash_dropout_bits.cuh), to time both. bench/attention/flash_bench.py runs it
// beside torch SDPA.
//
//===----------------------------------------------------------------------===//

#include "FlashAttentionExecutable.h"
#include "GpuTestUtil.h"

#include <cstdio>
#include <cstdlib>

using namespace fuse;
using namespace fuse::runtime;
using namespace fuse::runtime::testing;

namespace {

int fail(const std::string &message) {
  std::printf("{\"error\": \"%s\"}\n", message.c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  // Options (--mask=..., --dropout=...) may follow the positional arguments.
  fuse::testing::FlashCase c;
  while (argc > 1 && std::string(argv[argc - 1]).rfind("--", 0) == 0) {
    const std::string option = argv[--argc];
    if (option == "--mask=keys")
      c.mask = fuse::testing::FlashMask::KeysOnly;
    else if (option == "--mask=batch")
      c.mask = fuse::testing::FlashMask::PerBatch;
    else if (option.rfind("--dropout=", 0) == 0)
      c.dropout = std::strtof(option.c_str() + 10, nullptr);
    else if (option == "--draw-dropout")
      c.keepBits = false;
    else
      return fail("unknown option " + option +
                  " (--mask=keys|batch, --dropout=P, --draw-dropout)");
    if (c.dropout < 0.0f || c.dropout >= 1.0f)
      return fail("--dropout must be in [0, 1)");
  }
  if (argc < 6) {
    std::fprintf(stderr,
                 "usage: %s B H T D causal [bf16|f16] [cp_async,tma,tma_cta_per_tile] "
                 "[--mask=keys|batch] [--dropout=P] [--draw-dropout]\n",
                 argv[0]);
    return 2;
  }
  c.batch = std::atoi(argv[1]);
  c.qHeads = c.kvHeads = std::atoi(argv[2]);
  c.tq = c.tk = std::atoi(argv[3]);
  c.headDim = std::atoi(argv[4]);
  c.causal = std::atoi(argv[5]) != 0;
  c.dtype = argc > 6 && std::string(argv[6]) == "f16" ? DType::F16 : DType::BF16;
  StatusOr<DeviceInfo> device = queryDevice();
  if (!device.ok())
    return fail(device.status().message());

  const int64_t qElems = int64_t(c.batch) * c.qHeads * c.tq * c.headDim;
  std::vector<DeviceBuffer> inputs;
  for (int i = 0; i < 4; ++i)
    inputs.push_back(uploadValues(randomValues(qElems, c.dtype, 7 + i), c.dtype));
  for (int i = 0; i < 2; ++i) {
    StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(8, "seed");
    long long zero = 0;
    if (!buffer.ok() || !buffer->upload(&zero, 8).ok())
      return fail("seed buffer");
    inputs.push_back(std::move(*buffer));
  }
  if (c.mask != fuse::testing::FlashMask::None)
    inputs.push_back(uploadValues(randomValues(c.maskElements(), c.dtype, 11), c.dtype));
  const size_t dsize = dtypeSize(c.dtype);
  std::vector<DeviceBuffer> outputs;
  for (int64_t bytes : {qElems * int64_t(dsize), qElems / c.headDim * 4, qElems * int64_t(dsize),
                        qElems * int64_t(dsize), qElems * int64_t(dsize)}) {
    StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(bytes, "output");
    if (!buffer.ok())
      return fail(buffer.status().message());
    outputs.push_back(std::move(*buffer));
  }
  std::vector<void *> in, out;
  for (DeviceBuffer &b : inputs)
    in.push_back(b.data());
  for (DeviceBuffer &b : outputs)
    out.push_back(b.data());

  double fwdFlops = 4.0 * c.batch * c.qHeads * double(c.tq) * c.tk * c.headDim;
  if (c.causal)
    fwdFlops /= 2;
  std::string json = "{\"B\": " + std::to_string(c.batch) + ", \"H\": " +
                     std::to_string(c.qHeads) + ", \"T\": " + std::to_string(c.tq) +
                     ", \"D\": " + std::to_string(c.headDim) + ", \"causal\": " +
                     (c.causal ? "true" : "false") + ", \"dtype\": \"" +
                     (c.dtype == DType::BF16 ? "bf16" : "f16") + "\", \"mask\": \"" +
                     (c.mask == fuse::testing::FlashMask::None       ? "none"
                      : c.mask == fuse::testing::FlashMask::KeysOnly ? "keys"
                                                                      : "batch") +
                     "\", \"dropout\": " + std::to_string(c.dropout) +
                     ", \"keep_mask\": " + (c.keepBits ? "true" : "false");
  const int items = int(fuse::testing::flashTiles(c.tq, fuse::codegen::kFlashBlockM)) *
                    c.qHeads * c.batch;
  const char *names[3] = {"cp_async", "tma", "tma_cta_per_tile"};
  const std::string chosen = argc > 7 ? "," + std::string(argv[7]) + "," : "";
  for (int variant = 0; variant < 3; ++variant) {
    if (!chosen.empty() && chosen.find("," + std::string(names[variant]) + ",") == std::string::npos)
      continue;
    const bool tma = variant > 0;
    c.tmaForward = c.tmaBackward = tma;
    c.forwardCtas = variant == 2 ? items : 0;
    double ms[2] = {0, 0};
    for (int backward = 0; backward < 2; ++backward) {
      c.backward = backward;
      StatusOr<std::unique_ptr<Executor>> executor =
          Executor::create(fuse::testing::makeFlashExecutable(c), testOptions(true));
      if (!executor.ok())
        return fail(executor.status().message());
      std::vector<void *> outs(out.begin(), out.begin() + (backward ? 5 : 2));
      StatusOr<double> median =
          (*executor)->medianStepMilliseconds(in, outs, nullptr, 10, 50);
      if (!median.ok())
        return fail(median.status().message());
      ms[backward] = *median;
    }
    char entry[256];
    std::snprintf(entry, sizeof(entry),
                  ", \"%s\": {\"fwd_ms\": %.4f, \"fwd_bwd_ms\": %.4f, \"fwd_tflops\": %.1f, "
                  "\"fwd_bwd_tflops\": %.1f}",
                  names[variant], ms[0], ms[1], fwdFlops / (ms[0] * 1e-3) / 1e12,
                  3.5 * fwdFlops / (ms[1] * 1e-3) / 1e12);
    json += entry;
  }
  std::printf("%s}\n", json.c_str());
  return 0;
}
