//===- ModuleCompiler.cpp - Kernels to cubins, in parallel ----------------===//
//
// Why modules: NVRTC's fixed cost per program (parsing the helpers, starting
// ptxas) is large next to one small fused kernel, and one program per whole
// step would leave all but one thread idle. About two modules per thread
// balances the two and leaves room for uneven module sizes.
//
//===----------------------------------------------------------------------===//

#include "ModuleCompiler.h"

#include "fuse/Runtime/KernelCache.h"
#include "fuse/Runtime/KernelCompiler.h"
#include "fuse/Runtime/TranslationUnit.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <thread>

namespace fuse::runtime::detail {

namespace {

using Clock = std::chrono::steady_clock;

std::string joinedOptions(const NvrtcOptions &options) {
  std::string text;
  for (const std::string &option : nvrtcCompileOptions(options))
    text += (text.empty() ? "" : " ") + option;
  return text;
}

NvrtcOptions nvrtcOptionsFor(const Executable &exe) {
  NvrtcOptions options;
  options.arch = exe.arch;
  return options;
}

/// Compiles with NVRTC, adding the kernels' names to a failure's message.
Status compileFresh(const Executable &exe, ModuleBinary &module) {
  StatusOr<CompiledModule> compiled =
      compileWithNvrtc(module.source, module.name, nvrtcOptionsFor(exe));
  if (!compiled.ok())
    return Status::failure(compiled.status().message() +
                           "\n  kernels in it: " +
                           moduleKernelNames(exe, module));
  module.cubin = std::move(compiled->cubin);
  module.fromCache = false;
  return Status::success();
}

/// A one-line progress report rewritten in place with '\r'.
class Progress {
public:
  Progress(bool enabled, size_t total) : enabled_(enabled), total_(total) {}
  ~Progress() {
    if (printed_)
      std::fprintf(stderr, "\n");
  }
  void update(size_t done) {
    if (!enabled_ || Clock::now() - start_ < std::chrono::seconds(1))
      return;
    std::fprintf(stderr, "\r[fuse] compiling kernels: %zu/%zu modules", done,
                 total_);
    std::fflush(stderr);
    printed_ = true;
  }

private:
  bool enabled_;
  size_t total_;
  bool printed_ = false;
  Clock::time_point start_ = Clock::now();
};

} // namespace

std::string moduleKernelNames(const Executable &exe,
                              const ModuleBinary &module) {
  std::string names;
  for (int64_t index : module.kernels)
    names += (names.empty() ? "" : ", ") + exe.kernels[index].name;
  return names;
}

int compileThreadCount(const ExecutorOptions &options) {
  if (options.compileThreads > 0)
    return options.compileThreads;
  return std::max(1u, std::thread::hardware_concurrency());
}

std::vector<std::vector<int64_t>> partitionKernels(const Executable &exe,
                                                   size_t maxModules) {
  size_t count = exe.kernels.size();
  size_t modules = std::min(count, std::max<size_t>(1, maxModules));
  std::vector<std::vector<int64_t>> groups;
  if (count == 0)
    return groups;
  // Weight = body size plus a constant for NVRTC's per-kernel overhead.
  std::vector<double> weight(count);
  double remaining = 0;
  for (size_t i = 0; i < count; ++i)
    remaining += weight[i] = 1000.0 + exe.kernels[i].body.size();
  size_t next = 0;
  for (size_t g = 0; g < modules; ++g) {
    size_t groupsLeft = modules - g;
    double target = remaining / groupsLeft;
    std::vector<int64_t> group;
    double size = 0;
    // Take at least one kernel, stop at the target, and leave at least one
    // kernel for every group still to fill.
    while (next < count && count - next > groupsLeft - 1 &&
           (group.empty() || size + weight[next] / 2 <= target)) {
      size += weight[next];
      group.push_back(static_cast<int64_t>(next++));
    }
    if (g + 1 == modules) // the last group takes whatever is left
      while (next < count) {
        size += weight[next];
        group.push_back(static_cast<int64_t>(next++));
      }
    remaining -= size;
    groups.push_back(std::move(group));
  }
  return groups;
}

StatusOr<std::vector<ModuleBinary>>
compileModules(const Executable &exe, const ExecutorOptions &options,
               CompileReport &report) {
  Clock::time_point start = Clock::now();
  int threads = compileThreadCount(options);
  std::vector<std::vector<int64_t>> groups =
      partitionKernels(exe, 2 * static_cast<size_t>(threads));

  KernelCache cache(options.cacheDir);
  if (options.useCache && !cache.problem().empty()) {
    // Compiling without the cache only costs time: say so once, go on.
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::fprintf(stderr, "fuse: warning: not using the kernel cache: %s\n",
                   cache.problem().c_str());
    });
  }
  std::string optionsText = joinedOptions(nvrtcOptionsFor(exe));
  std::string version = nvrtcVersion();
  std::vector<ModuleBinary> modules(groups.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    ModuleBinary &module = modules[i];
    module.kernels = groups[i];
    module.name = exe.entry + "_module" + std::to_string(i);
    module.source = translationUnit(exe, module.kernels);
    module.cacheKey =
        KernelCache::key(module.source, optionsText, exe.arch, version);
  }

  // Workers take the next module index until none is left; the first
  // failure (in module order) is reported.
  std::vector<Status> statuses(modules.size());
  std::atomic<size_t> nextModule{0};
  std::mutex mutex;
  std::condition_variable progressed;
  size_t done = 0;
  auto work = [&] {
    for (size_t i = nextModule++; i < modules.size(); i = nextModule++) {
      ModuleBinary &module = modules[i];
      std::optional<std::vector<char>> cached;
      if (options.useCache)
        cached = cache.lookup(module.cacheKey);
      if (cached) {
        module.cubin = std::move(*cached);
        module.fromCache = true;
      } else {
        statuses[i] = compileFresh(exe, module);
        if (statuses[i].ok() && options.useCache)
          cache.store(module.cacheKey, module.cubin);
      }
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      progressed.notify_one();
    }
  };
  size_t workerCount = std::min<size_t>(threads, modules.size());
  std::vector<std::thread> workers;
  for (size_t t = 0; t < workerCount; ++t)
    workers.emplace_back(work);
  {
    Progress progress(options.progress, modules.size());
    std::unique_lock<std::mutex> lock(mutex);
    while (done < modules.size()) {
      progressed.wait_for(lock, std::chrono::milliseconds(200));
      progress.update(done);
    }
  }
  for (std::thread &worker : workers)
    worker.join();

  for (const Status &status : statuses)
    if (!status.ok())
      return status;
  report.modules = static_cast<int64_t>(modules.size());
  for (const ModuleBinary &module : modules)
    ++(module.fromCache ? report.cacheHits : report.compiled);
  report.seconds =
      std::chrono::duration<double>(Clock::now() - start).count();
  return modules;
}

Status recompileModule(const Executable &exe, const ExecutorOptions &options,
                       ModuleBinary &module) {
  KernelCache cache(options.cacheDir);
  cache.remove(module.cacheKey);
  Status status = compileFresh(exe, module);
  if (status.ok() && options.useCache)
    cache.store(module.cacheKey, module.cubin);
  return status;
}

} // namespace fuse::runtime::detail
