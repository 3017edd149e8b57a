// fuse-depends: common.cuh
//===- vector_io.cuh - One memory access for N contiguous elements --------===//
//
// Memory-bound kernels reach full bandwidth only with wide accesses: one
// 16-byte load moves 4 floats or 8 bf16 in a single instruction. Vec<T, N>
// is N elements aligned to their total size (1, 2, 4, 8 or 16 bytes);
// loadVec / storeVec move one Vec with one access of that width. The pointer
// must be aligned to sizeof(Vec<T, N>): the code generator vectorises only
// where the innermost extent and every base offset allow it.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_VECTOR_IO_CUH
#define FUSE_KERNELS_VECTOR_IO_CUH

namespace fuse {

template <typename T, int N> struct alignas(sizeof(T) * N) Vec {
  T v[N];
};

namespace detail {

/// The builtin type of each access width (the ones __ldg takes).
template <int Bytes> struct RawAccess;
template <> struct RawAccess<1> { typedef unsigned char type; };
template <> struct RawAccess<2> { typedef unsigned short type; };
template <> struct RawAccess<4> { typedef unsigned int type; };
template <> struct RawAccess<8> { typedef uint2 type; };
template <> struct RawAccess<16> { typedef uint4 type; };

template <typename T, int N> struct VecAccess {
  static_assert(sizeof(Vec<T, N>) == sizeof(T) * N,
                "Vec<T, N> must be exactly N packed elements");
  static_assert(sizeof(T) * N <= 16 && (sizeof(T) * N & (sizeof(T) * N - 1)) == 0,
                "a Vec must be 1, 2, 4, 8 or 16 bytes");
  typedef typename RawAccess<static_cast<int>(sizeof(T) * N)>::type Raw;
};

} // namespace detail

/// Loads through the read-only (non-coherent) data path, ld.global.nc. That
/// is valid only for memory no thread of the kernel writes while it runs:
/// use loadVecCoherent for an input that shares its buffer with an output
/// (in-place reuse), since an nc load may see stale data there.
template <typename T, int N> FUSE_DEVICE Vec<T, N> loadVec(const T *p) {
  typedef typename detail::VecAccess<T, N>::Raw Raw;
  Raw raw = __ldg(reinterpret_cast<const Raw *>(p));
  Vec<T, N> out;
  memcpy(&out, &raw, sizeof(out)); // a register move, no aliasing questions
  return out;
}

/// A plain (coherent) ld.global of one Vec.
template <typename T, int N> FUSE_DEVICE Vec<T, N> loadVecCoherent(const T *p) {
  typedef typename detail::VecAccess<T, N>::Raw Raw;
  Raw raw = *reinterpret_cast<const Raw *>(p);
  Vec<T, N> out;
  memcpy(&out, &raw, sizeof(out));
  return out;
}

template <typename T, int N>
FUSE_DEVICE void storeVec(T *p, const Vec<T, N> &x) {
  typedef typename detail::VecAccess<T, N>::Raw Raw;
  Raw raw;
  memcpy(&raw, &x, sizeof(raw));
  *reinterpret_cast<Raw *>(p) = raw;
}

/// Starts copying `count` elements from global `src` to shared `dst` with
/// the `threads` threads of a block (this one is `thread`): 16-byte
/// cp.async copies, many in flight per thread and no registers held, where
/// both ends are 16-byte aligned and the bytes a multiple of 16; element by
/// element otherwise. Every thread then calls finishCopiesToShared() and the
/// block synchronises before any thread reads what another copied.
template <typename T>
FUSE_DEVICE void startCopyToShared(T *dst, const T *src, long long count,
                                   int thread, int threads) {
  const long long bytes = count * static_cast<long long>(sizeof(T));
  const bool wide = ((reinterpret_cast<unsigned long long>(src) |
                      reinterpret_cast<unsigned long long>(dst) |
                      static_cast<unsigned long long>(bytes)) & 15) == 0;
  if (!wide) {
    for (long long j = thread; j < count; j += threads)
      dst[j] = src[j];
    return;
  }
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(dst));
  const unsigned char *from = reinterpret_cast<const unsigned char *>(src);
  for (long long c = thread; c < bytes / 16; c += threads)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(
                     base + static_cast<uint32_t>(c * 16)),
                 "l"(from + c * 16));
}

/// Waits for this thread's startCopyToShared copies.
FUSE_DEVICE void finishCopiesToShared() {
  asm volatile("cp.async.wait_all;\n" ::: "memory");
}

} // namespace fuse

#endif // FUSE_KERNELS_VECTOR_IO_CUH
