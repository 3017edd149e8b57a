//===- SessionApi.cpp - Loading an executable on the GPU and running it ---===//
//
// A thin layer over runtime::Executor: arguments are checked (counts, NULL
// pointers) before anything reaches CUDA, and every failure becomes the
// thread's last error.
//
//===----------------------------------------------------------------------===//

#include "Handles.h"

#include "fuse/Runtime/Calibration.h"
#include "fuse/Runtime/Executor.h"
#include "fuse/Runtime/Profiler.h"
#include "fuse/Runtime/ScratchMemory.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <vector>

using namespace ::fuse::capi;
namespace rt = ::fuse::runtime;

FuseSession::~FuseSession() = default;

namespace {

template <typename Fill> std::string jsonObject(Fill fill) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os);
  json.object([&] { fill(json); });
  os.flush();
  return text;
}

/// The pointers of one side of the signature, or why they cannot be bound
/// (a value found or left in the arena needs none).
rt::StatusOr<std::vector<void *>>
bindPointers(void *const *pointers, size_t count,
             const std::vector<rt::TensorSpec> &specs, const char *side) {
  if (count != specs.size())
    return rt::Status::failure(
        "the step takes " + std::to_string(specs.size()) + " " + side + "s, " +
        std::to_string(count) + " were given");
  if (count > 0 && !pointers)
    return rt::Status::failure(std::string("the ") + side + " pointer array is NULL");
  std::vector<void *> bound(pointers, pointers + count);
  for (size_t i = 0; i < count; ++i)
    if (!bound[i] && specs[i].bytes() > 0 && specs[i].arenaOffset < 0)
      return rt::Status::failure(std::string(side) + " '" + specs[i].name +
                                 "' (#" + std::to_string(i) + ") is NULL");
  return bound;
}

rt::Status bindStep(FuseSession *session, void *const *inputs, size_t numInputs,
                    void *const *outputs, size_t numOutputs,
                    std::vector<void *> &in, std::vector<void *> &out) {
  if (!session)
    return rt::Status::failure("the session is NULL");
  const rt::Executable &exe = session->executor->executable();
  rt::StatusOr<std::vector<void *>> boundIn =
      bindPointers(inputs, numInputs, exe.inputs, "input");
  if (!boundIn)
    return boundIn.status();
  rt::StatusOr<std::vector<void *>> boundOut =
      bindPointers(outputs, numOutputs, exe.outputs, "output");
  if (!boundOut)
    return boundOut.status();
  in = std::move(*boundIn);
  out = std::move(*boundOut);
  return rt::Status::success();
}

} // namespace

extern "C" {

char *fuseDeviceInfo(void) {
  return guarded<char *>("fuseDeviceInfo", nullptr, []() -> char * {
    rt::StatusOr<rt::DeviceInfo> device = rt::queryDevice();
    if (!device)
      return fail<char *>(device.status(), nullptr);
    return copyString(jsonObject([&](llvm::json::OStream &json) {
      json.attribute("name", device->name);
      json.attribute("ordinal", device->ordinal);
      json.attribute("arch", device->arch());
      json.attribute("compute_capability", std::to_string(device->computeMajor) +
                                               "." +
                                               std::to_string(device->computeMinor));
      json.attribute("multiprocessors", device->multiprocessors);
      json.attribute("free_bytes", device->freeBytes);
      json.attribute("total_bytes", device->totalBytes);
    }));
  });
}

void fuseDefaultSessionOptions(FuseSessionOptions *options) {
  if (!options)
    return;
  *options = FuseSessionOptions{};
  options->use_cache = 1;
  options->use_cuda_graph = 1;
  options->progress = 1;
}

FuseSession *fuseCreateSession(const FuseExecutable *executable,
                               const FuseSessionOptions *options) {
  return guarded<FuseSession *>("fuseCreateSession", nullptr, [&]() -> FuseSession * {
    if (!executable) {
      setLastError("fuseCreateSession: the executable is NULL");
      return nullptr;
    }
    FuseSessionOptions defaults;
    fuseDefaultSessionOptions(&defaults);
    const FuseSessionOptions &opts = options ? *options : defaults;
    rt::ExecutorOptions executorOptions;
    executorOptions.cacheDir = opts.cache_dir ? opts.cache_dir : "";
    executorOptions.useCache = opts.use_cache != 0;
    executorOptions.useCudaGraph = opts.use_cuda_graph != 0;
    executorOptions.progress = opts.progress != 0;
    if (opts.scratch)
      executorOptions.scratch = opts.scratch->memory;
    executorOptions.arenaPerRun = opts.arena_per_run != 0;
    rt::StatusOr<std::unique_ptr<rt::Executor>> executor =
        rt::Executor::create(executable->executable, executorOptions);
    if (!executor)
      return fail<FuseSession *>(executor.status(), nullptr);
    auto *session = new FuseSession;
    session->executor = std::move(*executor);
    return session;
  });
}

void fuseFreeSession(FuseSession *session) { delete session; }

FuseScratch *fuseCreateScratch(void) {
  return guarded<FuseScratch *>("fuseCreateScratch", nullptr, []() -> FuseScratch * {
    rt::StatusOr<std::shared_ptr<rt::ScratchMemory>> memory =
        rt::ScratchMemory::create();
    if (!memory)
      return fail<FuseScratch *>(memory.status(), nullptr);
    return new FuseScratch{std::move(*memory)};
  });
}

void fuseFreeScratch(FuseScratch *scratch) { delete scratch; }

int64_t fuseScratchBytes(const FuseScratch *scratch) {
  return scratch ? scratch->memory->deviceBytes() : -1;
}

char *fuseSessionCompileReport(const FuseSession *session) {
  return guarded<char *>("fuseSessionCompileReport", nullptr, [&]() -> char * {
    if (!session) {
      setLastError("fuseSessionCompileReport: the session is NULL");
      return nullptr;
    }
    const rt::CompileReport &report = session->executor->compileReport();
    return copyString(jsonObject([&](llvm::json::OStream &json) {
      json.attribute("seconds", report.seconds);
      json.attribute("modules", report.modules);
      json.attribute("cache_hits", report.cacheHits);
      json.attribute("compiled", report.compiled);
      json.attribute("device_bytes", session->executor->deviceBytes());
      json.attribute("graph_captures", session->executor->graphCaptures());
      json.attribute("cached_graphs", static_cast<int64_t>(session->executor->cachedGraphs()));
      json.attribute("conditional_runs", static_cast<int64_t>(session->executor->conditionalRuns()));
    }));
  });
}

int fuseRun(FuseSession *session, void *const *inputs, size_t numInputs,
            void *const *outputs, size_t numOutputs, void *stream) {
  return guarded<int>("fuseRun", 1, [&] {
    std::vector<void *> in, out;
    rt::Status status = bindStep(session, inputs, numInputs, outputs, numOutputs, in, out);
    if (status)
      status = session->executor->run(in, out, stream);
    return status ? 0 : fail<int>(rt::Status::failure("fuseRun: " + status.message()), 1);
  });
}

int fuseSessionSetArena(FuseSession *session, void *arena, int64_t bytes) {
  return guarded<int>("fuseSessionSetArena", 1, [&] {
    if (!session) {
      setLastError("fuseSessionSetArena: the session is NULL");
      return 1;
    }
    rt::Status status = session->executor->setArena(arena, bytes);
    return status ? 0
                  : fail<int>(rt::Status::failure("fuseSessionSetArena: " +
                                                  status.message()),
                              1);
  });
}

int fuseSessionSetSignals(FuseSession *session, const int64_t *afterSteps,
                          size_t count) {
  return guarded<int>("fuseSessionSetSignals", 1, [&] {
    if (!session) {
      setLastError("fuseSessionSetSignals: the session is NULL");
      return 1;
    }
    if (count > 0 && !afterSteps) {
      setLastError("fuseSessionSetSignals: the step array is NULL");
      return 1;
    }
    rt::Status status = session->executor->setSignals(
        std::vector<int64_t>(afterSteps, afterSteps + count));
    return status ? 0
                  : fail<int>(rt::Status::failure("fuseSessionSetSignals: " +
                                                  status.message()),
                              1);
  });
}

int fuseSessionWaitSignal(FuseSession *session, size_t signal, void *stream) {
  return guarded<int>("fuseSessionWaitSignal", 1, [&] {
    if (!session) {
      setLastError("fuseSessionWaitSignal: the session is NULL");
      return 1;
    }
    rt::Status status = session->executor->waitSignal(signal, stream);
    return status ? 0
                  : fail<int>(rt::Status::failure("fuseSessionWaitSignal: " +
                                                  status.message()),
                              1);
  });
}

int fuseSynchronize(FuseSession *session, void *stream) {
  return guarded<int>("fuseSynchronize", 1, [&] {
    if (!session) {
      setLastError("fuseSynchronize: the session is NULL");
      return 1;
    }
    rt::Status status = session->executor->synchronize(stream);
    return status ? 0 : fail<int>(status, 1);
  });
}

void fuseDefaultProfileOptions(FuseProfileOptions *options) {
  if (!options)
    return;
  rt::ProfileOptions defaults;
  options->warmup = defaults.warmup;
  options->iterations = defaults.iterations;
  options->counters = defaults.counters ? 1 : 0;
  options->peak_tflops = defaults.peakTflops;
}

char *fuseProfile(FuseSession *session, void *const *inputs, size_t numInputs,
                  void *const *outputs, size_t numOutputs, void *stream,
                  const FuseProfileOptions *options, char **table,
                  char **trace) {
  return guarded<char *>("fuseProfile", nullptr, [&]() -> char * {
    std::vector<void *> in, out;
    rt::Status status = bindStep(session, inputs, numInputs, outputs, numOutputs, in, out);
    if (!status)
      return fail<char *>(rt::Status::failure("fuseProfile: " + status.message()), nullptr);
    FuseProfileOptions defaults;
    fuseDefaultProfileOptions(&defaults);
    const FuseProfileOptions &opts = options ? *options : defaults;
    rt::ProfileOptions profileOptions;
    profileOptions.warmup = std::max(opts.warmup, 0);
    profileOptions.iterations = std::max(opts.iterations, 1);
    profileOptions.counters = opts.counters != 0;
    profileOptions.peakTflops = opts.peak_tflops;
    rt::StatusOr<rt::DeviceInfo> device = rt::queryDevice();
    if (!device)
      return fail<char *>(device.status(), nullptr);
    // The ceilings `fuse-run --calibrate` measured, from the default cache.
    if (std::optional<rt::DeviceCeilings> calibrated =
            rt::loadCalibration("", device->name))
      profileOptions.calibrated = *calibrated;
    rt::StatusOr<rt::ProfileReport> report =
        session->executor->profile(in, out, stream, profileOptions);
    if (!report)
      return fail<char *>(report.status(), nullptr);
    if (table)
      *table = copyString(rt::formatProfile(*report));
    if (trace)
      *trace = copyString(rt::chromeTrace(*report));
    return copyString(rt::profileJson(*report));
  });
}

} // extern "C"
