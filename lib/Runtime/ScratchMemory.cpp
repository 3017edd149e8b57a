//===- ScratchMemory.cpp - Arena and workspaces executors share -----------===//

#include "fuse/Runtime/ScratchMemory.h"

#include "CudaError.h"

#include <cuda_runtime_api.h>

namespace fuse::runtime {

using detail::cudaCheck;

StatusOr<std::shared_ptr<ScratchMemory>>
ScratchMemory::create(int64_t cublasBytes) {
  StatusOr<DeviceInfo> device = queryDevice(); // "no CUDA device: ..."
  if (!device.ok())
    return device.status();
  std::shared_ptr<ScratchMemory> scratch(new ScratchMemory);
  scratch->device_ = device->ordinal;
  StatusOr<DeviceBuffer> cublas =
      DeviceBuffer::allocate(cublasBytes, "shared cuBLASLt workspace");
  if (!cublas.ok())
    return cublas.status();
  scratch->cublas_ = std::move(*cublas);
  return scratch;
}

Status ScratchMemory::reserve(int64_t arenaBytes, int64_t workspaceBytes,
                              const std::string &who) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (arenaBytes <= arena_.bytes() && workspaceBytes <= workspace_.bytes())
    return Status::success();
  int current = 0;
  FUSE_RETURN_IF_ERROR(cudaCheck(cudaGetDevice(&current),
                                 "shared scratch memory: cudaGetDevice"));
  if (current != device_)
    return Status::failure(who + ": shared scratch memory belongs to device " +
                           std::to_string(device_) + ", not to device " +
                           std::to_string(current));
  // Steps queued on any stream may still use the old memory.
  FUSE_RETURN_IF_ERROR(cudaCheck(cudaDeviceSynchronize(),
                                 "growing shared scratch memory for " + who));
  auto grow = [&](DeviceBuffer &buffer, int64_t bytes,
                  const char *what) -> Status {
    if (bytes <= buffer.bytes())
      return Status::success();
    buffer = DeviceBuffer(); // free first: old and new need not fit together
    StatusOr<DeviceBuffer> grown = DeviceBuffer::allocate(
        bytes, std::string("shared ") + what + " (for " + who + ")");
    if (!grown.ok())
      return grown.status();
    buffer = std::move(*grown);
    return Status::success();
  };
  FUSE_RETURN_IF_ERROR(grow(arena_, arenaBytes, "arena"));
  return grow(workspace_, workspaceBytes, "workspace");
}

ScratchMemory::~ScratchMemory() {
  if (lastRun_)
    cudaEventDestroy(static_cast<cudaEvent_t>(lastRun_));
}

Status ScratchMemory::use(void *stream, bool capturing,
                          const std::function<Status()> &body) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ran_ && stream != lastStream_ && !capturing)
    FUSE_RETURN_IF_ERROR(cudaCheck(
        cudaStreamWaitEvent(static_cast<cudaStream_t>(stream),
                            static_cast<cudaEvent_t>(lastRun_), 0),
        "shared scratch memory: waiting for the previous run"));
  FUSE_RETURN_IF_ERROR(body());
  if (capturing)
    return Status::success();
  if (!lastRun_) {
    cudaEvent_t event = nullptr;
    FUSE_RETURN_IF_ERROR(
        cudaCheck(cudaEventCreateWithFlags(&event, cudaEventDisableTiming),
                  "shared scratch memory: cudaEventCreate"));
    lastRun_ = event;
  }
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaEventRecord(static_cast<cudaEvent_t>(lastRun_),
                      static_cast<cudaStream_t>(stream)),
      "shared scratch memory: recording the run"));
  lastStream_ = stream;
  ran_ = true;
  return Status::success();
}

} // namespace fuse::runtime
