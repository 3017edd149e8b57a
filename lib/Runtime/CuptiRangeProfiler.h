//===- CuptiRangeProfiler.h - Hardware counters per range -------*- C++ -*-===//
//
// CUPTI's range profiler (cupti_range_profiler.h with cupti_profiler_host.h,
// CUDA 12.6+): user ranges, user replay. The caller runs the same work once
// per pass (beginPass, pushRange/popRange around each step, endPass) until
// endPass says every pass was submitted; results() then evaluates each
// range's metrics. The metrics below fit in one pass on Hopper (seen on an
// H200), so a step normally runs once more.
//
// CUPTI needs the CUcontext: the runtime API's primary context, current on
// this thread, is taken through cudaGetDriverEntryPoint (nothing links
// libcuda). Every failure (no permission to read counters, a virtualised
// GPU, another profiler such as ncu attached) is a Status with CUPTI's own
// words; the executor then falls back to estimates. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_CUPTIRANGEPROFILER_H
#define FUSE_LIB_RUNTIME_CUPTIRANGEPROFILER_H

#include "fuse/Runtime/Status.h"

#include <memory>
#include <string>
#include <vector>

namespace fuse::runtime::detail {

/// One range's metric values, as CUPTI evaluates them.
struct RangeCounters {
  std::string name;
  double smCyclesActive = 0;    // sm__cycles_active.avg
  double smCyclesElapsed = 0;   // sm__cycles_elapsed.avg
  double warpsActivePct = 0;    // sm__warps_active.avg.pct_of_peak_sustained_active
  double dramBytesRead = 0;     // dram__bytes_read.sum
  double dramBytesWritten = 0;  // dram__bytes_write.sum
  double gpuTimeNs = 0;         // gpu__time_duration.sum
  double smCyclesActiveMax = 0; // sm__cycles_active.max
};

class CuptiRangeProfiler {
public:
  /// One range per kernel (CUPTI's auto range: it opens and closes a range
  /// around each kernel, as ncu measures one), room for `maxRanges` kernels
  /// per pass, on device `ordinal`. A range is named after its kernel.
  static StatusOr<std::unique_ptr<CuptiRangeProfiler>> create(int ordinal,
                                                              size_t maxRanges);
  ~CuptiRangeProfiler();
  CuptiRangeProfiler(const CuptiRangeProfiler &) = delete;
  CuptiRangeProfiler &operator=(const CuptiRangeProfiler &) = delete;

  Status beginPass();
  /// Ends the pass; true once every pass the metrics need was submitted.
  /// The work must be complete (synchronize) before results().
  StatusOr<bool> endPass();
  /// Decodes the passes and evaluates every range, in range order.
  StatusOr<std::vector<RangeCounters>> results();
  /// Passes the metrics need (1 on Hopper for ours).
  size_t passes() const { return passes_; }

  struct State;

private:
  explicit CuptiRangeProfiler(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
  size_t passes_ = 0;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_CUPTIRANGEPROFILER_H
