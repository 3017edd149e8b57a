//===- ExecutorProfile.cpp - Executor::profile ----------------------------===//
//
// Three measurements of one Executor, then the arithmetic (ProfileReport.cpp):
//  1. the whole step: median CUDA-graph replay (what a training loop pays);
//  2. every step: a graph of the step with an event node before each step
//     (external event records), replayed `iterations` times; step i's time is
//     the median of event i -> i+1. A graph, not plain launches, so that the
//     CPU's launch cost does not open gaps between short kernels; with graphs
//     off (or a capture refused) plain launches with events, said so;
//  3. counters: one more run per CUPTI pass with a range around each step.
//     Where CUPTI fails, estimates from the launch shape and the occupancy
//     API, and one warning in the report.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Executor.h"

#include "CudaError.h"
#include "CudaGraph.h"
#include "CuptiRangeProfiler.h"

#include <algorithm>
#include <cmath>

namespace fuse::runtime {

using detail::cudaCheck;

namespace {

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2;
}

struct Events {
  std::vector<cudaEvent_t> events;
  ~Events() {
    for (cudaEvent_t event : events)
      cudaEventDestroy(event);
  }
};

struct OwnedStream {
  cudaStream_t stream = nullptr;
  ~OwnedStream() {
    if (stream)
      cudaStreamDestroy(stream);
  }
};

/// Estimates for kernels where counters cannot be read: the share of SMs
/// that get a block, and the warps resident on a busy SM over the maximum.
void estimateCounters(Executor &executor, ProfileReport &report) {
  int device = 0, maxThreads = 2048;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&maxThreads, cudaDevAttrMaxThreadsPerMultiProcessor,
                         device);
  const Executable &exe = executor.executable();
  double sms = std::max(1, report.multiprocessors);
  for (StepProfile &step : report.steps) {
    const Step &source = exe.steps[step.index];
    if (source.kind != Step::Kind::Launch)
      continue; // cuBLASLt picks its own launch shape: nothing to estimate
    const KernelLaunch &launch = exe.launches[source.index];
    step.grid = launchGrid(launch, report.multiprocessors);
    double blocks = double(step.grid[0]) * step.grid[1] * step.grid[2];
    int threads = int(launch.block[0] * launch.block[1] * launch.block[2]);
    int perSm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &perSm, executor.kernelHandle(launch.kernel), threads,
            launch.sharedBytes) != cudaSuccess) {
      (void)cudaGetLastError();
      perSm = 0;
    }
    step.counters = CounterSource::Estimated;
    step.smEfficiency = std::min(1.0, blocks / sms);
    if (perSm > 0) {
      double resident = std::min<double>(perSm, std::ceil(blocks / sms));
      double warps = std::ceil(threads / 32.0);
      step.occupancy = std::min(1.0, resident * warps / (maxThreads / 32.0));
    }
  }
}

/// Per-step event times, median over `iterations`. Tries a graph with event
/// nodes first; `timing` says which way was used.
Status timeSteps(Executor &executor, const std::vector<void *> &inputs,
                 const std::vector<void *> &outputs, cudaStream_t stream,
                 int iterations, bool useGraph, ProfileReport &report) {
  size_t count = report.steps.size();
  Events events;
  for (size_t i = 0; i <= count; ++i) {
    cudaEvent_t event = nullptr;
    FUSE_RETURN_IF_ERROR(cudaCheck(cudaEventCreate(&event),
                                   "profiling: cudaEventCreate"));
    events.events.push_back(event);
  }
  OwnedStream capture;
  detail::StepGraph graph;
  bool graphOk = false;
  if (useGraph) {
    FUSE_RETURN_IF_ERROR(cudaCheck(
        cudaStreamCreateWithFlags(&capture.stream, cudaStreamNonBlocking),
        "profiling: cudaStreamCreate"));
    Status captured = graph.capture(
        capture.stream,
        [&](cudaStream_t s) -> Status {
          auto record = [&](size_t i) {
            return cudaCheck(cudaEventRecordWithFlags(events.events[i], s,
                                                      cudaEventRecordExternal),
                             "profiling: recording an event node");
          };
          FUSE_RETURN_IF_ERROR(executor.runWithStepHooks(inputs, outputs, s,
                                                         record, {}));
          return record(count);
        },
        inputs, outputs);
    graphOk = captured.ok();
  }
  report.timing = graphOk ? "CUDA graph replay with an event node before "
                            "every step"
                          : "plain launches with CUDA events between steps "
                            "(includes launch gaps)";
  std::vector<std::vector<double>> times(count);
  for (int it = 0; it < iterations; ++it) {
    if (graphOk) {
      FUSE_RETURN_IF_ERROR(graph.launch(stream, "profiling: timing graph"));
    } else {
      auto record = [&](size_t i) {
        return cudaCheck(cudaEventRecord(events.events[i], stream),
                         "profiling: cudaEventRecord");
      };
      FUSE_RETURN_IF_ERROR(
          executor.runWithStepHooks(inputs, outputs, stream, record, {}));
      FUSE_RETURN_IF_ERROR(record(count));
    }
    FUSE_RETURN_IF_ERROR(executor.synchronize(stream));
    for (size_t i = 0; i < count; ++i) {
      float ms = 0;
      FUSE_RETURN_IF_ERROR(cudaCheck(
          cudaEventElapsedTime(&ms, events.events[i], events.events[i + 1]),
          "profiling: cudaEventElapsedTime"));
      times[i].push_back(ms);
    }
  }
  for (size_t i = 0; i < count; ++i)
    report.steps[i].timeMs = median(times[i]);
  return Status::success();
}

/// One CUPTI range per kernel, matched to the steps; fills the measured
/// counters. A step of several kernels (a cuBLASLt call that splits K) sums
/// their cycles and bytes; its occupancy is weighted by their elapsed cycles.
Status readCounters(Executor &executor, const std::vector<void *> &inputs,
                    const std::vector<void *> &outputs, cudaStream_t stream,
                    ProfileReport &report) {
  int device = 0;
  FUSE_RETURN_IF_ERROR(cudaCheck(cudaGetDevice(&device), "cudaGetDevice"));
  size_t count = report.steps.size();
  StatusOr<std::unique_ptr<detail::CuptiRangeProfiler>> created =
      detail::CuptiRangeProfiler::create(device, 2 * count + 64);
  if (!created.ok())
    return created.status();
  detail::CuptiRangeProfiler &profiler = **created;
  auto noHook = [](size_t) { return Status::success(); };
  bool done = false;
  for (int pass = 0; pass < 16 && !done; ++pass) {
    FUSE_RETURN_IF_ERROR(profiler.beginPass());
    FUSE_RETURN_IF_ERROR(
        executor.runWithStepHooks(inputs, outputs, stream, noHook, noHook));
    FUSE_RETURN_IF_ERROR(executor.synchronize(stream));
    StatusOr<bool> ended = profiler.endPass();
    if (!ended.ok())
      return ended.status();
    done = *ended;
  }
  if (!done)
    return Status::failure("CUPTI needed more than 16 passes");
  StatusOr<std::vector<detail::RangeCounters>> ranges = profiler.results();
  if (!ranges.ok())
    return ranges.status();
  std::vector<std::string> kernelNames;
  for (const detail::RangeCounters &range : *ranges)
    kernelNames.push_back(range.name);
  StatusOr<std::vector<std::vector<size_t>>> matched =
      matchKernelsToSteps(report.steps, kernelNames);
  if (!matched.ok())
    return Status::failure("CUPTI's per-kernel ranges: " +
                           matched.status().message());
  for (size_t i = 0; i < count; ++i) {
    if ((*matched)[i].empty())
      continue; // a fill or copy: no kernel, no counters
    detail::RangeCounters sum;
    double occupancyWeighted = 0;
    for (size_t r : (*matched)[i]) {
      const detail::RangeCounters &range = (*ranges)[r];
      sum.smCyclesActive += range.smCyclesActive;
      sum.smCyclesElapsed += range.smCyclesElapsed;
      sum.smCyclesActiveMax += range.smCyclesActiveMax;
      sum.dramBytesRead += range.dramBytesRead;
      sum.dramBytesWritten += range.dramBytesWritten;
      sum.gpuTimeNs += range.gpuTimeNs;
      occupancyWeighted += range.warpsActivePct * range.smCyclesElapsed;
    }
    StepProfile &step = report.steps[i];
    step.counters = CounterSource::Measured;
    step.smEfficiency = sum.smCyclesElapsed > 0
                            ? sum.smCyclesActive / sum.smCyclesElapsed
                            : kUnknown;
    step.smEfficiencyBusiestSm = sum.smCyclesActiveMax > 0
                                     ? sum.smCyclesActive / sum.smCyclesActiveMax
                                     : kUnknown;
    step.occupancy = sum.smCyclesElapsed > 0
                         ? occupancyWeighted / sum.smCyclesElapsed / 100
                         : kUnknown;
    step.dramBytes = sum.dramBytesRead + sum.dramBytesWritten;
    step.gpuTimeMs = sum.gpuTimeNs * 1e-6;
  }
  return Status::success();
}

} // namespace

StatusOr<ProfileReport> Executor::profile(const std::vector<void *> &inputs,
                                          const std::vector<void *> &outputs,
                                          void *streamPointer,
                                          const ProfileOptions &options) {
  if (options.iterations < 1)
    return Status::failure("profiling @" + executable().entry +
                           ": iterations must be at least 1");
  auto stream = static_cast<cudaStream_t>(streamPointer);
  StatusOr<DeviceInfo> device = queryDevice();
  if (!device.ok())
    return device.status();

  ProfileReport report = describeSteps(executable());
  report.device = device->name;
  report.multiprocessors = device->multiprocessors;
  report.warmup = options.warmup;
  report.iterations = options.iterations;

  StatusOr<DeviceCeilings> datasheet = datasheetCeilings(device->name);
  if (datasheet.ok())
    report.datasheet = *datasheet;
  else
    report.ceilingsNote = datasheet.status().message();
  if (options.peakTflops > 0) {
    report.datasheet.peakTflops = options.peakTflops;
    report.datasheet.source = "--peak-tflops" +
                              (datasheet.ok() ? " (datasheet bandwidth)"
                                              : std::string());
    if (!datasheet.ok())
      report.ceilingsNote = "no datasheet entry for '" + device->name +
                            "': peak from --peak-tflops, bandwidth unknown "
                            "(run --calibrate for both)";
  }
  report.calibrated = options.calibrated;

  // 1. The whole step, as a training loop runs it (warm-up included).
  StatusOr<double> stepMs = medianStepMilliseconds(
      inputs, outputs, streamPointer, std::max(options.warmup, 1),
      options.iterations);
  if (!stepMs.ok())
    return stepMs.status();
  report.stepMs = *stepMs;

  // 2. Every step.
  bool useGraph = true;
  if (const char *sync = std::getenv("FUSE_SYNC_STEPS"); sync && *sync &&
                                                         std::string(sync) != "0")
    useGraph = false;
  FUSE_RETURN_IF_ERROR(timeSteps(*this, inputs, outputs, stream,
                                 options.iterations, useGraph, report));

  // 3. Counters, or estimates with one warning.
  Status counters = options.counters
                        ? readCounters(*this, inputs, outputs, stream, report)
                        : Status::failure("counters were not asked for");
  if (counters.ok()) {
    report.counters = CounterSource::Measured;
  } else {
    // A failed pass may leave an error on the stream or in the runtime's
    // last-error slot; the step itself must still be healthy.
    (void)cudaGetLastError();
    FUSE_RETURN_IF_ERROR(synchronize(streamPointer));
    for (StepProfile &step : report.steps) {
      step.counters = CounterSource::None;
      step.smEfficiency = step.smEfficiencyBusiestSm = step.occupancy =
          step.dramBytes = step.gpuTimeMs = kUnknown;
    }
    estimateCounters(*this, report);
    report.counters = CounterSource::Estimated;
    report.countersWarning =
        "GPU counters unavailable (" + counters.message() +
        "): SM efficiency and occupancy of kernels are ESTIMATED from launch "
        "shapes and the occupancy API; GEMMs have none; DRAM bytes are not "
        "measured";
  }
  report.executorBytes = deviceBytes();
  report.peakBytes = report.executorBytes + report.ioBytes;
  size_t freeBytes = 0, totalBytes = 0;
  if (cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess)
    report.deviceUsedBytes = static_cast<int64_t>(totalBytes - freeBytes);
  analyzeProfile(report, executable(), options.rule);
  return report;
}

} // namespace fuse::runtime
