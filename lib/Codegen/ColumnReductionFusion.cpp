//===- ColumnReductionFusion.cpp - Reductions over leading dimensions -----===//
//
// Blocks of 32 columns x 8 row lanes: a warp reads 32 adjacent columns of a
// row (coalesced), the 8 lanes combine in shared memory. When the columns
// alone give too few blocks to fill the GPU (a bias gradient of 768 columns
// over 8192 rows), the rows are split over gridDim.y: each block writes its
// partial results to the workspace and a second, small kernel combines them
// and computes the per-column outputs. Otherwise one kernel does both.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

namespace {

constexpr int64_t kColumns = 32;
constexpr int64_t kRowLanes = 8;
// Blocks of 256 threads that fill an H100/H200 once (132 SMs x 8 resident
// blocks). The split count is rounded down to stay within one wave: one
// block over it starts a second wave that runs almost empty (a [8192, 2304]
// bias gradient split 15 ways, 1080 blocks, kept the SMs 70% busy).
constexpr int64_t kTargetBlocks = 1056;
// Rows a block lane should at least get, so the partials stay few. Small
// enough that 768 columns over 8192 rows still fill the GPU (at 64 they took
// 384 blocks: 36% occupancy, 40% of the bandwidth).
constexpr int64_t kMinRowsPerBlock = 16;
// Row iterations unrolled, so that each thread has that many independent
// loads in flight.
constexpr int64_t kRowUnroll = 4;

/// The per-column outputs, from the combined `accumulators` (in scope as
/// variables), at column `col`.
void finishColumns(ScalarEmitter &emitter, CodeBuffer &code, FusionOp fusion,
                   ArrayRef<ReduceOp> reduces,
                   const std::vector<std::string> &accumulators,
                   const std::vector<std::string> &outputs, int64_t rows,
                   int64_t columns) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [i, constReduce] : llvm::enumerate(reduces)) {
    ReduceOp reduce = constReduce;
    std::string value = accumulators[i];
    if (reduce.getKind() == ReduceKind::Mean)
      value = value + " / " + floatLiteral(static_cast<double>(rows));
    std::string name = emitter.fresh("red");
    code.line("const float " + name + " = " +
              ScalarEmitter::roundTo(dtypeOf(reduce.getResult()), value) + ";");
    emitter.provide(reduce.getResult(), name);
  }
  emitter.pushScope();
  for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
    Value result = fusion.getResult(k);
    if (numElements(shapeOf(result)) != columns || rows == 1)
      continue;
    std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), "col"));
    code.line(storeStatement(outputs[k], dtypeOf(result), "col", element));
  }
  emitter.popScope();
}

} // namespace

LogicalResult lowerColumnReductionFusion(FusionOp fusion,
                                         CodegenContext &context) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<ReduceOp> reduces;
  FailureOr<ReductionShape> shape = sharedReductionShape(fusion, false, reduces);
  if (failed(shape))
    return failure();
  // A reduction of a reduction would need a grid-wide barrier.
  std::vector<int> levels = reductionLevels(reduces);
  for (auto [reduce, level] : llvm::zip(reduces, levels))
    if (level > 1)
      return reduce.emitError() << "the column reduction template cannot "
                                   "reduce the result of another reduction";
  int64_t columns = shape->kept, rows = shape->reduced;
  for (Value result : fusion.getResults()) {
    int64_t n = numElements(shapeOf(result));
    if (n != rows * columns && n != columns)
      return fusion.emitError() << "column_reduction output of " << n
                                << " elements is neither per column ("
                                << columns << ") nor per element ("
                                << rows * columns << ")";
  }

  int64_t blockColumns = (columns + kColumns - 1) / kColumns;
  // Split the rows over gridDim.y until the GPU is full, if there are rows
  // enough; the partial results then go through the workspace to a second
  // kernel that finishes the per-column outputs (deterministic, unlike
  // atomics, and open to any ops after the reductions).
  int64_t splits = std::max<int64_t>(
      1, std::min(kTargetBlocks / blockColumns,
                  (rows + kRowLanes * kMinRowsPerBlock - 1) /
                      (kRowLanes * kMinRowsPerBlock)));
  std::string indexType = indexTypeFor(fusion);
  std::string n = std::to_string(columns);
  auto [flops, bytes] = stepCost(fusion);
  std::string label = describeOp(fusion);
  int64_t partialFloats = static_cast<int64_t>(reduces.size()) * splits * columns;
  runtime::BufferRef partials;
  if (splits > 1)
    partials = context.workspace(partialFloats * 4);

  // Kernel 1: every element once; per-element outputs; column partials.
  {
    KernelParams params;
    std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
    std::vector<std::string> outputs = bindOutputs(fusion, context, params);
    std::string partial =
        splits > 1 ? params.add("partial", DType::F32, false, partials) : "";
    ScalarEmitter emitter(body, inputs, indexType);
    emitter.requireHelper("math.cuh");
    CodeBuffer code;
    emitter.setCode(code);
    code.line("using idx_t = " + indexType + ";");
    code.line("const idx_t col = (idx_t)blockIdx.x * " + std::to_string(kColumns) +
              " + threadIdx.x;");
    std::vector<std::string> accumulators;
    for (ReduceOp reduce : reduces) {
      std::string acc = emitter.fresh("acc");
      code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
      accumulators.push_back(acc);
    }
    code.line("if (col < " + n + ") {");
    code.indent();
    // Unrolled only where a lane has rows enough: a handful of iterations
    // gains nothing, and NVRTC gave such a loop (8 rows a lane, unknown
    // trip count) a stack frame.
    if (rows / (splits * kRowLanes) >= 4 * kRowUnroll)
      code.line("#pragma unroll " + std::to_string(kRowUnroll));
    code.line("for (idx_t r = (idx_t)blockIdx.y * " + std::to_string(kRowLanes) +
              " + threadIdx.y; r < " + std::to_string(rows) +
              "; r += (idx_t)gridDim.y * " + std::to_string(kRowLanes) + ") {");
    code.indent();
    code.line("const idx_t lin = r * " + n + " + col;");
    emitter.knowSplit("lin", columns, "r", "col");
    emitter.pushScope();
    for (auto [reduce, acc] : llvm::zip(reduces, accumulators)) {
      std::string value = emitter.emit(
          reduce.getOperand(), emitter.unflatten(shapeOf(reduce.getOperand()), "lin"));
      code.line(acc + " = " + reductionCombine(reduce.getKind(), acc, value) + ";");
    }
    for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
      Value result = fusion.getResult(k);
      if (numElements(shapeOf(result)) == columns && rows != 1)
        continue;
      std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), "lin"));
      code.line(storeStatement(outputs[k], dtypeOf(result), "lin", element));
    }
    emitter.popScope();
    code.dedent();
    code.line("}");
    code.dedent();
    code.line("}");
    // Combine the row lanes of each column in shared memory.
    for (size_t i = 0; i < accumulators.size(); ++i)
      code.line("__shared__ float part" + std::to_string(i) + "[" +
                std::to_string(kRowLanes) + "][" + std::to_string(kColumns + 1) + "];");
    for (auto [i, acc] : llvm::enumerate(accumulators))
      code.line("part" + std::to_string(i) + "[threadIdx.y][threadIdx.x] = " + acc + ";");
    code.line("__syncthreads();");
    code.line("if (threadIdx.y == 0 && col < " + n + ") {");
    code.indent();
    for (auto [i, constReduce] : llvm::enumerate(reduces)) {
      ReduceOp reduce = constReduce;
      std::string acc = accumulators[i], part = "part" + std::to_string(i);
      code.line(acc + " = " + part + "[0][threadIdx.x];");
      code.line("#pragma unroll");
      code.line("for (int lane = 1; lane < " + std::to_string(kRowLanes) + "; ++lane) " +
                acc + " = " +
                reductionCombine(reduce.getKind(), acc, part + "[lane][threadIdx.x]") + ";");
      if (splits > 1)
        code.line(partial + "[" + std::to_string(static_cast<int64_t>(i) * splits * columns) +
                  " + (idx_t)blockIdx.y * " + n + " + col] = " + acc + ";");
    }
    if (splits == 1)
      finishColumns(emitter, code, fusion, reduces, accumulators, outputs, rows,
                    columns);
    code.dedent();
    code.line("}");
    if (emitter.failed())
      return failure();
    context.bindDenseConstants(emitter, params);
    KernelSpec spec;
    spec.kind = "column_reduction";
    spec.body = kernelSignature(params, static_cast<int>(kColumns * kRowLanes)) +
                code.text() + "}\n";
    spec.helpers = emitter.helpers();
    spec.grid = {static_cast<uint32_t>(blockColumns), static_cast<uint32_t>(splits), 1};
    spec.block = {static_cast<uint32_t>(kColumns), static_cast<uint32_t>(kRowLanes), 1};
    spec.args = params.args;
    context.addLaunch(spec, label, label, flops, bytes);
  }
  if (splits == 1)
    return success();

  // Kernel 2: per column, the partials combined and the per-column outputs.
  KernelParams params;
  std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
  std::vector<std::string> outputs = bindOutputs(fusion, context, params);
  std::string partial = params.add("partial", DType::F32, true, partials);
  ScalarEmitter emitter(body, inputs, indexType);
  emitter.requireHelper("math.cuh");
  CodeBuffer code;
  emitter.setCode(code);
  code.line("using idx_t = " + indexType + ";");
  code.line("const idx_t col = (idx_t)blockIdx.x * blockDim.x + threadIdx.x;");
  code.line("if (col >= " + n + ") return;");
  std::vector<std::string> accumulators;
  for (auto [i, constReduce] : llvm::enumerate(reduces)) {
    ReduceOp reduce = constReduce;
    std::string acc = emitter.fresh("acc");
    code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
    code.line("for (int s = 0; s < " + std::to_string(splits) + "; ++s) " + acc + " = " +
              reductionCombine(reduce.getKind(), acc,
                               partial + "[" + std::to_string(static_cast<int64_t>(i) * splits * columns) +
                                   " + s * " + n + " + col]") +
              ";");
    accumulators.push_back(acc);
  }
  finishColumns(emitter, code, fusion, reduces, accumulators, outputs, rows,
                columns);
  if (emitter.failed())
    return failure();
  context.bindDenseConstants(emitter, params);
  KernelSpec spec;
  spec.kind = "column_finish";
  spec.body = kernelSignature(params, 256) + code.text() + "}\n";
  spec.helpers = emitter.helpers();
  spec.grid = {static_cast<uint32_t>((columns + 255) / 256), 1, 1};
  spec.block = {256, 1, 1};
  spec.args = params.args;
  context.addLaunch(spec, "finish " + label, "finish " + label, 0.0,
                    static_cast<double>(partialFloats) * 4);
  return success();
}

} // namespace fuse::codegen
