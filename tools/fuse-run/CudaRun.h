//===- CudaRun.h - fuse-run --device=cuda -----------------------*- C++ -*-===//

#ifndef FUSE_TOOLS_FUSE_RUN_CUDARUN_H
#define FUSE_TOOLS_FUSE_RUN_CUDARUN_H

#include "fuse/Driver/Driver.h"
#include "fuse/Interpreter/Inputs.h"
#include "fuse/Support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <vector>

namespace mlir::fuse {

struct CudaRunOptions {
  bool check = false;
  int iterations = 20;
  int warmup = 3;
  bool useCudaGraph = true;
  bool useCache = true;
  std::string cacheDir;
  std::string saveExecutable;
  std::string dumpOutputs;
  /// Profile the step (Executor::profile) and print the tables; write the
  /// JSON and the Chrome trace where paths are given.
  bool profile = false;
  std::string profileJson;
  std::string tracePath;
  /// Measure and cache the device's ceilings first (Calibration.h).
  bool calibrate = false;
  double peakTflops = 0;
  bool counters = true;
};

/// Compiles the parsed graph of `compilation` for the GPU (the compile
/// driver's pipeline and code generation steps, under `compileOptions`, the
/// parsed module kept), runs it on `inputs`, prints compile times, step time
/// and kernel count; with `check`, compares every output with the CPU
/// reference interpreter's. Errors are reported and fail.
LogicalResult runOnCuda(::fuse::driver::Compilation &compilation,
                        const ::fuse::driver::CompileOptions &compileOptions,
                        const std::vector<::fuse::HostTensor> &inputs,
                        const CudaRunOptions &options);

} // namespace mlir::fuse

#endif // FUSE_TOOLS_FUSE_RUN_CUDARUN_H
