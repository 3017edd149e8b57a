//===- ScatterAddLowering.cpp - Embedding backward with atomics -----------===//
//
// `fuse.scatter_add %dest[%indices], %updates`: the result starts as dest
// (written there when dest is a splat, else a copy unless planned in place),
// then every element of `updates` is added at its index with atomicAdd, so
// repeated indices accumulate. f32 results only (atomicAdd on f32).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;

namespace fuse::codegen {

LogicalResult lowerScatterAdd(ScatterAddOp scatter, CodegenContext &context) {
  Value result = scatter.getResult();
  if (dtypeOf(result) != DType::F32)
    return scatter.emitError() << "the CUDA code generator scatter-adds into "
                                  "f32 only (atomicAdd), not "
                               << dtypeName(dtypeOf(result));
  BufferRef out = context.buffer(result);
  int64_t bytes = numElements(shapeOf(result)) * 4;
  std::string label = describeOp(scatter);
  const ValueLocation &dest = context.location(scatter.getDest());
  if (dest.literal) {
    lowerSplatFill(dest, result, out, label, context);
  } else if (!(*dest.buffer == out)) {
    context.addCopy({*dest.buffer, out, bytes}, "start " + label);
  }
  const ValueLocation &indices = context.location(scatter.getIndices());
  const ValueLocation &updates = context.location(scatter.getUpdates());
  if (!updates.buffer)
    return scatter.emitError() << "scatter_add updates must be in memory, not a splat";

  std::vector<int64_t> updateShape = shapeOf(scatter.getUpdates());
  std::vector<int64_t> resultShape = shapeOf(result);
  std::vector<int64_t> indexShape = shapeOf(scatter.getIndices());
  int64_t dim = scatter.getDim(), indexRank = static_cast<int64_t>(indexShape.size());
  int64_t total = numElements(updateShape);
  DType updateType = dtypeOf(scatter.getUpdates());
  DType indexType = dtypeOf(scatter.getIndices());

  KernelParams params;
  std::string out0 = params.add("out", DType::F32, false, out);
  // Splat indices (BERT's all-zero token types) are a literal.
  std::string idx = indices.literal ? std::string()
                                    : params.add("idx", indexType, true, *indices.buffer);
  std::string upd = params.add("upd", updateType, true, *updates.buffer);
  std::string type = indexTypeFor(scatter);
  CodeBuffer code;
  code.line("using idx_t = " + type + ";");
  code.line("for (idx_t p = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; p < " +
            std::to_string(total) + "; p += (idx_t)gridDim.x * blockDim.x) {");
  code.indent();
  // Split p into (outer, index position, inner) along `dim`.
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim + indexRank); d < updateShape.size(); ++d)
    inner *= updateShape[d];
  int64_t positions = numElements(indexShape);
  code.line("const idx_t inner = p % " + std::to_string(inner) + ";");
  code.line("const idx_t position = (p / " + std::to_string(inner) + ") % " +
            std::to_string(positions) + ";");
  code.line("const idx_t outer = p / " + std::to_string(inner * positions) + ";");
  code.line("const idx_t at = (idx_t)" +
            (indices.literal ? *indices.literal
                             : ScalarEmitter::fromStorage(indexType, idx + "[position]")) +
            ";");
  code.line("atomicAdd(" + out0 + " + (outer * " + std::to_string(resultShape[dim]) +
            " + at) * " + std::to_string(inner) + " + inner, " +
            ScalarEmitter::fromStorage(updateType, upd + "[p]") + ");");
  code.dedent();
  code.line("}");
  KernelSpec spec =
      plainKernel("scatter_add", params, code, std::min<int64_t>((total + 255) / 256, kGridStrideMaxBlocks));
  auto [flops, moved] = stepCost(scatter);
  context.addLaunch(spec, label, label, flops, moved);
  return success();
}

} // namespace fuse::codegen
