//===- Lowerings.h - From fusions and ops to executable steps ---*- C++ -*-===//
//
// One function per kind of top-level op. Each appends its steps (launches,
// GEMMs, fills, copies) to the context in order, or reports an error on the
// op and fails.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_CODEGEN_LOWERINGS_H
#define FUSE_LIB_CODEGEN_LOWERINGS_H

#include "CodegenContext.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include <array>
#include <functional>

namespace fuse::codegen {

/// Blocks of a grid-stride kernel: enough to fill an H100/H200 (132 SMs x 8
/// resident blocks of 256 threads) twice; the grid-stride loop covers the
/// rest.
constexpr int64_t kGridStrideMaxBlocks = 2112;
/// Blocks of 256 threads that fill an H100/H200 once (132 SMs x 8): what a
/// split reduction (rows over gridDim.y in the column template, a long row
/// over gridDim.x in the split-row one) aims for. Rounded down to stay in
/// one wave: a block over it starts a second that runs almost empty.
constexpr int64_t kSplitTargetBlocks = 1056;

/// Extra parameters and value overrides a caller adds to a loop kernel (the
/// GEMM epilogue reads the matmul's result from the workspace).
using LoopKernelSetup = std::function<void(ScalarEmitter &, KernelParams &)>;

/// Elementwise fusions: each thread computes VEC consecutive elements of
/// every output (16-byte vector loads and stores where the access is
/// contiguous), grid-stride.
mlir::LogicalResult lowerLoopFusion(mlir::fuse::FusionOp fusion,
                                    CodegenContext &context,
                                    const LoopKernelSetup &setup = {});
/// Reductions over the trailing dimensions (norms, softmax, cross entropy):
/// a warp or a block per row, the row kept in registers when it fits.
mlir::LogicalResult lowerRowReductionFusion(mlir::fuse::FusionOp fusion,
                                            CodegenContext &context);
/// Where every output of a kernel is `select(condition, new, old)` with
/// `old` the output's own buffer (planned in place) and a condition computed
/// from scalars (a value of one element), each output's condition and the
/// value under which it changes (UnchangedUnless.cpp); else none. The kernel
/// changes nothing when no condition has its value.
struct KeptUnless {
  mlir::Value condition;
  bool changesWhen;
};
std::vector<KeptUnless> keptUnless(mlir::fuse::FusionOp fusion, CodegenContext &context);
/// The conditions of `kept` as guard terms the executor evaluates without
/// the kernel (a one-element input read as it is, or compared with a
/// constant): empty unless every one of them is of that form.
std::vector<fuse::runtime::LaunchGuardTerm>
guardTerms(mlir::fuse::FusionOp fusion, const std::vector<KeptUnless> &kept,
           CodegenContext &context);
/// Few long rows of a row reduction fusion split over many blocks
/// (SplitRowReductionFusion.cpp): false, with nothing emitted, where the
/// split does not apply and the row template's block per row should run.
/// `levels` as reductionLevels gives them.
mlir::FailureOr<bool> lowerSplitRowReduction(mlir::fuse::FusionOp fusion, CodegenContext &context,
                                             llvm::ArrayRef<mlir::fuse::ReduceOp> reduces,
                                             llvm::ArrayRef<int> levels, int64_t rows,
                                             int64_t rowLength);
/// Reductions over the leading dimensions (bias and norm-weight
/// gradients): tiled, split over rows with atomics when columns are few.
mlir::LogicalResult lowerColumnReductionFusion(mlir::fuse::FusionOp fusion,
                                               CodegenContext &context);
/// A matmul and its epilogue: cuBLASLt with the epilogue folded in where it
/// has one, else the GEMM into the workspace and a loop kernel after it.
mlir::LogicalResult lowerGemmEpilogueFusion(mlir::fuse::FusionOp fusion,
                                            CodegenContext &context);
mlir::LogicalResult lowerMatmul(mlir::fuse::MatmulOp matmul,
                                CodegenContext &context);
/// Attention forward and backward as batched GEMMs around softmax kernels.
mlir::LogicalResult lowerAttentionFusion(mlir::fuse::FusionOp fusion,
                                         CodegenContext &context);
/// Attention on the flash kernels (kernels/flash_attention.cuh) when their
/// dtype, head dim and mask allow: true when lowered, false (with a remark
/// saying why) when the GEMM + softmax lowering must take it.
mlir::FailureOr<bool> lowerFlashAttention(mlir::fuse::FusionOp fusion,
                                          CodegenContext &context);
/// Element strides of an attention mask [B or 1, H or 1, Tq or 1, Tk] over
/// batch, head and query row: 0 along a broadcast dimension.
std::array<int64_t, 3> attentionMaskStrides(mlir::Value mask);
mlir::LogicalResult lowerScatterAdd(mlir::fuse::ScatterAddOp scatter,
                                    CodegenContext &context);
/// A prefix sum: a warp-shuffle scan per row along the last dimension, a
/// sequential scan per column along any other.
mlir::LogicalResult lowerCumsum(mlir::fuse::CumsumOp cumsum,
                                CodegenContext &context);
/// Writes the splat constant at `splat` (a location with a literal) into
/// `out` with `value`'s type and shape: a memset when its bits are all zero,
/// else a fill kernel. `label` names the step ("result 3").
void lowerSplatFill(const ValueLocation &splat, mlir::Value value,
                    const runtime::BufferRef &out, const std::string &label,
                    CodegenContext &context);

/// A reduction seen as `kept` independent reductions of `reduced` elements.
struct ReductionShape {
  int64_t kept = 1;
  int64_t reduced = 1;
};
/// Checks that `reduce` reduces the trailing (row) or leading (column)
/// dimensions of its operand, reporting an error on it otherwise.
mlir::FailureOr<ReductionShape> reductionShape(mlir::fuse::ReduceOp reduce,
                                               bool trailing);
/// Every fuse.reduce of `fusion` (into `reduces`) and the shape they share;
/// an error on the fusion or the reduction that breaks the template.
mlir::FailureOr<ReductionShape>
sharedReductionShape(mlir::fuse::FusionOp fusion, bool trailing,
                     llvm::SmallVectorImpl<mlir::fuse::ReduceOp> &reduces);
/// Which pass each of `reduces` (ops of one fusion) runs in: 1 plus the
/// deepest pass of a reduction its operand depends on.
std::vector<int> reductionLevels(llvm::ArrayRef<mlir::fuse::ReduceOp> reduces);
std::string reductionInit(mlir::fuse::ReduceKind kind);
std::string reductionCombine(mlir::fuse::ReduceKind kind, const std::string &a,
                             const std::string &b);
/// Declares `reduce`'s result from its combined accumulator `acc` (a Mean
/// divided by the `count` elements it reduced, rounded to the result type)
/// and hands it to the emitter for the ops after the reduction.
void provideReduction(ScalarEmitter &emitter, CodeBuffer &code, mlir::fuse::ReduceOp reduce,
                      const std::string &acc, int64_t count);
/// "Sum", "Max" or "Min": the suffix of the kernels/reductions.cuh helper.
std::string reductionSuffix(mlir::fuse::ReduceKind kind);

/// 2·m·n·k per batch entry: the FLOPs of a GEMM step.
double gemmFlops(const runtime::GemmStep &gemm);

/// The M, N and K a GEMM runs with once the dimensions stored innermost
/// are padded to 16-byte rows (GemmAlignment.cpp); the GEMM's own where
/// they are aligned or staging would cost more than it saves.
struct GemmPadding {
  int64_t m = 0, n = 0, k = 0;
  bool changes(const runtime::GemmStep &gemm) const {
    return m != gemm.m || n != gemm.n || k != gemm.k;
  }
};
GemmPadding planGemmPadding(const runtime::GemmStep &gemm);
/// The graph's values a GEMM reads as A, B and C (null where none): a
/// staged copy of one is kept for later GEMMs that stage the same value
/// the same way.
struct GemmSources {
  mlir::Value a, b, c;
};
/// Points the operands (A, B, C, bias) that `padding` reshapes at
/// zero-filled workspace matrices with aligned rows, copied here or kept
/// from an earlier GEMM, with `gemm`'s dimensions, leading dimensions and
/// strides padded. D is left to the caller: `gemm.m` x `gemm.n` per batch
/// entry after this.
void stageGemmInputs(runtime::GemmStep &gemm, const GemmPadding &padding,
                     const GemmSources &sources, CodegenContext &context,
                     const std::string &label);
/// `gemm` writing `result` (dense): staged per planGemmPadding, with the
/// result copied from a padded one in the workspace where M or N grew.
void addPaddedGemm(runtime::GemmStep gemm, const GemmSources &sources,
                   const runtime::BufferRef &result, CodegenContext &context,
                   const std::string &label, double flops, double bytes);
/// A kernel copying `matrices` dense row-major matrices of rows x cols at
/// `source` to matrices of toRows x toCols at `target`: the corner both
/// have, zero where the source has nothing.
void addRepitchKernel(CodegenContext &context, const runtime::BufferRef &source,
                      const runtime::BufferRef &target, DType dtype,
                      int64_t matrices, int64_t rows, int64_t cols,
                      int64_t toRows, int64_t toCols, const std::string &label);

/// The parameters of a fusion's outputs (`out<N>`), after its inputs.
std::vector<std::string> bindOutputs(mlir::Operation *fusion,
                                     CodegenContext &context,
                                     KernelParams &params);
/// A kernel of 256-thread blocks over `blocks` blocks whose body is `code`
/// (common.cuh its only helper): the grid-stride helpers' launch (casts,
/// scatters, copies).
KernelSpec plainKernel(const std::string &kind, const KernelParams &params,
                       const CodeBuffer &code, int64_t blocks);

/// `pointer[linear] = value` converted to the storage of `dtype`.
std::string storeStatement(const std::string &pointer, DType dtype,
                           const std::string &linear, const std::string &value);

} // namespace fuse::codegen

#endif // FUSE_LIB_CODEGEN_LOWERINGS_H
