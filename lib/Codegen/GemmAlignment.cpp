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
// The dimensions must be padded, not only the rows: with rows padded to 16
// bytes but N or K left at 50257, cuBLASLt ran GPT-2's head GEMMs 5-7x
// slower on an H200 (an odd M cost 1.6x).
//
// A padded result larger than the graph's staging bound (256 MiB unless
// `fuse.gemm_staging_bytes` says otherwise) is made a block of rows at a
// time: a GEMM per block into one block of workspace, each copied out
// before the next GEMM overwrites it. Without that, a language model's
// padded logits sat in the workspace beside the dense ones (GPT-2 B8 T1024
// inference: 823 MB of its 1.03 GB workspace).
//
// GEMMs of one step often stage the same value the same way: a head's
// forward and its input's gradient both pad the weight's rows, and the
// input's and the weight's gradients both pad dY [tokens, vocabulary]. The
// first GEMM's copy stays in the workspace for the later ones
// (CodegenContext::stagedCopy) instead of being made again.
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

namespace {

/// `value` as a 64-bit literal of the kernel's text.
std::string longLiteral(int64_t value) { return std::to_string(value) + "LL"; }

/// Opens a grid-stride loop over `count` chunks, `chunk` its index.
void openChunkLoop(CodeBuffer &code, const std::string &count) {
  code.line("for (long long chunk = (long long)blockIdx.x * blockDim.x + threadIdx.x; " + count +
            "; chunk += (long long)gridDim.x * blockDim.x) {");
  code.indent();
}

/// The body of a copy of the corner toRows x toCols of each source matrix
/// (rows x cols) into dense target matrices, walked as one flat array of
/// target elements: each thread stores `width` consecutive target elements
/// (16 bytes) at once, loading them one by one from the source rows they
/// fall in (a row boundary inside a vector moves the load to the next
/// row). The target must start 16-byte aligned.
void emitCornerCopy(CodeBuffer &code, const std::string &in, const std::string &out,
                    const std::string &type, const std::string &zero, int64_t width,
                    int64_t matrices, int64_t rows, int64_t cols, int64_t toRows,
                    int64_t toCols) {
  std::string w = std::to_string(width), total = longLiteral(matrices * toRows * toCols);
  openChunkLoop(code, "chunk * " + w + " < " + total);
  code.line("const long long first = chunk * " + w + ";");
  code.line("long long row = first / " + longLiteral(toCols) + ";");
  code.line("int c = (int)(first - row * " + longLiteral(toCols) + ");");
  code.line("long long matrix = row / " + longLiteral(toRows) + ";");
  code.line("int r = (int)(row - matrix * " + longLiteral(toRows) + ");");
  code.line("const " + type + " *src = " + in + " + (matrix * " + longLiteral(rows) + " + r) * " +
            longLiteral(cols) + ";");
  code.line("fuse::Vec<" + type + ", " + w + "> v;");
  code.line("#pragma unroll");
  code.line("for (int e = 0; e < " + w + "; ++e) {");
  code.indent();
  code.line("v.v[e] = first + e < " + total + " ? src[c] : " + zero + ";");
  code.line("if (++c == " + std::to_string(toCols) + ") {");
  code.line("  c = 0;");
  code.line("  if (++r == " + std::to_string(toRows) + ") { r = 0; ++matrix; }");
  code.line("  src = " + in + " + (matrix * " + longLiteral(rows) + " + r) * " +
            longLiteral(cols) + ";");
  code.line("}");
  code.dedent();
  code.line("}");
  code.line("if (first + " + w + " <= " + total + ")");
  code.line("  fuse::storeVec<" + type + ", " + w + ">(" + out + " + first, v);");
  code.line("else");
  code.line("  for (int e = 0; first + e < " + total + "; ++e) " + out + "[first + e] = v.v[e];");
  code.dedent();
  code.line("}");
}

/// The body of a copy of each source matrix (rows x cols) into a padded
/// target matrix (toRows x toCols, toCols a multiple of `width`, zero where
/// the source has nothing), walked as one flat array of 16-byte target
/// vectors (never across a row: the padded rows are whole vectors).
void emitPaddedCopy(CodeBuffer &code, const std::string &in, const std::string &out,
                    const std::string &type, const std::string &zero, int64_t width,
                    int64_t matrices, int64_t rows, int64_t cols, int64_t toRows,
                    int64_t toCols) {
  std::string w = std::to_string(width);
  int64_t perRow = toCols / width;
  openChunkLoop(code, "chunk < " + longLiteral(matrices * toRows * perRow));
  code.line("const long long row = chunk / " + longLiteral(perRow) + ";");
  code.line("const int c = (int)(chunk - row * " + longLiteral(perRow) + ") * " + w + ";");
  code.line("const long long matrix = row / " + longLiteral(toRows) + ";");
  code.line("const int r = (int)(row - matrix * " + longLiteral(toRows) + ");");
  code.line("const bool inside = r < " + std::to_string(rows) + ";");
  code.line("const " + type + " *src = " + in + " + (inside ? (matrix * " + longLiteral(rows) +
            " + r) * " + longLiteral(cols) + " : 0LL);");
  code.line("fuse::Vec<" + type + ", " + w + "> v;");
  code.line("#pragma unroll");
  code.line("for (int e = 0; e < " + w + "; ++e)");
  code.line("  v.v[e] = inside && c + e < " + std::to_string(cols) + " ? src[c + e] : " + zero +
            ";");
  code.line("fuse::storeVec<" + type + ", " + w + ">(" + out + " + chunk * " + w + ", v);");
  code.dedent();
  code.line("}");
}

} // namespace

void addRepitchKernel(CodegenContext &context, const BufferRef &source,
                      const BufferRef &target, DType dtype, int64_t matrices,
                      int64_t rows, int64_t cols, int64_t toRows,
                      int64_t toCols, const std::string &label) {
  KernelParams params;
  std::string in = params.add("in", dtype, true, source);
  std::string out = params.add("out", dtype, false, target);
  int64_t targetRows = matrices * toRows;
  std::string type = storageType(dtype), zero = ScalarEmitter::toStorage(dtype, "0.0f");
  // Stores of 16 bytes, loads of one element (the other way round, 16-byte
  // loads left each lane's eight 2-byte stores 16 bytes apart, which halved
  // the bandwidth), the target walked flat over the whole grid. When an
  // operand is staged, the padded target is a workspace matrix (256-byte
  // aligned, rows a multiple of 16 bytes: emitPaddedCopy; a block per row
  // moved 2.9 TB/s on an H200). A result's corner goes to dense rows that
  // are not aligned (emitCornerCopy, 3.3 TB/s, where a block per row with
  // eight coalesced 2-byte stores a thread moved 2.2-2.4); a target that
  // does not start 16-byte aligned keeps that row kernel, below.
  int64_t width = 16 / static_cast<int64_t>(dtypeSize(dtype));
  bool vectorTarget = toRows >= rows && toCols >= cols &&
                      target.kind == BufferRef::Kind::Workspace && toCols % width == 0;
  bool flatCorner = !vectorTarget && toRows <= rows && toCols <= cols &&
                    target.offset % 16 == 0;
  CodeBuffer code;
  double elements = static_cast<double>(matrices) *
                    (std::min(rows, toRows) * std::min(cols, toCols) + toRows * toCols);
  if (vectorTarget || flatCorner) {
    if (vectorTarget)
      emitPaddedCopy(code, in, out, type, zero, width, matrices, rows, cols, toRows, toCols);
    else
      emitCornerCopy(code, in, out, type, zero, width, matrices, rows, cols, toRows, toCols);
    int64_t chunks = (matrices * toRows * toCols + width - 1) / width;
    KernelSpec spec = plainKernel("repitch", params, code,
                                  std::min<int64_t>((chunks + 255) / 256, 65535));
    spec.helpers.push_back("vector_io.cuh");
    context.addLaunch(spec, label, label, 0.0, elements * dtypeSize(dtype));
    return;
  }
  code.line("for (long long row = blockIdx.x; row < " + longLiteral(targetRows) +
            "; row += gridDim.x) {");
  code.indent();
  code.line("const long long matrix = row / " + longLiteral(toRows) + ";");
  code.line("const int r = (int)(row % " + longLiteral(toRows) + ");");
  code.line("const bool inside = r < " + std::to_string(rows) + ";");
  code.line("const " + type + " *src = " + in + " + (inside ? (matrix * " + longLiteral(rows) +
            " + r) * " + longLiteral(cols) + " : 0LL);");
  code.line(type + " *dst = " + out + " + row * " + longLiteral(toCols) + ";");
  std::string cols32 = std::to_string(cols), toCols32 = std::to_string(toCols);
  code.line("for (int c = threadIdx.x; c < " + toCols32 + "; c += blockDim.x * 8) {");
  code.indent();
  code.line(type + " v[8];");
  code.line("#pragma unroll");
  code.line("for (int e = 0; e < 8; ++e) {");
  code.line("  const int at = c + e * blockDim.x;");
  code.line("  v[e] = inside && at < " + cols32 + " ? src[at] : " + zero + ";");
  code.line("}");
  code.line("#pragma unroll");
  code.line("for (int e = 0; e < 8; ++e)");
  code.line("  if (c + e * blockDim.x < " + toCols32 + ") dst[c + e * blockDim.x] = v[e];");
  code.dedent();
  code.line("}");
  code.dedent();
  code.line("}");
  KernelSpec spec = plainKernel("repitch", params, code, std::min<int64_t>(targetRows, 65535));
  context.addLaunch(spec, label, label, 0.0, elements * dtypeSize(dtype));
}

void stageGemmInputs(GemmStep &gemm, const GemmPadding &padding, const GemmSources &sources,
                     CodegenContext &context, const std::string &label) {
  // Points `ref` (matrices of `from`) at a copy of them as matrices of `to`
  // where they differ, made here or kept from an earlier GEMM that staged
  // the same value the same way; returns the stride between the copies.
  auto stage = [&](BufferRef &ref, mlir::Value source, DType dtype, int64_t stride,
                   StoredShape from, StoredShape to, const std::string &what) {
    if (from.rows == to.rows && from.cols == to.cols)
      return stride;
    int64_t matrices = matricesOf(gemm, stride);
    StagedLayout layout{dtype, matrices, from.rows, from.cols, to.rows, to.cols};
    CodegenContext::StagedCopy staged = context.stagedCopy(source, layout);
    if (!staged.made)
      addRepitchKernel(context, ref, staged.buffer, dtype, matrices, from.rows, from.cols,
                       to.rows, to.cols, what + " of " + label + " padded to aligned rows");
    ref = staged.buffer;
    return stride == 0 ? int64_t{0} : to.rows * to.cols;
  };
  gemm.strideA = stage(gemm.a, sources.a, gemm.abType, gemm.strideA,
                       storedA(gemm.m, gemm.k, gemm.transA),
                       storedA(padding.m, padding.k, gemm.transA), "A");
  gemm.strideB = stage(gemm.b, sources.b, gemm.abType, gemm.strideB,
                       storedB(gemm.k, gemm.n, gemm.transB),
                       storedB(padding.k, padding.n, gemm.transB), "B");
  if (gemm.hasC())
    gemm.strideC = stage(gemm.c, sources.c, gemm.cdType, gemm.strideC, {gemm.m, gemm.n},
                         {padding.m, padding.n}, "C");
  if (gemm.hasBias())
    stage(gemm.bias, mlir::Value(), gemm.biasType, 0, {1, gemm.n}, {1, padding.n}, "bias");
  gemm.m = padding.m;
  gemm.n = padding.n;
  gemm.k = padding.k;
  gemm.lda = gemm.transA ? gemm.m : gemm.k;
  gemm.ldb = gemm.transB ? gemm.k : gemm.n;
  gemm.ldc = gemm.ldd = gemm.n;
  if (gemm.strideD != 0)
    gemm.strideD = gemm.m * gemm.n;
}

namespace {

/// Rows of the result per block: all of them where the padded result fits
/// the staging bound, else at most as many as fit, in units of a GEMM tile
/// (128 rows) where that many fit, else of 8 (a transposed A's blocks start
/// 16 bytes apart at least). The fewest blocks of equal units where such a
/// split exists within twice the fewest blocks (8192 rows under 1280: eight
/// of 1024, not six of 1280 and one of 512, whose GEMM ran at 87% of the
/// others' rate on an H200), else the most rows a block and a shorter last one.
int64_t rowsPerBlock(int64_t rows, int64_t rowBytes, int64_t bound) {
  if (rows * rowBytes <= bound)
    return rows;
  constexpr int64_t kTileRows = 128;
  int64_t most = bound / rowBytes;
  int64_t unit = most >= kTileRows ? kTileRows : kPadUnit;
  int64_t mostUnits = std::max<int64_t>(most / unit, 1);
  int64_t units = (rows + unit - 1) / unit;
  int64_t fewest = (units + mostUnits - 1) / mostUnits;
  for (int64_t blocks = fewest; blocks <= 2 * fewest; ++blocks)
    if (units % blocks == 0)
      return units / blocks * unit;
  return mostUnits * unit;
}

} // namespace

void addPaddedGemm(GemmStep gemm, const GemmSources &sources, const BufferRef &result,
                   CodegenContext &context, const std::string &label, double flops,
                   double bytes) {
  GemmPadding padding = planGemmPadding(gemm);
  int64_t m = gemm.m, n = gemm.n;
  if (padding.changes(gemm))
    stageGemmInputs(gemm, padding, sources, context, label);
  // Where M or N grew the GEMM writes a padded result in the workspace and
  // a kernel takes the wanted corner; where only K grew, D is as it was.
  bool paddedResult = gemm.m != m || gemm.n != n;
  if (!paddedResult) {
    gemm.d = result;
    context.addGemm(gemm, label, flops, bytes);
    return;
  }
  int64_t cdBytes = static_cast<int64_t>(dtypeSize(gemm.cdType));
  int64_t rowBytes = gemm.n * cdBytes;
  // Blocks of rows only where M kept its size (the rows of D are the rows
  // of A and C) and there is one matrix.
  int64_t blockRows = gemm.m == m && gemm.batch == 1
                          ? rowsPerBlock(m, rowBytes, context.gemmStagingBytes())
                          : gemm.m;
  gemm.d = context.workspace(gemm.batch * blockRows * rowBytes);
  if (blockRows == gemm.m) {
    context.addGemm(gemm, label, flops, bytes);
    if (gemm.n == n && gemm.batch == 1) {
      // Only M grew (a weight gradient over a vocabulary, [50264, 768]):
      // the wanted rows are the padded result's first ones, contiguous, so
      // a device copy moves them (a kernel with a block per 768-wide row
      // moved 1 TB/s on an H200).
      context.addCopy({gemm.d, result, m * rowBytes},
                      "result of " + label + " taken from its padded rows");
      return;
    }
    addRepitchKernel(context, gemm.d, result, gemm.cdType, gemm.batch, gemm.m, gemm.n, m, n,
                     "result of " + label + " taken from its padded rows");
    return;
  }
  int64_t abBytes = static_cast<int64_t>(dtypeSize(gemm.abType));
  for (int64_t first = 0; first < m; first += blockRows) {
    int64_t rows = std::min(blockRows, m - first);
    GemmStep block = gemm;
    block.m = rows;
    // A's rows are M unless A is transposed (then M runs along its rows).
    block.a.offset += first * (gemm.transA ? 1 : gemm.lda) * abBytes;
    if (gemm.hasC())
      block.c.offset += first * gemm.ldc * cdBytes;
    double share = static_cast<double>(rows) / static_cast<double>(m);
    std::string rowsLabel = " (rows " + std::to_string(first) + "-" +
                            std::to_string(first + rows - 1) + ")";
    context.addGemm(block, label + rowsLabel, flops * share, bytes * share);
    BufferRef target = result;
    target.offset += first * n * cdBytes;
    addRepitchKernel(context, block.d, target, gemm.cdType, 1, rows, gemm.n, rows, n,
                     "result of " + label + rowsLabel + " taken from its padded rows");
  }
}

} // namespace fuse::codegen
