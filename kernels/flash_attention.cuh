// fuse-depends: flash_forward.cuh flash_forward_tma.cuh flash_backward.cuh flash_backward_tma.cuh
//===- flash_attention.cuh - The flash-attention kernels, all of them -----===//
//
// The one name the code generator asks for: flash_common.cuh (parameters,
// tile sizes, tensor-core primitives), flash_forward.cuh and
// flash_backward.cuh come in front of it through the fuse-depends line.
//
//   flashAttentionForward<T, D>   grid (ceil(tq / kFlashBlockM), qHeads, batch),
//                                 kFlashThreads, flashForwardSharedBytes(D)
//   flashBackwardPreprocess<T, D, M>
//                                 grid (ceil(ceil(tq / M) M / kFlashBlockM), qHeads,
//                                 batch), kFlashThreads, no shared memory; M is
//                                 the key-tile kernel's query rows a step
//                                 (kFlashBackwardBlockM, flashBackwardTmaBlockM)
//   flashAttentionBackward<T, D>  grid (ceil(tk / kFlashBlockN), kvHeads, batch),
//                                 kFlashBackwardThreads, flashBackwardSharedBytes(D)
//   flashBackwardConvertDq<T, D>  as the preprocess
//
// and the warp-specialised sm_90a kernels the code generator prefers
// wherever the copy engine can address the operands (and, for the forward,
// FlashAttentionConfig.h's flashForwardUsesTma allows), which read their
// operands through tensor maps:
//
//   flashAttentionForwardTma<T, D>   persistent: grid min(items, multiprocessors)
//                                    with items = ceil(tq / kFlashBlockM) x qHeads
//                                    x batch (KernelLaunch::
//                                    persistentBlocksPerMultiprocessor), or one
//                                    CTA per item; kFlashTmaThreads,
//                                    flashForwardTmaSharedBytes(D)
//   flashAttentionBackwardTma<T, D, M>
//                                    M = flashBackwardTmaBlockM(D, causal, dropout); grid
//                                    (ceil(tk / kFlashBackwardTmaBlockN), kvHeads,
//                                    batch), kFlashTmaThreads,
//                                    flashBackwardTmaSharedBytes(D, M), between
//                                    the preprocess (same M) and dQ conversion
//   flashDropoutKeepBits             the TMA backward's keep mask, drawn before it
//                                    (flash_dropout_bits.cuh gives the grid)
//
// T is fuse::bf16 or fuse::f16, D is 64 or 128. Wrapper kernels should
// carry __launch_bounds__ of their block size (the TMA kernels with a
// minimum of one block a multiprocessor, as the code generator emits them).
//
//===----------------------------------------------------------------------===//
