//===- Executor.h - Load and run an Executable on the GPU -------*- C++ -*-===//
//
// Compiles the executable's kernels (NVRTC, in parallel, through the cubin
// cache), loads them with cudaLibraryLoadData, allocates one arena and one
// workspace, uploads the constants, and runs the step: launches, cuBLASLt
// GEMMs (heuristic results cached per shape), fills and copies, in order, on
// the caller's stream. By default the step is captured once as a CUDA Graph
// and replayed; a new set of input/output pointers is captured anew.
//
// The API has no CUDA types: streams and device pointers are void*, so tools
// and the C API use it without CUDA headers.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_EXECUTOR_H
#define FUSE_RUNTIME_EXECUTOR_H

#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/ExecutorOptions.h"
#include "fuse/Runtime/Profiler.h"
#include "fuse/Runtime/Status.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace fuse::runtime {

/// The GPU this process would run on.
struct DeviceInfo {
  std::string name;
  int ordinal = 0;
  int computeMajor = 0, computeMinor = 0;
  int multiprocessors = 0;
  int64_t freeBytes = 0, totalBytes = 0;
  /// "sm_90a" on Hopper, "sm_80" on Ampere, ...
  std::string arch() const;
};

/// Fails with "no CUDA device: ..." where there is none (or no driver).
StatusOr<DeviceInfo> queryDevice();

/// Device memory owned by the caller of the runtime (tools, C API, tests).
class DeviceBuffer {
public:
  /// Out of memory says how much was asked and how much is free.
  static StatusOr<DeviceBuffer> allocate(int64_t bytes, const std::string &what);
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&other) noexcept;
  DeviceBuffer &operator=(DeviceBuffer &&other) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  void *data() const { return data_; }
  int64_t bytes() const { return bytes_; }
  /// The first `bytes` bytes. These three are synchronous with the whole
  /// device (cudaDeviceSynchronize): an upload is complete before work on any
  /// stream (a non-blocking one included) can read it, and a download waits
  /// for every stream's work first. Meant for tools and tests, not hot loops.
  Status upload(const void *host, int64_t bytes);
  Status download(void *host, int64_t bytes) const;
  /// Every byte set to `value` (outputs are poisoned before a run so that an
  /// element a kernel forgot to write is caught).
  Status fill(unsigned char value);

private:
  void *data_ = nullptr;
  int64_t bytes_ = 0;
};

class Executor {
public:
  /// Fails on no device, a device whose compute capability is not
  /// executable.arch's (a cubin for sm_90a runs on 9.0 only), an executable
  /// that validateExecutable refuses, NVRTC errors, a GEMM cuBLASLt cannot
  /// run, out of memory.
  static StatusOr<std::unique_ptr<Executor>>
  create(const Executable &executable, const ExecutorOptions &options);
  ~Executor();

  /// One step: `inputs` and `outputs` are device pointers in the order of
  /// Executable::inputs/outputs; `stream` is a cudaStream_t (nullptr: the
  /// legacy default stream). Returns once the work is queued. With CUDA
  /// graphs on, the first run is plain launches (it loads every kernel and
  /// names the step of a bad launch), later runs replay a graph captured once
  /// per set of input/output pointers. Not thread-safe: one run at a time.
  /// FUSE_SYNC_STEPS=1 in the environment synchronizes after every step and
  /// names the step an asynchronous error came from.
  Status run(const std::vector<void *> &inputs,
             const std::vector<void *> &outputs, void *stream);
  /// With ExecutorOptions::arenaPerRun: the device memory (`bytes`, at
  /// least Executable::arenaBytes) that the next runs use as their arena;
  /// inputs and outputs with an arena offset are read and left there. A
  /// CUDA graph is captured per arena address, as per input/output pointer.
  Status setArena(void *arena, int64_t bytes);
  /// Waits for `stream`.
  Status synchronize(void *stream);
  /// Median step time in milliseconds over `iterations` runs after
  /// `warmup` runs, timed with CUDA events on `stream`.
  StatusOr<double> medianStepMilliseconds(const std::vector<void *> &inputs,
                                          const std::vector<void *> &outputs,
                                          void *stream, int warmup,
                                          int iterations);

  /// One step run with plain launches and a CUDA event between every two
  /// steps: each step's time in milliseconds, in step order. Includes the
  /// launch gaps a CUDA graph would hide; a first look until the profiler
  /// (CUPTI) reports per-kernel times.
  StatusOr<std::vector<double>> stepMilliseconds(const std::vector<void *> &inputs,
                                                 const std::vector<void *> &outputs,
                                                 void *stream);

  /// Profiles the step (Profiler.h): the whole step's median graph replay,
  /// every step's median time (events between steps, warm), one CUPTI range
  /// per step for SM efficiency, occupancy and DRAM bytes (estimates, with
  /// one warning in the report, where counters cannot be read), then the
  /// figures, verdicts and MFU (analyzeProfile). Outputs are overwritten by
  /// the runs; inputs must hold valid data (the GEMMs read them).
  StatusOr<ProfileReport> profile(const std::vector<void *> &inputs,
                                  const std::vector<void *> &outputs,
                                  void *stream, const ProfileOptions &options);

  /// One step with plain launches; `before(i)` and `after(i)` run on the
  /// host around enqueueing step i (the profiler records events or pushes
  /// CUPTI ranges there). Either may be empty. Returns once queued.
  Status runWithStepHooks(const std::vector<void *> &inputs,
                          const std::vector<void *> &outputs, void *stream,
                          const std::function<Status(size_t)> &before,
                          const std::function<Status(size_t)> &after);
  /// Signals for work on other streams: from the next run on, signal i is
  /// recorded after step afterSteps[i] (-1: before the first step) of every
  /// run, captured graphs included; outputLastUse (Executable.h) says after
  /// which step an output is final. Replaces earlier signals. Fails on a
  /// step out of range.
  Status setSignals(const std::vector<int64_t> &afterSteps);
  /// Makes `stream` wait for signal `signal` of the run queued last (a wait
  /// queued before any run does not wait).
  Status waitSignal(size_t signal, void *stream);
  size_t numSignals() const;

  /// Kernel `index` of Executable::kernels as loaded (a cudaKernel_t), for
  /// the occupancy API.
  void *kernelHandle(int64_t index) const;

  /// Device memory this executor holds: arena, workspace, constants and
  /// cuBLASLt's workspace (bytes allocated, not rounded by the driver); with
  /// shared scratch memory (ExecutorOptions::scratch) the constants alone.
  int64_t deviceBytes() const;

  const CompileReport &compileReport() const;
  const Executable &executable() const;

  /// CUDA graphs captured so far (each new set of pointers once, recaptures
  /// of evicted ones included), and how many are kept now: captures that
  /// grow with the runs mean pointers that never repeat.
  int64_t graphCaptures() const;
  size_t cachedGraphs() const;
  /// The runs of guarded launches a captured graph holds as conditional
  /// nodes (GraphGuard.h): 0 where the plan has none, the driver is older
  /// than CUDA 12.4 or FUSE_GRAPH_CONDITIONALS=0.
  size_t conditionalRuns() const;

  class Impl;

private:
  explicit Executor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_EXECUTOR_H
