//===- CudaGraph.cpp - One step captured as a CUDA Graph ------------------===//

#include "CudaGraph.h"

#include "CudaError.h"

#include <algorithm>

namespace fuse::runtime::detail {

StepGraph::~StepGraph() {
  if (exec_)
    cudaGraphExecDestroy(exec_);
}

Status StepGraph::capture(cudaStream_t captureStream,
                          const std::function<Status(cudaStream_t)> &enqueue,
                          const std::vector<void *> &inputs,
                          const std::vector<void *> &outputs) {
  // Thread-local mode: only this thread's unsafe calls (cudaMalloc, a
  // synchronize) break the capture; other threads of the process are free.
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaStreamBeginCapture(captureStream, cudaStreamCaptureModeThreadLocal),
      "cudaStreamBeginCapture"));
  Status enqueued = enqueue(captureStream);
  // End the capture whatever happened, so the stream is usable again.
  cudaGraph_t graph = nullptr;
  cudaError_t ended = cudaStreamEndCapture(captureStream, &graph);
  if (!enqueued.ok()) {
    if (graph)
      cudaGraphDestroy(graph);
    (void)cudaGetLastError();
    return enqueued;
  }
  FUSE_RETURN_IF_ERROR(cudaCheck(ended, "cudaStreamEndCapture"));

  Status status = Status::success();
  bool updated = false;
  if (exec_) {
    cudaGraphExecUpdateResultInfo info{};
    updated = cudaGraphExecUpdate(exec_, graph, &info) == cudaSuccess;
    if (!updated) {
      (void)cudaGetLastError(); // a refused update is not an error for us
      cudaGraphExecDestroy(exec_);
      exec_ = nullptr;
    }
  }
  if (!updated)
    status = cudaCheck(cudaGraphInstantiate(&exec_, graph, 0),
                       "cudaGraphInstantiate");
  cudaGraphDestroy(graph); // the executable graph keeps its own copy
  if (!status.ok()) {
    exec_ = nullptr;
    return status;
  }
  inputs_ = inputs;
  outputs_ = outputs;
  return Status::success();
}

void StepGraph::reset() {
  if (exec_)
    cudaGraphExecDestroy(exec_);
  exec_ = nullptr;
  inputs_.clear();
  outputs_.clear();
}

Status StepGraph::launch(cudaStream_t stream, const std::string &what) {
  return cudaCheck(cudaGraphLaunch(exec_, stream), what + ": cudaGraphLaunch");
}

StatusOr<StepGraph *>
StepGraphCache::get(cudaStream_t captureStream,
                    const std::function<Status(cudaStream_t)> &enqueue,
                    const std::vector<void *> &inputs,
                    const std::vector<void *> &outputs) {
  for (size_t i = graphs_.size(); i-- > 0;) {
    if (!graphs_[i]->matches(inputs, outputs))
      continue;
    // Most recently used goes last; the list is short, a rotate is cheap.
    std::rotate(graphs_.begin() + i, graphs_.begin() + i + 1, graphs_.end());
    return graphs_.back().get();
  }
  std::unique_ptr<StepGraph> slot;
  if (graphs_.size() < capacity_ || graphs_.empty()) {
    slot = std::make_unique<StepGraph>();
  } else { // the least recently used one's exec, updated in place
    slot = std::move(graphs_.front());
    graphs_.erase(graphs_.begin());
  }
  Status captured = slot->capture(captureStream, enqueue, inputs, outputs);
  if (!captured.ok())
    return captured; // the slot (and its graph) is dropped
  ++captures_;
  graphs_.push_back(std::move(slot));
  return graphs_.back().get();
}

void StepGraphCache::reset() { graphs_.clear(); }

} // namespace fuse::runtime::detail
