//===- StepSignals.cpp - Events recorded at chosen points of a step -------===//

#include "StepSignals.h"

#include "CudaError.h"

namespace fuse::runtime::detail {

StepSignals::~StepSignals() { destroy(); }

void StepSignals::destroy() {
  for (cudaEvent_t event : events_)
    cudaEventDestroy(event);
  events_.clear();
  afterSteps_.clear();
}

Status StepSignals::reset(const std::vector<int64_t> &afterSteps,
                          size_t numSteps, const std::string &owner) {
  for (size_t i = 0; i < afterSteps.size(); ++i)
    if (afterSteps[i] < -1 || afterSteps[i] >= (int64_t)numSteps)
      return Status::failure(
          "signal " + std::to_string(i) + " of " + owner + " is placed after step " +
          std::to_string(afterSteps[i]) + ", but the step has " +
          std::to_string(numSteps) + " steps (valid: -1 to " +
          std::to_string((int64_t)numSteps - 1) + ")");
  destroy();
  for (size_t i = 0; i < afterSteps.size(); ++i) {
    cudaEvent_t event = nullptr;
    // No timing: a timing event costs more to record and is never read.
    Status created = cudaCheck(
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
        "creating signal " + std::to_string(i) + " of " + owner);
    if (!created) {
      destroy();
      return created;
    }
    events_.push_back(event);
  }
  afterSteps_ = afterSteps;
  return Status::success();
}

Status StepSignals::recordAfter(int64_t step, cudaStream_t stream,
                                bool capturing) const {
  for (size_t i = 0; i < events_.size(); ++i) {
    if (afterSteps_[i] != step)
      continue;
    // An internal event record inside a capture only orders streams of the
    // same graph; the external kind is a graph node that records the event
    // for waiters outside the graph, at every replay.
    unsigned flags = capturing ? cudaEventRecordExternal : cudaEventRecordDefault;
    FUSE_RETURN_IF_ERROR(
        cudaCheck(cudaEventRecordWithFlags(events_[i], stream, flags),
                  "recording signal " + std::to_string(i) + " after step " +
                      std::to_string(step)));
  }
  return Status::success();
}

Status StepSignals::wait(size_t signal, cudaStream_t stream,
                         const std::string &owner) const {
  if (signal >= events_.size())
    return Status::failure(owner + " has " + std::to_string(events_.size()) +
                           " signals; there is no signal " +
                           std::to_string(signal));
  return cudaCheck(cudaStreamWaitEvent(stream, events_[signal], 0),
                   "waiting for signal " + std::to_string(signal) + " of " +
                       owner);
}

} // namespace fuse::runtime::detail
