// fuse-depends: common.cuh
//===- reductions.cuh - Warp, block and atomic f32 reductions -------------===//
//
// Row reductions (norms, softmax, cross-entropy, reduce over the last dims)
// give a row to a block; column reductions of max/min combine partial results
// with atomicMaxFloat / atomicMinFloat. Max and min propagate NaN, as the
// interpreter's reduce and torch.amax do.
//
// Every lane / thread gets the same bits: the xor butterfly has each pair of
// lanes add the same two values, and each warp then reduces the same
// partials in the same order. Sums are therefore deterministic too.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_REDUCTIONS_CUH
#define FUSE_KERNELS_REDUCTIONS_CUH

namespace fuse {
namespace detail {

struct SumOp {
  FUSE_DEVICE float operator()(float a, float b) const { return a + b; }
};
struct MaxOp {
  FUSE_DEVICE float operator()(float a, float b) const { return maximum(a, b); }
};
struct MinOp {
  FUSE_DEVICE float operator()(float a, float b) const { return minimum(a, b); }
};

template <typename Op> FUSE_DEVICE float warpReduce(float v, Op op) {
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1)
    v = op(v, __shfl_xor_sync(0xFFFFFFFFu, v, offset));
  return v;
}

/// blockDim.x a multiple of 32, at most 1024; blockDim.y == blockDim.z == 1.
template <typename Op>
FUSE_DEVICE float blockReduce(float v, float *scratch, Op op, float identity) {
  int lane = threadIdx.x & 31;
  int warp = threadIdx.x >> 5;
  int warps = blockDim.x >> 5;
  v = warpReduce(v, op);
  // A previous call may still be reading scratch: wait before overwriting.
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  // Every warp reduces all partials, so every thread has the result without
  // a third barrier and a broadcast.
  return warpReduce(lane < warps ? scratch[lane] : identity, op);
}

} // namespace detail

FUSE_DEVICE float warpReduceSum(float v) {
  return detail::warpReduce(v, detail::SumOp());
}
FUSE_DEVICE float warpReduceMax(float v) {
  return detail::warpReduce(v, detail::MaxOp());
}
FUSE_DEVICE float warpReduceMin(float v) {
  return detail::warpReduce(v, detail::MinOp());
}

/// `scratch`: a __shared__ float[32] of the caller's. Every thread of the
/// block must call (it has barriers); every thread gets the result. Calls may
/// follow each other with the same scratch.
FUSE_DEVICE float blockReduceSum(float v, float *scratch) {
  return detail::blockReduce(v, scratch, detail::SumOp(), 0.0f);
}
FUSE_DEVICE float blockReduceMax(float v, float *scratch) {
  return detail::blockReduce(v, scratch, detail::MaxOp(), -infinity());
}
FUSE_DEVICE float blockReduceMin(float v, float *scratch) {
  return detail::blockReduce(v, scratch, detail::MinOp(), infinity());
}

// Atomic max / min by the ordering of the bit patterns: for non-negative
// floats a larger value has a larger signed int, for negative ones a larger
// value has a smaller unsigned int, and any non-negative pattern is below any
// negative one as unsigned and above it as signed. So one integer atomic
// suffices, with no CAS loop. NaN is made the top of the order for max
// (0x7FFFFFFF) and the bottom for min (0xFFFFFFFF, a NaN with the sign set),
// so once stored it stays. Needs an initial value that is not NaN
// (-inf for max, +inf for min, or a real value); the result is NaN if any
// value was. +0.0 counts as greater than -0.0.

FUSE_DEVICE void atomicMaxFloat(float *address, float value) {
  unsigned int bits = isNaN(value) ? 0x7FFFFFFFu : floatAsBits(value);
  if (!(bits & 0x80000000u))
    atomicMax(reinterpret_cast<int *>(address), static_cast<int>(bits));
  else
    atomicMin(reinterpret_cast<unsigned int *>(address), bits);
}

FUSE_DEVICE void atomicMinFloat(float *address, float value) {
  unsigned int bits = isNaN(value) ? 0xFFFFFFFFu : floatAsBits(value);
  if (!(bits & 0x80000000u))
    atomicMin(reinterpret_cast<int *>(address), static_cast<int>(bits));
  else
    atomicMax(reinterpret_cast<unsigned int *>(address), bits);
}

} // namespace fuse

#endif // FUSE_KERNELS_REDUCTIONS_CUH
