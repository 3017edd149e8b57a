//===- CudaError.h - CUDA and cuBLASLt errors as Status ---------*- C++ -*-===//
//
// Every CUDA call in the runtime is checked and turned into a Status whose
// message says what the runtime was doing ("launching fuse_k3 (step 12,
// loop: add, mul)") and what CUDA said ("cudaErrorInvalidValue: invalid
// argument"). Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_CUDAERROR_H
#define FUSE_LIB_RUNTIME_CUDAERROR_H

#include "fuse/Runtime/Status.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string>

namespace fuse::runtime::detail {

/// "cudaErrorInvalidValue: invalid argument".
inline std::string cudaErrorText(cudaError_t error) {
  return std::string(cudaGetErrorName(error)) + ": " +
         cudaGetErrorString(error);
}

/// Success, or "<what>: <CUDA's error>". A failed call's error is also
/// cleared from the runtime's last-error slot (when it is not sticky), so
/// that a later cudaGetLastError does not report it a second time.
inline Status cudaCheck(cudaError_t error, const std::string &what) {
  if (error == cudaSuccess)
    return Status::success();
  (void)cudaGetLastError();
  return Status::failure(what + ": " + cudaErrorText(error));
}

inline Status cublasCheck(cublasStatus_t status, const std::string &what) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return Status::success();
  return Status::failure(what + ": " + cublasLtGetStatusName(status) + " (" +
                         cublasLtGetStatusString(status) + ")");
}

} // namespace fuse::runtime::detail

/// Returns the Status of `expr` from the enclosing function when it failed.
#define FUSE_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::fuse::runtime::Status fuseStatus_ = (expr);                              \
    if (!fuseStatus_.ok())                                                     \
      return fuseStatus_;                                                      \
  } while (0)

#endif // FUSE_LIB_RUNTIME_CUDAERROR_H
