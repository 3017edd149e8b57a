// fuse-depends: flash_common.cuh
//===- flash_wgmma.cuh - Hopper warpgroup MMA for the flash kernels -------===//
//
// sm_90a's wgmma: one warpgroup (4 consecutive warps, 128 threads) multiplies
// a 64 x 16 A by a 16 x N B into a 64 x N f32 accumulator held in its
// registers, asynchronously, with B (and optionally A) read by the tensor
// cores straight from shared memory through a 64-bit matrix descriptor.
//
// Shared tiles use the 128-byte swizzle the descriptors understand: a tile
// of Rows x D 16-bit elements is D / 64 panels of Rows x 64 (128-byte rows);
// within a panel, the 16-byte chunk c of row r sits at chunk c ^ (r % 8).
// Every panel starts 1024-byte aligned (the swizzle is computed from the
// absolute shared address). The same tile serves both majors:
//   K-major  (the reduction dim runs along the row: Q, K for Q K^T):
//     start = panel of k0 + row0 * 128 + (k0 % 64) * 2, SBO = 1024
//   MN-major (rows are the reduction dim: V for P V, "transposed" B):
//     start = row0 * 128, LBO = panel bytes, SBO = 1024
// (CUTLASS's canonical GMMA layouts, cute/atom/mma_traits_sm90_gmma.hpp.)
//
// Register fragments: warp w of the warpgroup holds rows 16w .. 16w + 15 of
// the 64; lane (g = lane / 4, t = lane % 4) holds, for each n8 block j,
//   d[4j + 0, 1] = (row g, cols 8j + 2t, + 1), d[4j + 2, 3] = (row g + 8, ..)
// which is mma.sync m16n8's C layout repeated, and an A operand from
// registers has mma.sync m16n8k16's A layout: the kernels' masking and
// softmax code indexes fragments exactly as the mma.sync kernels did.
//
// Ordering rules: shared memory written by cp.async or st.shared and then
// read by wgmma needs fence.proxy.async in the writing threads before the
// barrier (asyncProxyFence); accumulators written by ordinary instructions
// need wgmma.fence before the next wgmma reads them (fence()).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_WGMMA_CUH
#define FUSE_KERNELS_FLASH_WGMMA_CUH

namespace fuse {
namespace wgmma {

/// Byte offsets inside a 128-byte-swizzled Rows x D tile.
template <int Rows, int D> struct SwizzledTile {
  static_assert(D % 64 == 0 && Rows % 8 == 0, "whole panels and swizzle atoms");
  static constexpr int kPanelBytes = Rows * 128;
  static constexpr int kBytes = (D / 64) * kPanelBytes;
  /// The 16-byte chunk `chunk` (elements 8 chunk .. 8 chunk + 7) of `row`.
  static FUSE_HOST_DEVICE uint32_t chunk(int row, int chunk) {
    return (chunk >> 3) * kPanelBytes + row * 128 + (((chunk & 7) ^ (row & 7)) << 4);
  }
  /// The element pair (row, col), col even: a 4-byte word of a chunk.
  static FUSE_HOST_DEVICE uint32_t pair(int row, int col) {
    return chunk(row, col >> 3) + (col & 7) * 2;
  }
};

/// Copies `Rows` rows of D elements, row r at global + r * rowStride, into a
/// swizzled tile with all `Threads` threads (cp.async, one commit group is
/// the caller's); rows from `valid` on are zero-filled.
template <typename T, int Rows, int D, int Threads>
FUSE_DEVICE void loadTile(uint32_t tile, const T *global, long long rowStride, int valid) {
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int c = threadIdx.x; c < Rows * kChunks; c += Threads) {
    const int row = c / kChunks, part = c % kChunks;
    const bool ok = row < valid;
    flash::cpAsync16(tile + SwizzledTile<Rows, D>::chunk(row, part),
                     global + (ok ? row : 0) * rowStride + part * 8, ok);
  }
}

/// Makes this thread's generic-proxy writes to shared memory (cp.async
/// included) visible to the tensor cores' async proxy; a barrier follows.
FUSE_DEVICE void asyncProxyFence() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

FUSE_DEVICE uint64_t descriptor(uint32_t address, uint32_t leadingBytes,
                                uint32_t strideBytes) {
  return static_cast<uint64_t>((address & 0x3FFFF) >> 4) |
         (static_cast<uint64_t>(leadingBytes >> 4) << 16) |
         (static_cast<uint64_t>(strideBytes >> 4) << 32) | (1ull << 62); // 128B swizzle
}

/// Operand whose reduction dim k runs along the tile's rows: rows row0 ..
/// row0 + 63 (A) or all N rows (B), k = k0 .. k0 + 15.
template <int Rows, int D>
FUSE_DEVICE uint64_t kMajor(uint32_t tile, int row0, int k0) {
  return descriptor(tile + (k0 / 64) * SwizzledTile<Rows, D>::kPanelBytes + row0 * 128 +
                        (k0 % 64) * 2,
                    16, 1024);
}

/// Operand whose reduction dim is the tile's row index: rows k0 .. k0 + 15,
/// the M or N dim running along the row (all D columns).
template <int Rows, int D>
FUSE_DEVICE uint64_t mnMajor(uint32_t tile, int k0) {
  return descriptor(tile + k0 * 128, SwizzledTile<Rows, D>::kPanelBytes, 1024);
}

/// Stores four 8 x 8 16-bit matrices held in mma.sync's fragment layout
/// (word w of each thread is matrix w), each transposed: lane 8i + j gives
/// the shared address of row j of transposed matrix i (16 bytes).
FUSE_DEVICE void storeTransposed(uint32_t address, uint32_t m0, uint32_t m1, uint32_t m2,
                                 uint32_t m3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(
                   address),
               "r"(m0), "r"(m1), "r"(m2), "r"(m3)
               : "memory");
}

FUSE_DEVICE void fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
FUSE_DEVICE void commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int Pending> FUSE_DEVICE void wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

/// Keeps the compiler from moving reads or writes of accumulators across a
/// wgmma issue or wait (they are written behind its back).
template <int N> FUSE_DEVICE void pin(float (&d)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
}

/// D (64 x N) [+]= A B. `Mma<T, N>::ss` reads A and B through descriptors
/// (TransA / TransB: 0 K-major, 1 MN-major); `rs` takes A from registers
/// (four 32-bit words per thread, mma.sync's A layout) and B from shared.
/// `accumulate` = 0 overwrites D.
template <typename T, int N> struct Mma;

#define FUSE_WGMMA_D32                                                                \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define FUSE_WGMMA_D40                                                                \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, " \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "  \
  "%34, %35, %36, %37, %38, %39}"
#define FUSE_WGMMA_D64                                                                 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "  \
  "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, "   \
  "%34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, "   \
  "%50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define FUSE_WGMMA_OUT8(i)                                                            \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]),         \
      "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define FUSE_WGMMA_OUT32                                                              \
  FUSE_WGMMA_OUT8(0), FUSE_WGMMA_OUT8(8), FUSE_WGMMA_OUT8(16), FUSE_WGMMA_OUT8(24)
#define FUSE_WGMMA_OUT40 FUSE_WGMMA_OUT32, FUSE_WGMMA_OUT8(32)
#define FUSE_WGMMA_OUT64                                                              \
  FUSE_WGMMA_OUT32, FUSE_WGMMA_OUT8(32), FUSE_WGMMA_OUT8(40), FUSE_WGMMA_OUT8(48),    \
      FUSE_WGMMA_OUT8(56)

// One specialisation per (type, N). The input operands follow the N / 2
// outputs; I0 .. I6 spell their numbers (ss uses I0 .. I4: a, b,
// accumulate, TransA, TransB; rs uses I0 .. I6: a0 .. a3, b, accumulate,
// TransB).
#define FUSE_WGMMA_DEFINE(CType, PtxType, N, DList, Outs, I0, I1, I2, I3, I4, I5, I6)  \
  template <> struct Mma<CType, N> {                                                   \
    template <int TransA, int TransB>                                                  \
    static FUSE_DEVICE void ss(float (&d)[N / 2], uint64_t a, uint64_t b,              \
                               int accumulate) {                                       \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " I2 ", 0;\n"                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PtxType           \
                   "." PtxType " " DList ", " I0 ", " I1 ", p, 1, 1, " I3 ", " I4       \
                   ";\n}\n"                                                            \
                   : Outs                                                              \
                   : "l"(a), "l"(b), "r"(accumulate), "n"(TransA), "n"(TransB));       \
    }                                                                                  \
    template <int TransB>                                                              \
    static FUSE_DEVICE void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t b,  \
                               int accumulate) {                                       \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " I5 ", 0;\n"                    \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PtxType           \
                   "." PtxType " " DList ", {" I0 ", " I1 ", " I2 ", " I3 "}, " I4      \
                   ", p, 1, 1, " I6 ";\n}\n"                                            \
                   : Outs                                                              \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),               \
                     "r"(accumulate), "n"(TransB));                                    \
    }                                                                                  \
  };

#define FUSE_WGMMA_DEFINE_TYPE(CType, PtxType)                                         \
  FUSE_WGMMA_DEFINE(CType, PtxType, 64, FUSE_WGMMA_D32, FUSE_WGMMA_OUT32, "%32",       \
                    "%33", "%34", "%35", "%36", "%37", "%38")                          \
  FUSE_WGMMA_DEFINE(CType, PtxType, 80, FUSE_WGMMA_D40, FUSE_WGMMA_OUT40, "%40",       \
                    "%41", "%42", "%43", "%44", "%45", "%46")                          \
  FUSE_WGMMA_DEFINE(CType, PtxType, 128, FUSE_WGMMA_D64, FUSE_WGMMA_OUT64, "%64",      \
                    "%65", "%66", "%67", "%68", "%69", "%70")

FUSE_WGMMA_DEFINE_TYPE(bf16, "bf16")
FUSE_WGMMA_DEFINE_TYPE(f16, "f16")

#undef FUSE_WGMMA_DEFINE_TYPE
#undef FUSE_WGMMA_DEFINE
#undef FUSE_WGMMA_OUT64
#undef FUSE_WGMMA_OUT40
#undef FUSE_WGMMA_OUT32
#undef FUSE_WGMMA_OUT8
#undef FUSE_WGMMA_D64
#undef FUSE_WGMMA_D40
#undef FUSE_WGMMA_D32

} // namespace wgmma
} // namespace fuse

#endif // FUSE_KERNELS_FLASH_WGMMA_CUH
