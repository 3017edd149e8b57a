// fuse-depends:
//===- tensor_map.cuh - A TMA tensor map as a kernel parameter ------------===//
//
// Hopper's bulk tensor copies (cp.async.bulk.tensor) address global memory
// through a CUtensorMap: a 128-byte opaque descriptor, 64-byte aligned, that
// the executor encodes at every launch with cuTensorMapEncodeTiled (the
// pointers are known only at run time; runtime::TensorMapArg describes it).
// NVRTC has no include path, so cuda.h's CUtensorMap is mirrored here.
//
// A kernel takes it after its pointer parameters, in the order of
// KernelLaunch::tensorMaps, as
//   const __grid_constant__ fuse::TensorMap name
// __grid_constant__ keeps the parameter in parameter space, where its
// generic address is what cp.async.bulk.tensor and prefetch.tensormap take;
// without it the kernel would copy the map to local memory, which TMA
// cannot read.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_TENSOR_MAP_CUH
#define FUSE_KERNELS_TENSOR_MAP_CUH

namespace fuse {

struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

static_assert(sizeof(TensorMap) == 128 && alignof(TensorMap) == 64,
              "fuse::TensorMap must match CUtensorMap");

} // namespace fuse

#endif // FUSE_KERNELS_TENSOR_MAP_CUH
