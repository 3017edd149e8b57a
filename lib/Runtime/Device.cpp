//===- Device.cpp - The GPU and memory on it ------------------------------===//
//
// Everything goes through the CUDA runtime API (statically linked cudart,
// which loads libcuda itself): on a machine with no driver or no GPU,
// cudaGetDeviceCount fails and queryDevice says "no CUDA device: ...",
// instead of the binary failing to start.
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Executor.h"

#include "CudaError.h"
#include "fuse/Support/HumanSize.h"

namespace fuse::runtime {

using detail::cudaCheck;
using ::fuse::humanBytes;

std::string DeviceInfo::arch() const {
  // Hopper's arch-specific features (wgmma, setmaxnreg) need the "a" target;
  // a cubin for sm_90a runs only on compute capability 9.0, which is what we
  // want: the executable is refused elsewhere with a clear message.
  if (computeMajor == 9 && computeMinor == 0)
    return "sm_90a";
  return "sm_" + std::to_string(computeMajor) + std::to_string(computeMinor);
}

StatusOr<DeviceInfo> queryDevice() {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    return Status::failure(std::string("no CUDA device: ") +
                           cudaGetErrorString(error));
  }
  if (count == 0)
    return Status::failure("no CUDA device: the driver reports none");
  DeviceInfo info;
  FUSE_RETURN_IF_ERROR(cudaCheck(cudaGetDevice(&info.ordinal),
                                 "no CUDA device: cudaGetDevice"));
  cudaDeviceProp properties{};
  FUSE_RETURN_IF_ERROR(
      cudaCheck(cudaGetDeviceProperties(&properties, info.ordinal),
                "cannot query CUDA device " + std::to_string(info.ordinal)));
  info.name = properties.name;
  info.computeMajor = properties.major;
  info.computeMinor = properties.minor;
  info.multiprocessors = properties.multiProcessorCount;
  size_t freeBytes = 0, totalBytes = 0;
  FUSE_RETURN_IF_ERROR(
      cudaCheck(cudaMemGetInfo(&freeBytes, &totalBytes),
                "cannot use CUDA device " + std::to_string(info.ordinal) +
                    " (" + info.name + ")"));
  info.freeBytes = static_cast<int64_t>(freeBytes);
  info.totalBytes = static_cast<int64_t>(totalBytes);
  return info;
}

//===----------------------------- DeviceBuffer ---------------------------===//

StatusOr<DeviceBuffer> DeviceBuffer::allocate(int64_t bytes,
                                              const std::string &what) {
  DeviceBuffer buffer;
  if (bytes < 0)
    return Status::failure("cannot allocate " + std::to_string(bytes) +
                           " bytes for " + what);
  if (bytes == 0)
    return buffer;
  cudaError_t error = cudaMalloc(&buffer.data_, static_cast<size_t>(bytes));
  if (error == cudaErrorMemoryAllocation) {
    (void)cudaGetLastError(); // not sticky: the context stays usable
    size_t freeBytes = 0, totalBytes = 0;
    std::string free = cudaMemGetInfo(&freeBytes, &totalBytes) == cudaSuccess
                           ? humanBytes((int64_t)freeBytes) + " free of " +
                                 humanBytes((int64_t)totalBytes)
                           : std::string("free memory unknown");
    return Status::failure("out of device memory: asked for " +
                           humanBytes(bytes) + " (" + what + "), " + free);
  }
  FUSE_RETURN_IF_ERROR(cudaCheck(error, "cudaMalloc of " + humanBytes(bytes) +
                                            " (" + what + ")"));
  buffer.bytes_ = bytes;
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer &&other) noexcept
    : data_(other.data_), bytes_(other.bytes_) {
  other.data_ = nullptr;
  other.bytes_ = 0;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&other) noexcept {
  if (this != &other) {
    if (data_)
      cudaFree(data_);
    data_ = other.data_;
    bytes_ = other.bytes_;
    other.data_ = nullptr;
    other.bytes_ = 0;
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (data_)
    cudaFree(data_); // nothing to report to from a destructor
}

static Status checkSize(int64_t bytes, int64_t capacity, const char *what) {
  if (bytes < 0 || bytes > capacity)
    return Status::failure(std::string("DeviceBuffer::") + what + " of " +
                           std::to_string(bytes) + " bytes into a buffer of " +
                           std::to_string(capacity));
  return Status::success();
}

// cudaMemcpy from pageable memory may return before the DMA lands, and it is
// ordered only on the legacy default stream. The device-wide synchronize
// makes the data visible to work on any stream afterwards (a non-blocking
// stream included); uploads are not on the hot path.
Status DeviceBuffer::upload(const void *host, int64_t bytes) {
  FUSE_RETURN_IF_ERROR(checkSize(bytes, bytes_, "upload"));
  if (bytes == 0)
    return Status::success();
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaMemcpy(data_, host, (size_t)bytes, cudaMemcpyHostToDevice),
      "uploading " + humanBytes(bytes)));
  return cudaCheck(cudaDeviceSynchronize(), "uploading " + humanBytes(bytes));
}

// The device-wide synchronize first waits for kernels on every stream (a
// non-blocking one included) that may still be writing this buffer.
Status DeviceBuffer::download(void *host, int64_t bytes) const {
  FUSE_RETURN_IF_ERROR(checkSize(bytes, bytes_, "download"));
  if (bytes == 0)
    return Status::success();
  FUSE_RETURN_IF_ERROR(cudaCheck(cudaDeviceSynchronize(),
                                 "waiting for the device before a download"));
  return cudaCheck(
      cudaMemcpy(host, data_, (size_t)bytes, cudaMemcpyDeviceToHost),
      "downloading " + humanBytes(bytes));
}

Status DeviceBuffer::fill(unsigned char value) {
  if (bytes_ == 0)
    return Status::success();
  FUSE_RETURN_IF_ERROR(cudaCheck(cudaMemset(data_, value, (size_t)bytes_),
                                 "filling " + humanBytes(bytes_)));
  return cudaCheck(cudaDeviceSynchronize(), "filling " + humanBytes(bytes_));
}

} // namespace fuse::runtime
