//===- Calibration.cpp - Measure a device's two ceilings ------------------===//
//
// Two tiny Executables run through the ordinary Executor, so the ceilings
// are what Fuse's own path reaches: a 1 GiB device-to-device copy (a Copy
// step; bandwidth counts bytes read plus written) and a bf16 8192^3 cuBLASLt
// GEMM with bf16 output (a Gemm step), each the median of 20 graph replays
// after warm-up. GEMM inputs are random (zeros run faster on tensor cores
// and would flatter the peak). The result is cached per device name
// (Calibration.h).
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Calibration.h"
#include "fuse/Runtime/Executor.h"
#include "fuse/Support/PrivateDirectory.h"

#include "CudaError.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

namespace fuse::runtime {

namespace {

constexpr int64_t kCopyBytes = int64_t(1) << 30;
constexpr int64_t kGemmSize = 8192;

ExecutorOptions calibrationOptions(const std::string &cacheDir) {
  ExecutorOptions options;
  options.cacheDir = cacheDir;
  options.progress = false;
  return options;
}

StatusOr<double> timeExecutable(const Executable &exe,
                                 const std::string &cacheDir,
                                 const std::vector<void *> &inputs,
                                 const std::vector<void *> &outputs) {
  StatusOr<std::unique_ptr<Executor>> executor =
      Executor::create(exe, calibrationOptions(cacheDir));
  if (!executor.ok())
    return executor.status();
  return (*executor)->medianStepMilliseconds(inputs, outputs, nullptr, 3, 20);
}

StatusOr<double> copyGBps(const std::string &arch, const std::string &cacheDir) {
  Executable exe;
  exe.entry = "calibrate_copy";
  exe.arch = arch;
  exe.inputs = {{"src", DType::F32, {kCopyBytes / 4}}};
  exe.outputs = {{"dst", DType::F32, {kCopyBytes / 4}}};
  exe.copies = {{BufferRef::input(0), BufferRef::output(0), kCopyBytes}};
  exe.steps = {{Step::Kind::Copy, 0, "calibration copy", 0,
                double(2 * kCopyBytes)}};
  StatusOr<DeviceBuffer> src = DeviceBuffer::allocate(kCopyBytes, "calibration copy source");
  if (!src.ok())
    return src.status();
  StatusOr<DeviceBuffer> dst = DeviceBuffer::allocate(kCopyBytes, "calibration copy destination");
  if (!dst.ok())
    return dst.status();
  FUSE_RETURN_IF_ERROR(src->fill(0xA5));
  StatusOr<double> ms = timeExecutable(exe, cacheDir, {src->data()}, {dst->data()});
  if (!ms.ok())
    return ms.status();
  return 2.0 * kCopyBytes / (*ms * 1e-3) / 1e9;
}

/// Random bf16 values in [-1, 1).
std::vector<uint16_t> randomBf16(size_t count, uint32_t seed) {
  std::vector<uint16_t> values(count);
  std::minstd_rand generator(seed);
  for (uint16_t &value : values) {
    float f = float(generator()) / float(std::minstd_rand::max()) * 2.0f - 1.0f;
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    value = static_cast<uint16_t>(bits >> 16);
  }
  return values;
}

StatusOr<double> gemmTflops(const std::string &arch, const std::string &cacheDir) {
  Executable exe;
  exe.entry = "calibrate_gemm";
  exe.arch = arch;
  exe.inputs = {{"a", DType::BF16, {kGemmSize, kGemmSize}},
                {"b", DType::BF16, {kGemmSize, kGemmSize}}};
  exe.outputs = {{"d", DType::BF16, {kGemmSize, kGemmSize}}};
  GemmStep gemm;
  gemm.abType = DType::BF16;
  gemm.cdType = DType::BF16;
  gemm.m = gemm.n = gemm.k = kGemmSize;
  gemm.lda = gemm.ldb = gemm.ldc = gemm.ldd = kGemmSize;
  gemm.a = BufferRef::input(0);
  gemm.b = BufferRef::input(1);
  gemm.d = BufferRef::output(0);
  exe.gemms = {gemm};
  double flops = 2.0 * kGemmSize * kGemmSize * kGemmSize;
  exe.steps = {{Step::Kind::Gemm, 0, "calibration GEMM", flops, 0}};
  int64_t bytes = kGemmSize * kGemmSize * 2;
  std::vector<DeviceBuffer> buffers;
  for (int i = 0; i < 3; ++i) {
    StatusOr<DeviceBuffer> buffer = DeviceBuffer::allocate(bytes, "calibration GEMM operand");
    if (!buffer.ok())
      return buffer.status();
    buffers.push_back(std::move(*buffer));
  }
  for (int i = 0; i < 2; ++i) {
    std::vector<uint16_t> values = randomBf16(size_t(kGemmSize * kGemmSize),
                                              std::random_device()());
    FUSE_RETURN_IF_ERROR(buffers[i].upload(values.data(), bytes));
  }
  StatusOr<double> ms = timeExecutable(
      exe, cacheDir, {buffers[0].data(), buffers[1].data()}, {buffers[2].data()});
  if (!ms.ok())
    return ms.status();
  return flops / (*ms * 1e-3) / 1e12;
}

} // namespace

StatusOr<DeviceCeilings> calibrateDevice(const std::string &cacheDir) {
  StatusOr<DeviceInfo> device = queryDevice();
  if (!device.ok())
    return device.status();
  StatusOr<double> bandwidth = copyGBps(device->arch(), cacheDir);
  if (!bandwidth.ok())
    return Status::failure("calibrating the copy: " + bandwidth.status().message());
  StatusOr<double> peak = gemmTflops(device->arch(), cacheDir);
  if (!peak.ok())
    return Status::failure("calibrating the GEMM: " + peak.status().message());
  DeviceCeilings ceilings;
  ceilings.peakTflops = *peak;
  ceilings.bandwidthGBps = *bandwidth;
  ceilings.source = "calibrated: bf16 8192^3 cuBLASLt GEMM, 1 GiB copy";
  std::string path = calibrationPath(cacheDir, device->name);
  // Beside the cubins, in a directory as private as theirs.
  std::string directoryError;
  if (!makePrivateDirectory(std::filesystem::path(path).parent_path().string(),
                            directoryError))
    return Status::failure("cannot write the calibration: " + directoryError);
  std::ofstream file(path);
  file << calibrationJson(device->name, ceilings);
  if (!file)
    return Status::failure("cannot write the calibration to " + path);
  return ceilings;
}

} // namespace fuse::runtime
