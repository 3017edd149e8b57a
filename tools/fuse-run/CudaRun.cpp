//===- CudaRun.cpp - fuse-run --device=cuda -------------------------------===//
//
// The whole path a user takes: pipeline, code generation, NVRTC (through the
// cubin cache), one step on the GPU, outputs compared with the reference
// interpreter. Outputs are poisoned (all bits set: NaN for floats) before the
// run, so an element no kernel writes fails the check. --profile runs the
// executor's profiler (Profiler.h) after the checked run and timing.
//
//===----------------------------------------------------------------------===//

#include "CudaRun.h"

#include "fuse/Interpreter/Interpreter.h"
#include "fuse/Runtime/Calibration.h"
#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Runtime/Executor.h"
#include "fuse/ToolSupport/CompareOutputs.h"
#include "fuse/ToolSupport/RunSupport.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::HostTensor;
namespace rt = ::fuse::runtime;

namespace {

double millisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

LogicalResult fail(const rt::Status &status) {
  return reportError(status.message());
}

/// Device buffers for the executable's inputs (uploaded) and outputs
/// (poisoned).
LogicalResult bindBuffers(const rt::Executable &executable,
                          const std::vector<HostTensor> &inputs,
                          std::vector<rt::DeviceBuffer> &inputBuffers,
                          std::vector<rt::DeviceBuffer> &outputBuffers) {
  for (auto [spec, tensor] : llvm::zip(executable.inputs, inputs)) {
    std::vector<uint8_t> bytes = tensor.toBytes();
    rt::StatusOr<rt::DeviceBuffer> buffer = rt::DeviceBuffer::allocate(
        static_cast<int64_t>(bytes.size()), "input '" + spec.name + "'");
    if (!buffer)
      return fail(buffer.status());
    if (rt::Status status = buffer->upload(bytes.data(), bytes.size()); !status)
      return fail(status);
    inputBuffers.push_back(std::move(*buffer));
  }
  for (const rt::TensorSpec &spec : executable.outputs) {
    rt::StatusOr<rt::DeviceBuffer> buffer =
        rt::DeviceBuffer::allocate(spec.bytes(), "output '" + spec.name + "'");
    if (!buffer)
      return fail(buffer.status());
    if (rt::Status status = buffer->fill(0xFF); !status)
      return fail(status);
    outputBuffers.push_back(std::move(*buffer));
  }
  return success();
}

std::vector<void *> pointers(const std::vector<rt::DeviceBuffer> &buffers) {
  std::vector<void *> result;
  for (const rt::DeviceBuffer &buffer : buffers)
    result.push_back(buffer.data());
  return result;
}

/// Writes `text` to `path`; an error names the file.
LogicalResult writeText(const std::string &path, const std::string &text,
                        const char *what) {
  std::error_code error;
  llvm::raw_fd_ostream file(path, error);
  if (error)
    return reportError(std::string("cannot write the ") + what + " to " +
                       path + ": " + error.message());
  file << text;
  return success();
}

/// --profile: Executor::profile, the tables, the JSON and the trace.
LogicalResult profileStep(rt::Executor &executor, const std::vector<void *> &in,
                          const std::vector<void *> &out,
                          const rt::DeviceInfo &device,
                          const CudaRunOptions &options) {
  rt::ProfileOptions profileOptions;
  profileOptions.warmup = options.warmup;
  profileOptions.iterations = std::max(options.iterations, 1);
  profileOptions.counters = options.counters;
  profileOptions.peakTflops = options.peakTflops;
  if (std::optional<rt::DeviceCeilings> calibrated =
          rt::loadCalibration(options.cacheDir, device.name))
    profileOptions.calibrated = *calibrated;
  rt::StatusOr<rt::ProfileReport> report =
      executor.profile(in, out, nullptr, profileOptions);
  if (!report)
    return fail(report.status());
  // The one warning for counters that could not be read, on stderr too.
  if (!report->countersWarning.empty())
    llvm::errs() << "warning: " << report->countersWarning << "\n";
  if (!report->ceilingsNote.empty())
    llvm::errs() << "warning: " << report->ceilingsNote << "\n";
  llvm::outs() << "\n" << rt::formatProfile(*report);
  if (!options.profileJson.empty() &&
      failed(writeText(options.profileJson, rt::profileJson(*report), "profile")))
    return failure();
  if (!options.tracePath.empty() &&
      failed(writeText(options.tracePath, rt::chromeTrace(*report), "trace")))
    return failure();
  return success();
}

} // namespace

LogicalResult
mlir::fuse::runOnCuda(::fuse::driver::Compilation &compilation,
                      const ::fuse::driver::CompileOptions &compileOptions,
                      const std::vector<HostTensor> &inputs,
                      const CudaRunOptions &options) {
  rt::StatusOr<rt::DeviceInfo> device = rt::queryDevice();
  if (!device)
    return fail(device.status());

  if (options.calibrate) {
    rt::StatusOr<rt::DeviceCeilings> ceilings = rt::calibrateDevice(options.cacheDir);
    if (!ceilings)
      return fail(ceilings.status());
    llvm::outs() << "calibrated " << device->name << ": "
                 << llvm::format("%.0f", ceilings->peakTflops) << " TFLOP/s (bf16 GEMM), "
                 << llvm::format("%.0f", ceilings->bandwidthGBps)
                 << " GB/s (copy, read + write); cached in "
                 << rt::calibrationPath(options.cacheDir, device->name) << "\n";
  }

  // The parsed graph stays as it is: the reference interpreter runs it, and
  // inputs are bound, and outputs compared, by its signature.
  ::fuse::driver::CompileOptions planOptions = compileOptions;
  planOptions.keepParsed = true;
  ::fuse::driver::DriverError error;
  auto start = std::chrono::steady_clock::now();
  if (failed(::fuse::driver::planGraph(compilation, planOptions, error)))
    return reportError(error);
  func::FuncOp func = compilation.entry;
  func::FuncOp plannedFunc = compilation.planned;
  if (plannedFunc.getFunctionType() != func.getFunctionType())
    return reportError(
        "the pipeline '" + planOptions.pipeline + "' changed the signature of @" +
        func.getSymName().str() +
        " (fuse-pipeline{amp=f16} adds the loss-scaling state to a training "
        "step's arguments and results): write the transformed graph with "
        "fuse-opt and run that file");
  double pipelineMs = millisecondsSince(start);
  start = std::chrono::steady_clock::now();
  if (failed(::fuse::driver::generateExecutable(compilation, device->arch(),
                                                error)))
    return reportError(error);
  double codegenMs = millisecondsSince(start);
  const rt::Executable *executable = &compilation.executable;
  if (!options.saveExecutable.empty())
    if (rt::Status status = rt::writeExecutableFile(*executable, options.saveExecutable); !status)
      return fail(status);

  rt::ExecutorOptions executorOptions;
  executorOptions.cacheDir = options.cacheDir;
  executorOptions.useCache = options.useCache;
  executorOptions.useCudaGraph = options.useCudaGraph;
  rt::StatusOr<std::unique_ptr<rt::Executor>> created =
      rt::Executor::create(*executable, executorOptions);
  if (!created)
    return fail(created.status());
  std::unique_ptr<rt::Executor> executor = std::move(*created);
  rt::CompileReport cold = executor->compileReport();
  // Load it again, now from the warm cache: what a later process pays. The
  // first executor goes first, so the arena is never allocated twice.
  double cachedMs = -1;
  if (options.useCache) {
    executor.reset();
    auto again = std::chrono::steady_clock::now();
    rt::StatusOr<std::unique_ptr<rt::Executor>> second =
        rt::Executor::create(*executable, executorOptions);
    if (!second)
      return fail(second.status());
    cachedMs = millisecondsSince(again);
    executor = std::move(*second);
  }

  std::vector<rt::DeviceBuffer> inputBuffers, outputBuffers;
  if (failed(bindBuffers(*executable, inputs, inputBuffers, outputBuffers)))
    return failure();
  std::vector<void *> in = pointers(inputBuffers), out = pointers(outputBuffers);
  if (rt::Status status = executor->run(in, out, nullptr); !status)
    return fail(status);
  if (rt::Status status = executor->synchronize(nullptr); !status)
    return fail(status);

  std::vector<HostTensor> outputs;
  for (auto [spec, buffer] : llvm::zip(executable->outputs, outputBuffers)) {
    std::vector<uint8_t> bytes(static_cast<size_t>(spec.bytes()));
    if (rt::Status status = buffer.download(bytes.data(), spec.bytes()); !status)
      return fail(status);
    outputs.push_back(HostTensor::fromBytes(spec.dtype, spec.shape, bytes.data(), bytes.size()));
  }

  int64_t gemms = static_cast<int64_t>(executable->gemms.size());
  int64_t launches = static_cast<int64_t>(executable->launches.size());
  llvm::outs() << "device: " << device->name << " (" << device->arch() << ")\n";
  llvm::outs() << "compile: pipeline " << llvm::format("%.0f", pipelineMs)
               << " ms, codegen " << llvm::format("%.0f", codegenMs)
               << " ms, NVRTC " << llvm::format("%.2f", cold.seconds) << " s ("
               << cold.modules << " modules, " << cold.cacheHits
               << " from the cache)";
  if (cachedMs >= 0)
    llvm::outs() << "; cached start " << llvm::format("%.0f", cachedMs) << " ms";
  llvm::outs() << "\n";
  llvm::outs() << "plan: " << launches << " kernel launches ("
               << executable->kernels.size() << " distinct kernels), " << gemms
               << " cuBLASLt GEMMs, arena " << executable->arenaBytes
               << " bytes, workspace " << executable->workspaceBytes << " bytes\n";

  if (options.iterations > 0) {
    rt::StatusOr<double> median = executor->medianStepMilliseconds(
        in, out, nullptr, options.warmup, options.iterations);
    if (!median)
      return fail(median.status());
    llvm::outs() << "step: " << llvm::format("%.3f", *median) << " ms (median of "
                 << options.iterations << " after " << options.warmup
                 << " warm-up, CUDA graph " << (options.useCudaGraph ? "on" : "off")
                 << ")\n";
  }
  if (options.profile &&
      failed(profileStep(*executor, in, out, *device, options)))
    return failure();
  if (!options.dumpOutputs.empty() &&
      failed(saveOutputs(options.dumpOutputs, func, outputs)))
    return failure();
  if (!options.check)
    return success();
  FailureOr<std::vector<HostTensor>> reference = interpret(func, inputs);
  if (failed(reference))
    return failure();
  double tolerance = toleranceOfGraphs(func, plannedFunc);
  llvm::outs() << "check against the CPU reference interpreter: tolerance "
               << llvm::format("%.0e", tolerance) << "\n";
  return compareOutputs(llvm::outs(), "check", func, outputs, *reference,
                        std::vector<double>(reference->size(), tolerance));
}
