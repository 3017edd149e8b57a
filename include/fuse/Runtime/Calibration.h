//===- Calibration.h - Measured ceilings of a device ------------*- C++ -*-===//
//
// Datasheet rates are leads; a device reaches less (clocks, power, the
// library's kernels). `fuse-run --calibrate` measures the two ceilings the
// profile compares against, once per device name, and caches them as a
// small JSON file beside the cubin cache:
//   <cache dir>/calibration-<device name, [A-Za-z0-9] kept>.json
//   {"schema": "fuse-calibration/1", "device": "NVIDIA H200",
//    "peak_tflops": 758.1, "bandwidth_gbps": 4180.0,
//    "gemm": "bf16 8192x8192x8192 cuBLASLt", "copy_bytes": 1073741824}
// The bandwidth counts bytes read plus bytes written, as the profile does.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_CALIBRATION_H
#define FUSE_RUNTIME_CALIBRATION_H

#include "fuse/Runtime/Profiler.h"

#include <optional>
#include <string>

namespace fuse::runtime {

/// Where `deviceName`'s calibration lives under `cacheDir` (KernelCache's
/// default directory when empty).
std::string calibrationPath(const std::string &cacheDir,
                            const std::string &deviceName);
std::string calibrationJson(const std::string &deviceName,
                            const DeviceCeilings &ceilings);
/// Fails on malformed text or a file of another device.
StatusOr<DeviceCeilings> parseCalibrationJson(const std::string &text,
                                              const std::string &deviceName);
/// The cached calibration, or nullopt when there is none (or it is unreadable).
std::optional<DeviceCeilings> loadCalibration(const std::string &cacheDir,
                                              const std::string &deviceName);

/// Times a 1 GiB device-to-device copy and a bf16 8192^3 cuBLASLt GEMM on
/// random data (median of 20 after warm-up) and writes the cache file.
/// Needs a GPU (FuseRuntime).
StatusOr<DeviceCeilings> calibrateDevice(const std::string &cacheDir);

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_CALIBRATION_H
