// fuse-depends:
//===- tensor_map.cuh - The TMA descriptor as a kernel parameter ----------===//
//
// A CUtensorMap: 128 opaque bytes, 64-byte aligned, that the executor
// encodes at launch (cuTensorMapEncodeTiled, from a KernelLaunch's
// tensorMaps) and passes by value after the pointer parameters. Kernels
// declare it `const __grid_constant__ fuse::TensorMap`, so its address is
// the parameter's own and the copy engine reads it from there.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_TENSOR_MAP_CUH
#define FUSE_KERNELS_TENSOR_MAP_CUH

namespace fuse {

struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

} // namespace fuse

#endif // FUSE_KERNELS_TENSOR_MAP_CUH
