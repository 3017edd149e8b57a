// fuse-depends: common.cuh philox.cuh
//===- flash_common.cuh - Tensor-core pieces of the flash-attention kernels ===//
//
// The parameters, tile sizes and warp-level primitives shared by
// flash_forward.cuh and flash_backward.cuh. NVRTC compiles these with no
// include path, so tensor cores are reached through inline PTX (ldmatrix,
// mma.sync m16n8k16, cp.async) rather than <mma.h> / <cuda_bf16.h>.
//
// Fragment layouts of mma.m16n8k16 (g = lane / 4, t = lane % 4), which every
// index computation in the kernels follows:
//   A 16x16 (row) : a0 (g, 2t..2t+1)  a1 (g+8, 2t..)  a2 (g, 2t+8..)  a3 (g+8, 2t+8..)
//   B 16x8  (col) : b0 (k 2t..2t+1, n g)  b1 (k 2t+8.., n g)
//   C 16x8  (f32) : c0 c1 (g, 2t..2t+1)  c2 c3 (g+8, 2t..2t+1)
// so the C tiles of two neighbouring n8 blocks are, packed to 16 bits, the A
// fragment of one k16 step (FlashAttention-2's register reuse of P).
//
// Shared-memory tiles are row-major with rows padded by 8 elements (16
// bytes): the 8 row addresses of one ldmatrix phase then fall in 8 different
// 16-byte bank groups, with no swizzle arithmetic to get wrong.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_FLASH_COMMON_CUH
#define FUSE_KERNELS_FLASH_COMMON_CUH

namespace fuse {

/// Forward: query rows per CTA (16 per warp) and key rows per inner step.
/// Backward: key rows per CTA (16 per warp). Mirrored on the host by
/// include/fuse/Codegen/FlashAttentionConfig.h (checked by a unit test).
constexpr int kFlashBlockM = 128;
constexpr int kFlashBlockN = 64;
constexpr int kFlashThreads = 256;
constexpr int kFlashBackwardThreads = 128;
/// Query rows per step of the backward's inner loop.
constexpr int kFlashBackwardBlockM = 64;
/// Elements of padding after every shared-memory row (see the file comment).
constexpr int kFlashPad = 8;

/// Dynamic shared memory of the forward: Q tile plus double-buffered K and V.
FUSE_HOST_DEVICE constexpr int flashForwardSharedBytes(int headDim) {
  return (kFlashBlockM + 4 * kFlashBlockN) * (headDim + kFlashPad) * 2;
}

/// Dynamic shared memory of the backward: K, V, double-buffered Q and dO,
/// the dS^T tile (T), and double-buffered lse / delta rows (f32).
FUSE_HOST_DEVICE constexpr int flashBackwardSharedBytes(int headDim) {
  return (2 * kFlashBlockN + 4 * kFlashBackwardBlockM) * (headDim + kFlashPad) * 2 +
         kFlashBlockN * (kFlashBackwardBlockM + kFlashPad) * 2 +
         4 * kFlashBackwardBlockM * 4;
}

struct FlashParams {
  int batch, qHeads, kvHeads, tq, tk; // q [batch, qHeads, tq, D], k/v [batch, kvHeads, tk, D]
  float scale;
  bool causal; // query i sees keys j <= i (top-left aligned)
  // Additive mask[b, h, i, j] at b * maskStrideB + h * maskStrideH +
  // i * maskStrideQ + j (elements); a stride of 0 broadcasts.
  long long maskStrideB, maskStrideH, maskStrideQ;
  float dropoutP;
};

namespace flash {

constexpr float kLog2e = 1.4426950408889634f;

FUSE_DEVICE uint32_t sharedAddress(const void *p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

/// 16 bytes global -> shared, bypassing L1; zero-filled when !valid (the
/// source is then not read, but must still be a mapped address).
FUSE_DEVICE void cpAsync16(uint32_t dst, const void *src, bool valid) {
  int bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(bytes));
}
FUSE_DEVICE void cpAsyncCommit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> FUSE_DEVICE void cpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

FUSE_DEVICE void ldmatrixX4(uint32_t address, uint32_t &r0, uint32_t &r1,
                            uint32_t &r2, uint32_t &r3) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(address));
}
FUSE_DEVICE void ldmatrixX4Trans(uint32_t address, uint32_t &r0, uint32_t &r1,
                                 uint32_t &r2, uint32_t &r3) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
      : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
      : "r"(address));
}

/// Per-type tensor-core instruction and f32 pair packing.
template <typename T> struct Mma;
template <> struct Mma<bf16> {
  static FUSE_DEVICE uint32_t pack(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
  static FUSE_DEVICE void run(float *c, const uint32_t *a, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};
template <> struct Mma<f16> {
  static FUSE_DEVICE uint32_t pack(float lo, float hi) {
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
  }
  static FUSE_DEVICE void run(float *c, const uint32_t *a, uint32_t b0, uint32_t b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                 "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
};

FUSE_DEVICE float exp2Approx(float x) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(r) : "f"(x));
  return r;
}

/// Copies `rows` rows of D elements (row stride D in global memory) into a
/// padded shared tile with all `threads` threads; rows past `valid` are
/// zero-filled so that no garbage (NaN) reaches an MMA.
template <typename T, int D, int Rows, int Threads>
FUSE_DEVICE void loadTile(uint32_t tile, const T *global, int valid) {
  constexpr int kChunks = D / 8; // 16-byte chunks per row
  constexpr int kStride = (D + kFlashPad) * 2;
#pragma unroll
  for (int c = threadIdx.x; c < Rows * kChunks; c += Threads) {
    int row = c / kChunks, chunk = c % kChunks;
    bool ok = row < valid;
    const T *src = global + (ok ? row : 0) * D + chunk * 8;
    cpAsync16(tile + row * kStride + chunk * 16, src, ok);
  }
}

/// A fragments of a 16 x 16 block at (row0, col0) of a row-major padded tile.
template <int RowElems>
FUSE_DEVICE void loadA(uint32_t tile, int row0, int col0, uint32_t *a) {
  int lane = threadIdx.x & 31;
  int row = row0 + (lane & 15), col = col0 + (lane >> 4) * 8;
  ldmatrixX4(tile + (row * (RowElems + kFlashPad) + col) * 2, a[0], a[1], a[2], a[3]);
}

/// A fragments of the 16 x 16 block (m0.., k0..) of A where the tile stores
/// A transposed: tile[k][m].
template <int RowElems>
FUSE_DEVICE void loadATransposed(uint32_t tile, int m0, int k0, uint32_t *a) {
  int lane = threadIdx.x & 31;
  int k = k0 + (lane & 7) + (lane >> 4) * 8, m = m0 + ((lane >> 3) & 1) * 8;
  ldmatrixX4Trans(tile + (k * (RowElems + kFlashPad) + m) * 2, a[0], a[1], a[2], a[3]);
}

/// B fragments of two n8 blocks (n0.., n0+8..) for k16 at k0, from a tile
/// stored [n][k] (e.g. K for Q K^T): b[0], b[1] for n0; b[2], b[3] for n0+8.
template <int RowElems>
FUSE_DEVICE void loadBNK(uint32_t tile, int n0, int k0, uint32_t *b) {
  int lane = threadIdx.x & 31;
  int n = n0 + (lane & 7) + (lane >> 4) * 8, k = k0 + ((lane >> 3) & 1) * 8;
  ldmatrixX4(tile + (n * (RowElems + kFlashPad) + k) * 2, b[0], b[1], b[2], b[3]);
}

/// The same from a tile stored [k][n] (e.g. V for P V), transposed on load.
template <int RowElems>
FUSE_DEVICE void loadBKN(uint32_t tile, int k0, int n0, uint32_t *b) {
  int lane = threadIdx.x & 31;
  int k = k0 + (lane & 7) + ((lane >> 3) & 1) * 8, n = n0 + (lane >> 4) * 8;
  ldmatrixX4Trans(tile + (k * (RowElems + kFlashPad) + n) * 2, b[0], b[1], b[2], b[3]);
}

/// The dropout factor of score (row, j) of one (b, h): 0 or 1 / (1 - p),
/// drawn exactly as the reference interpreter does (element index
/// ((b * qHeads + h) * tq + i) * tk + j, philox::uniformAt). `rowBase` is
/// ((b * qHeads + h) * tq + i) * tk.
FUSE_DEVICE float dropoutKeep(uint64_t seed, uint64_t offset, uint64_t n,
                              float p, float keepScale) {
  return philox::uniformAt(seed, offset, n) < p ? 0.0f : keepScale;
}

/// Factors of two neighbouring scores n, n + 1, sharing one Philox block
/// when they fall in the same group of four.
FUSE_DEVICE void dropoutKeepPair(uint64_t seed, uint64_t offset, uint64_t n,
                                 float p, float keepScale, float &k0, float &k1) {
  philox::Block block = philox::blockAt(seed, offset + n / 4);
  k0 = philox::uniform(philox::lane(block, static_cast<uint32_t>(n % 4))) < p
           ? 0.0f : keepScale;
  if ((n + 1) % 4 != 0) {
    k1 = philox::uniform(philox::lane(block, static_cast<uint32_t>((n + 1) % 4))) < p
             ? 0.0f : keepScale;
  } else {
    k1 = dropoutKeep(seed, offset, n + 1, p, keepScale);
  }
}

} // namespace flash
} // namespace fuse

#endif // FUSE_KERNELS_FLASH_COMMON_CUH
