//===- TensorMapEncoder.h - TensorMapArg -> CUtensorMap ---------*- C++ -*-===//
//
// A TMA tensor map is encoded by the driver (cuTensorMapEncodeTiled); the
// runtime links only the CUDA runtime, never libcuda, so the function is
// looked up once through cudaGetDriverEntryPoint. A driver without it (older
// than CUDA 12) gives a clear error at the first launch that needs a map,
// and executables without maps never look. Internal to lib/Runtime.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_RUNTIME_TENSORMAPENCODER_H
#define FUSE_LIB_RUNTIME_TENSORMAPENCODER_H

#include "fuse/Runtime/Executable.h"
#include "fuse/Runtime/Status.h"

// Types and enums only (CUtensorMap, CUresult); nothing from libcuda is
// linked.
#include <cuda.h>

namespace fuse::runtime::detail {

/// Encodes `map` with element (0, .., 0) at `base` into `out`: a tiled map,
/// no interleave, element strides 1, 128-byte L2 promotion, out-of-range
/// elements read as zero. `map` must be valid (validateExecutable); `base`
/// must be 16-byte aligned (checked here, as TMA requires). The message of a
/// failure says what is wrong but not where: the caller names the step.
Status encodeTensorMap(const TensorMapArg &map, void *base, CUtensorMap *out);

} // namespace fuse::runtime::detail

#endif // FUSE_LIB_RUNTIME_TENSORMAPENCODER_H
