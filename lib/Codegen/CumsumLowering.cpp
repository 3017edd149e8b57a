//===- CumsumLowering.cpp - fuse.cumsum as a scan kernel -----------------===//
//
// The operand is seen as [outer, n, inner] around the scanned dimension.
//
// - Scanning the last dimension (inner = 1, RoBERTa's position ids and the
//   backward's reversed cumsum): a warp per row, 8 rows a block, rows
//   grid-strided. The warp walks its row 32 elements at a time: each lane
//   loads one (consecutive lanes, consecutive addresses), an inclusive
//   warp scan by shuffles (log2(32) steps) sums the chunk, the running
//   total of the chunks before is added, and lane 31's value carries into
//   the next chunk.
// - Any other dimension (inner > 1): a thread per (outer, inner) column
//   that sums its n elements in order; neighbouring threads take
//   neighbouring columns, so every step's loads and stores are contiguous
//   across the warp.
//
// Floats accumulate in f32 and each stored element is rounded to its dtype,
// as the interpreter does (the warp scan adds in another order, which
// changes f32 rounding only); integers accumulate in 64 bits, unsigned so
// that overflow wraps as the interpreter's does, and are stored at their
// width.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;

namespace fuse::codegen {

namespace {

constexpr int kWarpRowsPerBlock = 8;
constexpr int kColumnBlock = 256;
constexpr int64_t kMaxBlocks = kGridStrideMaxBlocks;

/// The warp-per-row scan of rows of length `n` (inner = 1).
void emitRowScan(CodeBuffer &code, int64_t rows, int64_t n,
                 const std::string &accType, const std::string &load,
                 const std::string &store) {
  code.line("const int lane = threadIdx.x;");
  code.line("for (idx_t row = (idx_t)blockIdx.x * blockDim.y + threadIdx.y; row < " +
            std::to_string(rows) + "; row += (idx_t)gridDim.x * blockDim.y) {");
  code.indent();
  // Every lane of a warp has the same row and chunk, so the loops are
  // uniform across it and the full-mask shuffles are well defined.
  code.line(accType + " carry = 0;");
  code.line("for (idx_t base = 0; base < " + std::to_string(n) + "; base += 32) {");
  code.indent();
  code.line("const idx_t j = base + lane;");
  code.line("const idx_t at = row * " + std::to_string(n) + " + j;");
  code.line(accType + " v = j < " + std::to_string(n) + " ? (" + accType + ")(" +
            load + ") : (" + accType + ")0;");
  code.line("#pragma unroll");
  code.line("for (int offset = 1; offset < 32; offset <<= 1) {");
  code.line("  const " + accType + " up = __shfl_up_sync(0xffffffffu, v, offset);");
  code.line("  if (lane >= offset) v += up;");
  code.line("}");
  code.line("v += carry;");
  code.line("if (j < " + std::to_string(n) + ") " + store);
  code.line("carry = __shfl_sync(0xffffffffu, v, 31);");
  code.dedent();
  code.line("}");
  code.dedent();
  code.line("}");
}

/// The thread-per-column scan of [outer, n, inner] (inner > 1).
void emitColumnScan(CodeBuffer &code, int64_t outer, int64_t n, int64_t inner,
                    const std::string &accType, const std::string &load,
                    const std::string &store) {
  code.line("for (idx_t c = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; c < " +
            std::to_string(outer * inner) + "; c += (idx_t)gridDim.x * blockDim.x) {");
  code.indent();
  code.line("const idx_t o = c / " + std::to_string(inner) + ";");
  code.line("const idx_t start = o * " + std::to_string(n * inner) + " + (c - o * " +
            std::to_string(inner) + ");");
  code.line(accType + " v = 0;");
  code.line("for (idx_t s = 0; s < " + std::to_string(n) + "; ++s) {");
  code.indent();
  code.line("const idx_t at = start + s * " + std::to_string(inner) + ";");
  code.line("v += (" + accType + ")(" + load + ");");
  code.line(store);
  code.dedent();
  code.line("}");
  code.dedent();
  code.line("}");
}

} // namespace

LogicalResult lowerCumsum(CumsumOp cumsum, CodegenContext &context) {
  Value result = cumsum.getResult();
  DType dtype = dtypeOf(result);
  std::vector<int64_t> shape = shapeOf(result);
  int64_t dim = static_cast<int64_t>(cumsum.getDim());
  int64_t outer = 1, inner = 1, n = shape[dim];
  for (int64_t d = 0; d < dim; ++d)
    outer *= shape[d];
  for (size_t d = static_cast<size_t>(dim) + 1; d < shape.size(); ++d)
    inner *= shape[d];
  if (outer * n * inner == 0)
    return success();

  KernelParams params;
  const ValueLocation &operand = context.location(cumsum.getOperand());
  // A splat operand (a cumsum of ones) is its literal; anything else, a
  // dense constant included, is read from memory.
  std::string load;
  if (operand.literal) {
    load = *operand.literal;
  } else {
    std::string in = params.add("in", dtype, true, *operand.buffer);
    load = ScalarEmitter::fromStorage(dtype, in + "[at]");
  }
  std::string out = params.add("out", dtype, false, context.buffer(result));
  std::string accType = isFloat(dtype) ? "float" : "unsigned long long";
  std::string store = storeStatement(out, dtype, "at",
                                     isFloat(dtype) ? "v" : "(long long)v");

  CodeBuffer code;
  code.line("using idx_t = " + indexTypeFor(cumsum) + ";");
  KernelSpec spec;
  spec.kind = "cumsum";
  int64_t blocks;
  if (inner == 1) {
    emitRowScan(code, outer, n, accType, load, store);
    spec.block = {32, kWarpRowsPerBlock, 1};
    blocks = (outer + kWarpRowsPerBlock - 1) / kWarpRowsPerBlock;
  } else {
    emitColumnScan(code, outer, n, inner, accType, load, store);
    spec.block = {kColumnBlock, 1, 1};
    blocks = (outer * inner + kColumnBlock - 1) / kColumnBlock;
  }
  spec.body = kernelSignature(params, 32 * kWarpRowsPerBlock) + code.text() + "}\n";
  spec.helpers = {"common.cuh"};
  spec.grid = {static_cast<uint32_t>(std::min(blocks, kMaxBlocks)), 1, 1};
  spec.args = params.args;
  auto [flops, bytes] = stepCost(cumsum);
  std::string label = describeOp(cumsum);
  context.addLaunch(spec, label, label, flops, bytes);
  return success();
}

} // namespace fuse::codegen
