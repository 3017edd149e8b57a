//===- GemmAlignment.cpp - GEMMs whose rows are not 16-byte aligned -------===//
//
// cuBLASLt's fast kernels (TMA on Hopper, 16-byte vector loads elsewhere)
// need every stored row of A, B, C and D to start on a 16-byte boundary. A
// dense tensor whose innermost dimension is not a multiple of 8 bf16 (or 4
// f32) elements breaks that, and cuBLASLt falls back to kernels that load one
// element at a time: a language model's head over a vocabulary of 50257
// (GPT-2), 50265 (RoBERTa, BART) or 51865 (Whisper) ran its three GEMMs at
// 95-146 TFLOP/s on an H200 instead of 710-780.
//
// Such a GEMM runs on staged copies instead, as Inductor's pad_mm does: each
// operand whose shape changes is copied into the workspace with its
// dimensions rounded up to a multiple of 8 and the rest zero (zeros along K
// add nothing to the dot products; the extra rows and columns of the result
// are never read), the GEMM writes a padded result, and the caller copies the
// wanted corner into the dense result or reads it in place. The copies are
// memory-bound, so this is done only where the GEMM's arithmetic dwarfs them.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include <algorithm>

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;
using ::fuse::runtime::GemmStep;

namespace fuse::codegen {

namespace {

/// Padded dimensions are rounded up to this many elements: 16 bytes of bf16
/// or f16, 32 of f32.
constexpr int64_t kPadUnit = 8;
/// Staging pays only where the unaligned GEMM's lost time exceeds the
/// copies': it runs about 5x slower than the aligned one (at best 0.8x of
/// the peak's 1/5), while a copy moves each staged byte twice at memory
/// speed. On an H100/H200 that is about 40 FLOPs per staged byte; below
/// 2^27 FLOPs (about 0.2 us of tensor-core time) the launches cost more.
constexpr double kMinFlopsPerStagedByte = 40.0;
constexpr double kMinFlops = 134217728.0;

int64_t roundUp(int64_t value) {
  return (value + kPadUnit - 1) / kPadUnit * kPadUnit;
}

/// Elements in 16 bytes of `dtype`.
int64_t alignedElements(DType dtype) {
  return 16 / static_cast<int64_t>(dtypeSize(dtype));
}

struct StoredShape {
  int64_t rows, cols;
};
StoredShape storedA(int64_t m, int64_t k, bool transA) {
  return transA ? StoredShape{k, m} : StoredShape{m, k};
}
StoredShape storedB(int64_t k, int64_t n, bool transB) {
  return transB ? StoredShape{n, k} : StoredShape{k, n};
}

/// Matrices an operand holds: the GEMM's batch where it advances by a
/// stride, one where it is shared (a weight's stride 0).
int64_t matricesOf(const GemmStep &gemm, int64_t stride) {
  return gemm.batch > 1 && stride != 0 ? gemm.batch : 1;
}

} // namespace

GemmPadding planGemmPadding(const GemmStep &gemm) {
  GemmPadding padding{gemm.m, gemm.n, gemm.k};
  int64_t ab = alignedElements(gemm.abType), cd = alignedElements(gemm.cdType);
  // K is stored innermost in A unless A is transposed, and in B when B is.
  if ((!gemm.transA || gemm.transB) && gemm.k % ab != 0)
    padding.k = roundUp(gemm.k);
  // N is innermost in D (and C), and in B unless B is transposed.
  if ((!gemm.transB && gemm.n % ab != 0) || gemm.n % cd != 0)
    padding.n = roundUp(gemm.n);
  // M is innermost only in a transposed A (a weight gradient's X^T).
  if (gemm.transA && gemm.m % ab != 0)
    padding.m = roundUp(gemm.m);
  if (!padding.changes(gemm))
    return padding;

  double staged = 0;
  auto add = [&](StoredShape from, StoredShape to, int64_t matrices, DType dtype) {
    if (from.rows != to.rows || from.cols != to.cols)
      staged += static_cast<double>(matrices) * (from.rows * from.cols + to.rows * to.cols) *
                dtypeSize(dtype);
  };
  add(storedA(gemm.m, gemm.k, gemm.transA), storedA(padding.m, padding.k, gemm.transA),
      matricesOf(gemm, gemm.strideA), gemm.abType);
  add(storedB(gemm.k, gemm.n, gemm.transB), storedB(padding.k, padding.n, gemm.transB),
      matricesOf(gemm, gemm.strideB), gemm.abType);
  add({gemm.m, gemm.n}, {padding.m, padding.n}, gemm.batch, gemm.cdType);
  if (gemm.hasC())
    add({gemm.m, gemm.n}, {padding.m, padding.n}, matricesOf(gemm, gemm.strideC), gemm.cdType);
  double flops = gemmFlops(gemm);
  if (flops < kMinFlops || flops < kMinFlopsPerStagedByte * staged)
    return GemmPadding{gemm.m, gemm.n, gemm.k};
  return padding;
}

void addRepitchKernel(CodegenContext &context, const BufferRef &source,
                      const BufferRef &target, DType dtype, int64_t matrices,
                      int64_t rows, int64_t cols, int64_t toRows,
                      int64_t toCols, const std::string &label) {
  KernelParams params;
  std::string in = params.add("in", dtype, true, source);
  std::string out = params.add("out", dtype, false, target);
  auto number = [](int64_t value) { return std::to_string(value) + "LL"; };
  int64_t targetRows = matrices * toRows;
  CodeBuffer code;
  // A block per target row, its threads along the row: the source row's
  // reads and the target row's writes are each contiguous.
  code.line("for (long long row = blockIdx.x; row < " + number(targetRows) +
            "; row += gridDim.x) {");
  code.indent();
  code.line("const long long matrix = row / " + number(toRows) + ", r = row % " +
            number(toRows) + ";");
  code.line("for (long long c = threadIdx.x; c < " + number(toCols) + "; c += blockDim.x)");
  code.indent();
  code.line(out + "[row * " + number(toCols) + " + c] = (r < " + number(rows) + " && c < " +
            number(cols) + ") ? " + in + "[(matrix * " + number(rows) + " + r) * " +
            number(cols) + " + c] : " + ScalarEmitter::toStorage(dtype, "0.0f") + ";");
  code.dedent();
  code.dedent();
  code.line("}");
  KernelSpec spec = plainKernel("repitch", params, code, std::min<int64_t>(targetRows, 65535));
  double elements = static_cast<double>(matrices) *
                    (std::min(rows, toRows) * std::min(cols, toCols) + toRows * toCols);
  context.addLaunch(spec, label, label, 0.0, elements * dtypeSize(dtype));
}

void stageGemmInputs(GemmStep &gemm, const GemmPadding &padding,
                     CodegenContext &context, const std::string &label) {
  // Copies `ref` (matrices of `from`) to the workspace as matrices of `to`
  // when they differ; returns the stride between the staged matrices.
  auto stage = [&](BufferRef &ref, DType dtype, int64_t stride, StoredShape from,
                   StoredShape to, const std::string &what) {
    if (from.rows == to.rows && from.cols == to.cols)
      return stride;
    int64_t matrices = matricesOf(gemm, stride);
    BufferRef staged = context.workspace(matrices * to.rows * to.cols *
                                         static_cast<int64_t>(dtypeSize(dtype)));
    addRepitchKernel(context, ref, staged, dtype, matrices, from.rows, from.cols,
                     to.rows, to.cols, what + " of " + label + " padded to aligned rows");
    ref = staged;
    return stride == 0 ? int64_t{0} : to.rows * to.cols;
  };
  gemm.strideA = stage(gemm.a, gemm.abType, gemm.strideA, storedA(gemm.m, gemm.k, gemm.transA),
                       storedA(padding.m, padding.k, gemm.transA), "A");
  gemm.strideB = stage(gemm.b, gemm.abType, gemm.strideB, storedB(gemm.k, gemm.n, gemm.transB),
                       storedB(padding.k, padding.n, gemm.transB), "B");
  if (gemm.hasC())
    gemm.strideC = stage(gemm.c, gemm.cdType, gemm.strideC, {gemm.m, gemm.n},
                         {padding.m, padding.n}, "C");
  if (gemm.hasBias())
    stage(gemm.bias, gemm.biasType, 0, {1, gemm.n}, {1, padding.n}, "bias");
  gemm.m = padding.m;
  gemm.n = padding.n;
  gemm.k = padding.k;
  gemm.lda = gemm.transA ? gemm.m : gemm.k;
  gemm.ldb = gemm.transB ? gemm.k : gemm.n;
  gemm.ldc = gemm.ldd = gemm.n;
  if (gemm.strideD != 0)
    gemm.strideD = gemm.m * gemm.n;
}

void addPaddedGemm(GemmStep gemm, const BufferRef &result, CodegenContext &context,
                   const std::string &label, double flops, double bytes) {
  GemmPadding padding = planGemmPadding(gemm);
  int64_t m = gemm.m, n = gemm.n;
  if (padding.changes(gemm))
    stageGemmInputs(gemm, padding, context, label);
  // Where M or N grew the GEMM writes a padded result in the workspace and
  // a kernel takes the wanted corner; where only K grew, D is as it was.
  bool paddedResult = gemm.m != m || gemm.n != n;
  gemm.d = paddedResult ? context.workspace(gemm.batch * gemm.m * gemm.n *
                                            static_cast<int64_t>(dtypeSize(gemm.cdType)))
                        : result;
  context.addGemm(gemm, label, flops, bytes);
  if (paddedResult)
    addRepitchKernel(context, gemm.d, result, gemm.cdType, gemm.batch, gemm.m, gemm.n, m, n,
                     "result of " + label + " taken from its padded rows");
}

} // namespace fuse::codegen
