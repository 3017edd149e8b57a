//===- CudaGraph.h - One step captured as a CUDA Graph ----------*- C++ -*-===//
//
// A step is hundreds of small launches; replaying them as one graph removes
// the CPU launch cost. The graph bakes in every pointer, so it belongs to one
// set of input/output pointers: a new set is captured again and applied with
// cudaGraphExecUpdate (cheap: same topology, new parameters), falling back to
// a fresh instantiation when the update is refused. Internal to lib/Runtime.
//
// One executable may be called with several sets in turn, every step: a
// dynamo graph that is one transformer layer runs once per layer, each time
// with that layer's weights. StepGraphCache keeps a graph per set (the least
// recently used one recaptured when it is full), so each call replays.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_CUDAGRAPH_H
#define FUSE_LIB_RUNTIME_CUDAGRAPH_H

#include "fuse/Runtime/Status.h"

#include <cuda_runtime_api.h>

#include <functional>
#include <memory>
#include <vector>

namespace fuse::runtime::detail {

class StepGraph {
public:
  StepGraph() = default;
  StepGraph(const StepGraph &) = delete;
  StepGraph &operator=(const StepGraph &) = delete;
  ~StepGraph();

  /// Whether the graph holds exactly these pointers.
  bool matches(const std::vector<void *> &inputs,
               const std::vector<void *> &outputs) const {
    return exec_ && inputs == inputs_ && outputs == outputs_;
  }

  /// Captures what `enqueue` puts on the stream it is given (our private
  /// `captureStream`, never the caller's: capturing the legacy default
  /// stream is not allowed, and a private stream keeps other work out of the
  /// graph) and makes it the graph to launch.
  Status capture(cudaStream_t captureStream,
                 const std::function<Status(cudaStream_t)> &enqueue,
                 const std::vector<void *> &inputs,
                 const std::vector<void *> &outputs);

  /// Forgets the graph: the next run captures anew.
  void reset();

  /// Enqueues the graph on `stream` (any stream, the legacy one included).
  Status launch(cudaStream_t stream, const std::string &what);

private:
  cudaGraphExec_t exec_ = nullptr;
  std::vector<void *> inputs_, outputs_;
};

/// Up to `capacity` captured graphs of one executable, one per set of
/// pointers, least recently used first out.
class StepGraphCache {
public:
  explicit StepGraphCache(size_t capacity) : capacity_(capacity) {}

  /// The graph for these pointers: a cached one, or one captured now (in
  /// an empty slot, else in the least recently used one's).
  StatusOr<StepGraph *> get(cudaStream_t captureStream,
                            const std::function<Status(cudaStream_t)> &enqueue,
                            const std::vector<void *> &inputs,
                            const std::vector<void *> &outputs);
  /// Forgets every graph (the step changed: new signals).
  void reset();
  /// Graphs captured so far, recaptures included: a count that grows with
  /// the calls means pointers that never repeat.
  int64_t captures() const { return captures_; }
  size_t size() const { return graphs_.size(); }

private:
  size_t capacity_;
  /// Most recently used last.
  std::vector<std::unique_ptr<StepGraph>> graphs_;
  int64_t captures_ = 0;
};

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_CUDAGRAPH_H
