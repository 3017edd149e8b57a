//===- CudaGraph.cpp - One step captured as a CUDA Graph ------------------===//

#include "CudaGraph.h"

#include "CudaError.h"

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

} // namespace fuse::runtime::detail
