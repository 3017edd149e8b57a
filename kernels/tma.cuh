// fuse-depends: common.cuh tensor_map.cuh
//===- tma.cuh - Bulk tensor copies, mbarriers and warp specialisation ----===//
//
// sm_90's asynchronous pipeline pieces for kernels where one thread loads
// tiles and other warpgroups consume them:
//   - tensor copies (`cp.async.bulk.tensor`; `cp.async.bulk` for a plain
//     contiguous block, and `cp.reduce.async.bulk.tensor`
//     the other way, adding into global memory): one thread asks the copy
//     engine for a whole box of a tensor (coordinates in elements, innermost
//     first, as the TensorMap was encoded); rows outside the tensor arrive
//     as zeros. The engine writes shared memory through the async proxy, so
//     wgmma may read it with no proxy fence.
//   - mbarriers: a copy's bytes complete a phase of the barrier it names
//     (`expectBytes` arms it); consumers wait on a phase's parity and
//     release a buffer by arriving on another barrier.
//   - named barriers (`bar.sync` / `bar.arrive` with an id and a count) to
//     order two consumer warpgroups without stopping the producer.
//   - `setmaxnreg`: the producer gives registers back, consumers take them.
//     Needs a register cap at entry (__launch_bounds__(threads, 1)).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_KERNELS_TMA_CUH
#define FUSE_KERNELS_TMA_CUH

namespace fuse {
namespace tma {

FUSE_DEVICE void initBarrier(uint32_t barrier, int arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(barrier), "r"(arrivals)
               : "memory");
}

/// Makes initialised barriers visible to the copy engine; a CTA barrier
/// follows before anyone uses them.
FUSE_DEVICE void fenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

/// This thread's arrival, announcing `bytes` that copies will deliver
/// before the phase completes.
FUSE_DEVICE void expectBytes(uint32_t barrier, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(barrier),
               "r"(bytes)
               : "memory");
}

FUSE_DEVICE void arrive(uint32_t barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(barrier) : "memory");
}

/// Waits until the phase of parity `parity` has completed. A fresh barrier
/// is in phase 0, so waiting on parity 1 returns at once (a producer's
/// first pass over empty buffers).
FUSE_DEVICE void wait(uint32_t barrier, uint32_t parity) {
  asm volatile("{\n"
               ".reg .pred done;\n"
               "retry:\n"
               "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
               "@!done bra retry;\n"
               "}\n" ::"r"(barrier),
               "r"(parity)
               : "memory");
}

/// Box at (c0, c1, c2, c3) of a 4-d tensor into shared `destination`,
/// completing `barrier`'s transaction bytes.
FUSE_DEVICE void load4d(uint32_t destination, const TensorMap &map, uint32_t barrier,
                        int c0, int c1, int c2, int c3) {
  asm volatile("cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(destination),
               "l"(reinterpret_cast<uint64_t>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
               "r"(barrier)
               : "memory");
}

/// bytes (a multiple of 16; both addresses 16-byte aligned) of global
/// memory from `source` into shared `destination`, completing `barrier`'s
/// transaction bytes: a plain bulk copy, no tensor map.
FUSE_DEVICE void loadBulk(uint32_t destination, const void *source, uint32_t bytes,
                          uint32_t barrier) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
               " [%0], [%1], %2, [%3];\n" ::"r"(destination),
               "l"(reinterpret_cast<uint64_t>(source)), "r"(bytes), "r"(barrier)
               : "memory");
}

/// Adds the shared box `source` to the tensor at (c0, c1, c2) (f32 maps:
/// element-wise add in L2), as one bulk group of this thread; elements
/// outside the tensor are dropped. Wait for the read with
/// `cp.async.bulk.wait_group.read` before rewriting `source`.
FUSE_DEVICE void reduceAdd3d(const TensorMap &map, uint32_t source, int c0, int c1, int c2) {
  asm volatile("cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group"
               " [%0, {%1, %2, %3}], [%4];\n" ::"l"(reinterpret_cast<uint64_t>(&map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(source)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}

FUSE_DEVICE void prefetch(const TensorMap &map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(&map))
               : "memory");
}

/// Named barrier `id` (1..15; 0 is __syncthreads) for `threads` threads:
/// sync waits for all of them, arrive counts this warp and goes on.
template <int Id> FUSE_DEVICE void namedSync(int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"n"(Id), "r"(threads) : "memory");
}
template <int Id> FUSE_DEVICE void namedArrive(int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"n"(Id), "r"(threads) : "memory");
}

template <int Registers> FUSE_DEVICE void raiseRegisters() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers> FUSE_DEVICE void lowerRegisters() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

} // namespace tma
} // namespace fuse

#endif // FUSE_KERNELS_TMA_CUH
