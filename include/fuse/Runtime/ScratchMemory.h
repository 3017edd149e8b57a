//===- ScratchMemory.h - Arena and workspaces executors share ----*- C++ -*-===//
//
// An executor's arena, workspace and cuBLASLt workspace hold nothing from
// one step to the next: every value that outlives a step is an input or an
// output. Executors whose steps never overlap can therefore share them. The
// torch.compile backend's graphs run one after another on the caller's
// stream (a model's forward, then its backward; each piece of a model that
// graph breaks split), and each held memory of its own: GPT-2's forward and
// backward arenas were 1.6 GB together where the larger one is enough.
//
// ScratchMemory is that shared memory on one device. It grows to the
// largest arena and workspace its executors reserve; growing frees the old
// memory after a device synchronize, and the executors see the new address
// (their CUDA graphs are keyed by it, so they capture anew). Runs take the
// memory one at a time on the host (a mutex: the backward of a model runs
// on autograd's thread), and a run on another stream than the run before it
// first waits on the device for an event recorded after that run, so that
// two runs never use the memory at once.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_SCRATCHMEMORY_H
#define FUSE_RUNTIME_SCRATCHMEMORY_H

#include "fuse/Runtime/Executor.h"

#include <functional>
#include <memory>
#include <mutex>

namespace fuse::runtime {

class ScratchMemory {
public:
  /// Shared memory on the current device; `cublasBytes` of cuBLASLt
  /// workspace allocated now (its address never changes).
  static StatusOr<std::shared_ptr<ScratchMemory>>
  create(int64_t cublasBytes = kCublasWorkspaceBytes);
  ScratchMemory(const ScratchMemory &) = delete;
  ScratchMemory &operator=(const ScratchMemory &) = delete;

  /// Grows the arena and the workspace to at least these sizes (`who` names
  /// the executor in an out-of-memory error).
  Status reserve(int64_t arenaBytes, int64_t workspaceBytes,
                 const std::string &who);
  /// Runs `body` (what enqueues one run on `stream`, a cudaStream_t) with
  /// the memory to itself: one run at a time on the host, and on the device
  /// `stream` first waits for the previous run when that was on another
  /// stream. `capturing`: the caller is capturing `stream` into a graph of
  /// its own, which queues nothing now (nothing to wait for or record).
  Status use(void *stream, bool capturing, const std::function<Status()> &body);
  ~ScratchMemory();

  int device() const { return device_; }
  void *arena() const { return arena_.data(); }
  void *workspace() const { return workspace_.data(); }
  void *cublasWorkspace() const { return cublas_.data(); }
  int64_t cublasBytes() const { return cublas_.bytes(); }
  /// Device memory held now.
  int64_t deviceBytes() const {
    return arena_.bytes() + workspace_.bytes() + cublas_.bytes();
  }

private:
  ScratchMemory() = default;
  int device_ = 0;
  DeviceBuffer arena_, workspace_, cublas_;
  /// Held by use() and reserve(): executors on several host threads.
  std::mutex mutex_;
  /// Recorded after the last run that was not captured, on lastStream_.
  void *lastRun_ = nullptr; // a cudaEvent_t
  void *lastStream_ = nullptr;
  bool ran_ = false;
};

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_SCRATCHMEMORY_H
