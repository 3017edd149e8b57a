//===- CompileApi.cpp - fuseCompile and what an executable says about itself ===//
//
// A graph's text -> the compile driver (include/fuse/Driver/Driver.h: parse
// and verify, entry function, fuse-pipeline unless the graph is planned
// already, code generation) -> runtime::Executable. Diagnostics are captured
// as the error message, with line and column.
//
//===----------------------------------------------------------------------===//

#include "Handles.h"

#include "fuse/Driver/Driver.h"
#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Support/HostTensor.h"
#ifdef FUSE_ENABLE_CUDA
#include "fuse/Runtime/Executor.h"
#endif

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace ::fuse::capi;
namespace rt = ::fuse::runtime;

namespace {

std::string orDefault(const char *value, const char *fallback) {
  return value && *value ? std::string(value) : std::string(fallback);
}

/// The target when the caller names none: the current GPU's.
FailureOr<std::string> currentArch(std::string &error) {
#ifdef FUSE_ENABLE_CUDA
  rt::StatusOr<rt::DeviceInfo> device = rt::queryDevice();
  if (device)
    return device->arch();
  error = device.status().message() + " (name the target architecture, e.g. "
                                      "arch=\"sm_90a\", to compile without one)";
#else
  error = "this build has no CUDA backend: name the target architecture "
          "(e.g. arch=\"sm_90a\")";
#endif
  return failure();
}

FuseExecutable *compile(const char *text, size_t size,
                        const FuseCompileOptions *options) {
  if (!text) {
    setLastError("fuseCompile: the graph text is NULL");
    return nullptr;
  }
  FuseCompileOptions none{};
  const FuseCompileOptions &opts = options ? *options : none;
  std::string sourceName = orDefault(opts.source_name, "<graph>");
  ::fuse::driver::CompileOptions compileOptions;
  compileOptions.entry = orDefault(opts.entry, "");
  compileOptions.graphName = opts.source_name && *opts.source_name
                                 ? "'" + sourceName + "'"
                                 : std::string("the graph");
  compileOptions.entryHint = "name the entry";
  compileOptions.pipeline = orDefault(opts.pipeline, "fuse-pipeline");
  compileOptions.pipelineFlag = "pipeline";
  compileOptions.arch = orDefault(opts.arch, "");
  compileOptions.defaultArch = currentArch;
  ::fuse::driver::registerPipelinePasses();

  DialectRegistry registry;
  ::fuse::driver::registerGraphDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Every diagnostic (parser, verifier, passes, code generator) is kept,
  // with its file:line:col and source line, to become the error message.
  std::string diagnostics;
  llvm::raw_string_ostream diagnosticStream(diagnostics);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(llvm::StringRef(text, size), sourceName),
      llvm::SMLoc());
  SourceMgrDiagnosticHandler handler(sourceMgr, &context, diagnosticStream);
  ::fuse::driver::Compilation compilation;
  ::fuse::driver::DriverError error;
  if (failed(::fuse::driver::compileGraph(context, sourceMgr, compileOptions,
                                          compilation, error))) {
    diagnosticStream.flush();
    std::string message = error.message;
    if (!diagnostics.empty())
      message += ":\n" + diagnostics;
    while (!message.empty() && message.back() == '\n')
      message.pop_back();
    setLastError(message);
    return nullptr;
  }
  auto *result = new FuseExecutable{std::move(compilation.executable), {}};
  for (const mlir::fuse::PhaseTime &phase : compilation.phases)
    result->compilePhases.emplace_back(phase.name, phase.seconds);
  return result;
}

void writeTensors(llvm::json::OStream &json, const char *key,
                  const std::vector<rt::TensorSpec> &tensors) {
  json.attributeArray(key, [&] {
    for (const rt::TensorSpec &spec : tensors)
      json.object([&] {
        json.attribute("name", spec.name);
        json.attribute("dtype", ::fuse::dtypeName(spec.dtype));
        json.attributeArray("shape", [&] {
          for (int64_t size : spec.shape)
            json.value(size);
        });
        json.attribute("bytes", spec.bytes());
        json.attribute("arena_offset", spec.arenaOffset);
      });
  });
}

/// (output, input) pairs where the result is copied whole out of the
/// input's memory at the end of the step: a result planned in place over a
/// donated input, or an input returned as it is. Binding the output to the
/// input's memory makes that copy a no-op the executor skips.
std::vector<std::pair<int64_t, int64_t>> donatedPairs(const rt::Executable &exe) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (const rt::CopyStep &copy : exe.copies) {
    if (copy.src.kind != rt::BufferRef::Kind::Input ||
        copy.dst.kind != rt::BufferRef::Kind::Output || copy.src.offset != 0 ||
        copy.dst.offset != 0)
      continue;
    const rt::TensorSpec &in = exe.inputs[copy.src.index];
    const rt::TensorSpec &out = exe.outputs[copy.dst.index];
    if (copy.bytes == in.bytes() && copy.bytes == out.bytes())
      pairs.emplace_back(copy.dst.index, copy.src.index);
  }
  return pairs;
}

std::string describe(const rt::Executable &exe) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  int64_t constantBytes = 0;
  for (const rt::ConstantData &constant : exe.constants)
    constantBytes += static_cast<int64_t>(constant.bytes.size());
  double flops = 0;
  for (const rt::Step &step : exe.steps)
    flops += step.flops;
  json.object([&] {
    json.attribute("entry", exe.entry);
    json.attribute("arch", exe.arch);
    writeTensors(json, "inputs", exe.inputs);
    writeTensors(json, "outputs", exe.outputs);
    json.attributeArray("donated", [&] {
      for (auto [output, input] : donatedPairs(exe))
        json.array([&] {
          json.value(output);
          json.value(input);
        });
    });
    json.attribute("arena_bytes", exe.arenaBytes);
    json.attribute("workspace_bytes", exe.workspaceBytes);
    json.attribute("constant_bytes", constantBytes);
    json.attribute("kernels", static_cast<int64_t>(exe.kernels.size()));
    json.attribute("launches", static_cast<int64_t>(exe.launches.size()));
    json.attribute("gemms", static_cast<int64_t>(exe.gemms.size()));
    json.attribute("steps", static_cast<int64_t>(exe.steps.size()));
    json.attribute("flops", flops);
    json.attributeArray("output_last_use", [&] {
      for (int64_t step : rt::outputLastUse(exe))
        json.value(step);
    });

  });
  os.flush();
  return text;
}

bool checkHandle(const void *handle, const char *function, const char *what) {
  if (handle)
    return true;
  setLastError(std::string(function) + ": the " + what + " is NULL");
  return false;
}

} // namespace

extern "C" {

FuseExecutable *fuseCompile(const char *text, size_t size,
                            const FuseCompileOptions *options) {
  return guarded<FuseExecutable *>("fuseCompile", nullptr, [&] {
    return compile(text, size, options);
  });
}

FuseExecutable *fuseLoadExecutable(const char *path) {
  return guarded<FuseExecutable *>("fuseLoadExecutable", nullptr,
                                   [&]() -> FuseExecutable * {
    if (!checkHandle(path, "fuseLoadExecutable", "path"))
      return nullptr;
    rt::StatusOr<rt::Executable> executable = rt::readExecutableFile(path);
    if (!executable)
      return fail<FuseExecutable *>(executable.status(), nullptr);
    return new FuseExecutable{std::move(*executable), {}};
  });
}

int fuseSaveExecutable(const FuseExecutable *executable, const char *path) {
  return guarded<int>("fuseSaveExecutable", 1, [&] {
    if (!checkHandle(executable, "fuseSaveExecutable", "executable") ||
        !checkHandle(path, "fuseSaveExecutable", "path"))
      return 1;
    rt::Status status = rt::writeExecutableFile(executable->executable, path);
    return status ? 0 : fail<int>(status, 1);
  });
}

void fuseFreeExecutable(FuseExecutable *executable) { delete executable; }

char *fuseDescribeExecutable(const FuseExecutable *executable) {
  return guarded<char *>("fuseDescribeExecutable", nullptr, [&]() -> char * {
    if (!checkHandle(executable, "fuseDescribeExecutable", "executable"))
      return nullptr;
    return copyString(describe(executable->executable));
  });
}

char *fuseExecutableCompilePhases(const FuseExecutable *executable) {
  return guarded<char *>("fuseExecutableCompilePhases", nullptr,
                         [&]() -> char * {
    if (!checkHandle(executable, "fuseExecutableCompilePhases", "executable"))
      return nullptr;
    std::string text;
    llvm::raw_string_ostream os(text);
    llvm::json::OStream json(os);
    json.array([&] {
      for (const auto &[name, seconds] : executable->compilePhases)
        json.array([&] {
          json.value(name);
          json.value(seconds);
        });
    });
    os.flush();
    return copyString(text);
  });
}

char *fusePlanText(const FuseExecutable *executable) {
  return guarded<char *>("fusePlanText", nullptr, [&]() -> char * {
    if (!checkHandle(executable, "fusePlanText", "executable"))
      return nullptr;
    return copyString(rt::formatPlan(executable->executable));
  });
}

} // extern "C"
