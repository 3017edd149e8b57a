//===- SplatFillLowering.cpp - A splat constant written to memory --------===//
//
// Splat constants live in no buffer: kernels that read them inline the
// value. Where one must exist in memory (a returned result, scatter_add's
// starting value), it is written there: a memset when every bit of the
// value is zero (+0.0, 0, false), else a grid-stride kernel that stores the
// literal, 16 bytes a thread where the element count allows. -0.0 takes the
// kernel, so the result matches the constant bit for bit.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "VectorAccess.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;

namespace fuse::codegen {

namespace {

constexpr int kFillBlock = 256;
constexpr int64_t kFillMaxBlocks = kGridStrideMaxBlocks;

bool allBitsZero(DenseElementsAttr splat) {
  if (isa<FloatType>(splat.getElementType()))
    return splat.getSplatValue<APFloat>().bitcastToAPInt().isZero();
  return splat.getSplatValue<APInt>().isZero();
}

} // namespace

void lowerSplatFill(const ValueLocation &splat, Value value, const BufferRef &out,
                    const std::string &label, CodegenContext &context) {
  DType dtype = dtypeOf(value);
  int64_t total = numElements(shapeOf(value));
  int64_t bytes = total * static_cast<int64_t>(dtypeSize(dtype));
  // An empty tensor has nothing to write (and a launch of no blocks would
  // be an error).
  if (total == 0)
    return;
  auto constant = cast<DenseElementsAttr>(cast<ConstantOp>(splat.splat).getValue());
  if (allBitsZero(constant)) {
    context.addFill({out, bytes}, "zero " + label);
    return;
  }

  KernelParams params;
  std::string pointer = params.add("out", dtype, false, out);
  int64_t width = 16 / static_cast<int64_t>(dtypeSize(dtype));
  if (total % width != 0)
    width = 1;
  std::string indexType = total < (int64_t(1) << 31) ? "int" : "long long";
  CodeBuffer code;
  code.line("using idx_t = " + indexType + ";");
  code.line("for (idx_t q = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; q < " +
            std::to_string(total / width) + "; q += (idx_t)gridDim.x * blockDim.x) {");
  code.indent();
  emitVectorStore(code, pointer, dtype,
                  width > 1 ? "q * " + std::to_string(width) : "q",
                  std::vector<std::string>(width, *splat.literal), "value");
  code.dedent();
  code.line("}");

  KernelSpec spec;
  spec.kind = "fill";
  spec.body = kernelSignature(params, kFillBlock) + code.text() + "}\n";
  spec.helpers = {"common.cuh"};
  if (width > 1)
    spec.helpers.push_back("vector_io.cuh");
  int64_t blocks = (total / width + kFillBlock - 1) / kFillBlock;
  spec.grid = {static_cast<uint32_t>(std::min(blocks, kFillMaxBlocks)), 1, 1};
  spec.block = {kFillBlock, 1, 1};
  spec.args = params.args;
  // The kernel is shared by every fill of this value and size; its comment
  // names no result.
  context.addLaunch(spec, "fill " + label + " with " + *splat.literal,
                    "fill with " + *splat.literal, 0,
                    static_cast<double>(bytes));
}

} // namespace fuse::codegen
