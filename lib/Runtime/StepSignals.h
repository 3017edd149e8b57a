//===- StepSignals.h - Events recorded at chosen points of a step -*- C++ -*-===//
//
// A data-parallel training step all-reduces each gradient bucket as soon as
// the bucket's last gradient is written, while the rest of the backward runs
// on the step's stream. The communication runs on another stream, which must
// wait for "step k of this run is done": one CUDA event per such point,
// recorded after step k of every run. Inside a stream capture the event is
// recorded as an external event node (cudaEventRecordExternal), so a replayed
// CUDA graph signals it as plain launches would. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_STEPSIGNALS_H
#define FUSE_LIB_RUNTIME_STEPSIGNALS_H

#include "fuse/Runtime/Status.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <vector>

namespace fuse::runtime::detail {

class StepSignals {
public:
  StepSignals() = default;
  StepSignals(const StepSignals &) = delete;
  StepSignals &operator=(const StepSignals &) = delete;
  ~StepSignals();

  /// Replaces the signals: signal i is recorded after step afterSteps[i]
  /// (-1: before the first step). Each must be in [-1, numSteps); `owner`
  /// names the executable in errors.
  Status reset(const std::vector<int64_t> &afterSteps, size_t numSteps,
               const std::string &owner);
  bool empty() const { return events_.empty(); }
  size_t size() const { return events_.size(); }

  /// Records, on `stream`, the signals placed after step `step` (-1: those
  /// before the first step). `capturing`: `stream` is being captured.
  Status recordAfter(int64_t step, cudaStream_t stream, bool capturing) const;

  /// Makes `stream` wait for signal `signal` of the run queued last.
  Status wait(size_t signal, cudaStream_t stream,
              const std::string &owner) const;

private:
  void destroy();

  std::vector<cudaEvent_t> events_;
  std::vector<int64_t> afterSteps_;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_STEPSIGNALS_H
