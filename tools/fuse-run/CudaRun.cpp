//===- CudaRun.cpp - fuse-run --device=cuda -------------------------------===//
//
// The whole path a user takes: pipeline, code generation, NVRTC (through the
// cubin cache), one step on the GPU, outputs compared with the reference
// interpreter. Outputs are poisoned (all bits set: NaN for floats) before the
// run, so an element no kernel writes fails the check.
//
//===----------------------------------------------------------------------===//

#include "CudaRun.h"
#include "CompareOutputs.h"
#include "RunSupport.h"

#include "fuse/Codegen/Codegen.h"
#include "fuse/Interpreter/Interpreter.h"
#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Runtime/Executor.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <map>

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

/// "gemm", "attention", "loop", ...: what a step is, for the totals.
std::string stepKind(const rt::Executable &executable, const rt::Step &step) {
  const std::string &label = step.label;
  if (label.find("attention") != std::string::npos)
    return "attention (GEMMs + softmax)";
  switch (step.kind) {
  case rt::Step::Kind::Gemm: return "gemm (cuBLASLt)";
  case rt::Step::Kind::Fill: return "fill";
  case rt::Step::Kind::Copy: return "copy";
  case rt::Step::Kind::Launch: break;
  }
  const std::string &name =
      executable.kernels[executable.launches[step.index].kernel].name;
  std::string kind = name.substr(5); // fuse_<kind>_<n>
  return kind.substr(0, kind.rfind('_'));
}

LogicalResult printStepProfile(rt::Executor &executor,
                               const std::vector<void *> &in,
                               const std::vector<void *> &out, int top) {
  rt::StatusOr<std::vector<double>> times = executor.stepMilliseconds(in, out, nullptr);
  if (!times)
    return fail(times.status());
  const rt::Executable &executable = executor.executable();
  double total = 0;
  std::map<std::string, std::pair<double, int>> byKind;
  for (auto [step, ms] : llvm::zip(executable.steps, *times)) {
    total += ms;
    auto &entry = byKind[stepKind(executable, step)];
    entry.first += ms;
    entry.second += 1;
  }
  llvm::outs() << "profile (one step, plain launches, CUDA events between steps): "
               << llvm::format("%.3f", total) << " ms\n";
  std::vector<std::pair<std::string, std::pair<double, int>>> kinds(byKind.begin(), byKind.end());
  llvm::sort(kinds, [](auto &a, auto &b) { return a.second.first > b.second.first; });
  for (auto &[kind, entry] : kinds)
    llvm::outs() << llvm::format("  %-30s %9.3f ms %5.1f%% %5d steps\n", kind.c_str(),
                                 entry.first, 100.0 * entry.first / total, entry.second);
  std::vector<size_t> order(times->size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  llvm::sort(order, [&](size_t a, size_t b) { return (*times)[a] > (*times)[b]; });
  llvm::outs() << "slowest steps:\n";
  for (size_t i = 0; i < order.size() && i < static_cast<size_t>(top); ++i) {
    const rt::Step &step = executable.steps[order[i]];
    double gbps = step.bytes / ((*times)[order[i]] * 1e6);
    double tflops = step.flops / ((*times)[order[i]] * 1e9);
    llvm::outs() << llvm::format("  %5zu %9.3f ms %8.1f GB/s %7.1f TFLOP/s  ", order[i],
                                 (*times)[order[i]], gbps, tflops)
                 << step.label.substr(0, 110) << "\n";
  }
  return success();
}

} // namespace

LogicalResult mlir::fuse::runOnCuda(MLIRContext &context, ModuleOp module,
                                    func::FuncOp func,
                                    const std::vector<HostTensor> &inputs,
                                    const CudaRunOptions &options) {
  rt::StatusOr<rt::DeviceInfo> device = rt::queryDevice();
  if (!device)
    return fail(device.status());

  auto start = std::chrono::steady_clock::now();
  OwningOpRef<ModuleOp> planned = module.clone();
  auto plannedFunc = planned->lookupSymbol<func::FuncOp>(func.getSymName());
  if (!plannedFunc->hasAttr("fuse.arena_size")) {
    FailureOr<OwningOpRef<ModuleOp>> transformed =
        applyPipeline(context, module, options.pipeline, "--pipeline");
    if (failed(transformed))
      return failure();
    planned = std::move(*transformed);
    plannedFunc = planned->lookupSymbol<func::FuncOp>(func.getSymName());
  }
  double pipelineMs = millisecondsSince(start);
  start = std::chrono::steady_clock::now();
  FailureOr<rt::Executable> executable =
      ::fuse::codegen::buildExecutable(plannedFunc, {device->arch()});
  if (failed(executable))
    return failure();
  double codegenMs = millisecondsSince(start);
  if (!options.saveExecutable.empty())
    if (rt::Status status = rt::writeExecutableFile(*executable, options.saveExecutable); !status)
      return fail(status);

  rt::ExecutorOptions executorOptions;
  executorOptions.cacheDir = options.cacheDir;
  executorOptions.useCache = options.useCache;
  executorOptions.useCudaGraph = options.useCudaGraph;
  rt::StatusOr<std::unique_ptr<rt::Executor>> executor =
      rt::Executor::create(*executable, executorOptions);
  if (!executor)
    return fail(executor.status());
  rt::CompileReport cold = (*executor)->compileReport();
  // A second load shows what a later process pays with the cache warm.
  double cachedMs = -1;
  if (options.useCache) {
    auto again = std::chrono::steady_clock::now();
    rt::StatusOr<std::unique_ptr<rt::Executor>> second =
        rt::Executor::create(*executable, executorOptions);
    if (!second)
      return fail(second.status());
    cachedMs = millisecondsSince(again);
  }

  std::vector<rt::DeviceBuffer> inputBuffers, outputBuffers;
  if (failed(bindBuffers(*executable, inputs, inputBuffers, outputBuffers)))
    return failure();
  std::vector<void *> in = pointers(inputBuffers), out = pointers(outputBuffers);
  if (rt::Status status = (*executor)->run(in, out, nullptr); !status)
    return fail(status);
  if (rt::Status status = (*executor)->synchronize(nullptr); !status)
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
    rt::StatusOr<double> median = (*executor)->medianStepMilliseconds(
        in, out, nullptr, options.warmup, options.iterations);
    if (!median)
      return fail(median.status());
    llvm::outs() << "step: " << llvm::format("%.3f", *median) << " ms (median of "
                 << options.iterations << " after " << options.warmup
                 << " warm-up, CUDA graph " << (options.useCudaGraph ? "on" : "off")
                 << ")\n";
  }
  if (options.profileTop > 0 &&
      failed(printStepProfile(**executor, in, out, options.profileTop)))
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
