//===- ColumnReductionFusion.cpp - Reductions over leading dimensions -----===//
//
// Blocks of 32 lanes x 8 row lanes: each lane covers up to 8 adjacent
// columns, so a warp reads one contiguous run of a row with 16-byte loads;
// the 8 row lanes combine in shared memory. When the columns
// alone give too few blocks to fill the GPU (a bias gradient of 768 columns
// over 8192 rows), the rows are split over gridDim.y: each block writes its
// partial results to the workspace and a second, small kernel combines them
// and computes the per-column outputs. Otherwise one kernel does both.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"
#include "VectorAccess.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

namespace {

constexpr int64_t kLanes = 32;
constexpr int64_t kRowLanes = 8;
// A [8192, 2304] bias gradient split 15 ways (1080 blocks, over
// kSplitTargetBlocks) kept the SMs 70% busy: the split count is rounded down.
constexpr int64_t kTargetBlocks = kSplitTargetBlocks;
// Rows a block lane should at least get, so the partials stay few. Small
// enough that a bias gradient of 1024 columns over the 2048 rows of a
// BERT-large micro-batch (B4 T512) still fills the GPU: at 16 it split 16
// ways into 64 blocks and took 12 us for 4 MB (at 64, 768 columns over 8192
// rows took 384 blocks: 36% occupancy, 40% of the bandwidth). Where there
// are rows enough, kTargetBlocks bounds the split first.
constexpr int64_t kMinRowsPerLane = 4;
// Row iterations unrolled, so that each thread has that many independent
// loads in flight.
constexpr int64_t kRowUnroll = 4;

/// Whether `result` has an element per input element (else one per column).
bool isPerElement(Value result, int64_t rows, int64_t columns) {
  return numElements(shapeOf(result)) != columns || rows == 1;
}

/// Adjacent columns a thread covers: one 16-byte access of the widest input
/// or output read or written per element, at most 8 (a block's 32 x 8
/// threads then finish its columns one each), a divisor of `columns`, and
/// no more than keeps the 32 lanes of a row busy.
int64_t columnsPerThread(FusionOp fusion, int64_t rows, int64_t columns) {
  size_t widest = 1;
  for (Value result : fusion.getResults())
    if (isPerElement(result, rows, columns))
      widest = std::max(widest, dtypeSize(dtypeOf(result)));
  for (Value input : fusion.getBody().front().getArguments())
    if (numElements(shapeOf(input)) == rows * columns)
      widest = std::max(widest, dtypeSize(dtypeOf(input)));
  int64_t width = std::min<int64_t>(kRowLanes, 16 / static_cast<int64_t>(widest));
  // Narrower where the columns would leave lanes of the warp idle.
  while (columns % width != 0 || (width > 1 && columns < kLanes * width))
    width /= 2;
  return width;
}

/// Declares (with `declare`) the shared array `part<i>` of 8 row lanes x
/// `span` columns and stores this thread's `value` at its lane and `column`.
void storeLanePartial(CodeBuffer &code, size_t i, int64_t span,
                      const std::string &column, const std::string &value,
                      bool declare = true) {
  std::string part = "part" + std::to_string(i);
  if (declare)
    code.line("__shared__ float " + part + "[" + std::to_string(kRowLanes) + "][" +
              std::to_string(span + 1) + "];");
  code.line(part + "[threadIdx.y][" + column + "] = " + value + ";");
}

/// After a barrier: reduction `i`'s 8 lanes of `part<i>` at `column`
/// combined into a new variable, whose name it returns.
std::string combineLanes(ScalarEmitter &emitter, CodeBuffer &code,
                         ReduceOp reduce, size_t i, const std::string &column) {
  std::string acc = emitter.fresh("sum"), part = "part" + std::to_string(i);
  code.line("float " + acc + " = " + part + "[0][" + column + "];");
  code.line("#pragma unroll");
  code.line("for (int lane = 1; lane < " + std::to_string(kRowLanes) + "; ++lane) " +
            acc + " = " +
            reductionCombine(reduce.getKind(), acc, part + "[lane][" + column + "]") + ";");
  return acc;
}

/// The per-column outputs, from the combined `accumulators` (in scope as
/// variables), at column `col`.
void finishColumns(ScalarEmitter &emitter, CodeBuffer &code, FusionOp fusion,
                   ArrayRef<ReduceOp> reduces,
                   const std::vector<std::string> &accumulators,
                   const std::vector<std::string> &outputs, int64_t rows,
                   int64_t columns) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [i, constReduce] : llvm::enumerate(reduces))
    provideReduction(emitter, code, constReduce, accumulators[i], rows);
  // Every value first, then the stores: an output may be planned over an
  // input of this column (in place), which must be read before.
  emitter.pushScope();
  std::vector<std::string> stores;
  for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
    Value result = fusion.getResult(k);
    if (isPerElement(result, rows, columns))
      continue;
    std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), "col"));
    stores.push_back(storeStatement(outputs[k], dtypeOf(result), "col", element));
  }
  for (const std::string &store : stores)
    code.line(store);
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

  int64_t width = columnsPerThread(fusion, rows, columns);
  int64_t blockColumns = (columns + kLanes * width - 1) / (kLanes * width);
  // Split the rows over gridDim.y until the GPU is full, if there are rows
  // enough; the partial results then go through the workspace to a second
  // kernel that finishes the per-column outputs (deterministic, unlike
  // atomics, and open to any ops after the reductions).
  int64_t splits = std::max<int64_t>(
      1, std::min(kTargetBlocks / blockColumns,
                  (rows + kRowLanes * kMinRowsPerLane - 1) /
                      (kRowLanes * kMinRowsPerLane)));
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
    std::set<unsigned> inPlace = context.markInPlaceInputs(fusion, inputs, params);
    std::string partial =
        splits > 1 ? params.add("partial", DType::F32, false, partials) : "";
    ScalarEmitter emitter(body, inputs, indexType);
    emitter.requireHelper("math.cuh");
    std::vector<std::string> linears, cols;
    for (int64_t e = 0; e < width; ++e) {
      linears.push_back("lin" + std::to_string(e));
      cols.push_back("col" + std::to_string(e));
    }
    VectorInputs vectorInputs(body, inputs, rows * columns, linears, inPlace);
    vectorInputs.install(emitter);

    // One row of the thread's `width` columns: the elements, emitted first
    // so that the vector loads know which inputs they read.
    CodeBuffer elements;
    elements.setDepth(3);
    emitter.setCode(elements);
    std::vector<std::vector<std::string>> accumulators(reduces.size());
    for (auto [i, reduce] : llvm::enumerate(reduces))
      for (int64_t e = 0; e < width; ++e)
        accumulators[i].push_back(emitter.fresh("acc"));
    std::vector<std::vector<std::string>> stored(outputs.size());
    for (int64_t e = 0; e < width; ++e) {
      elements.line("const idx_t " + linears[e] + " = rowStart + " + std::to_string(e) + ";");
      elements.line("const idx_t " + cols[e] + " = col + " + std::to_string(e) + ";");
      emitter.knowSplit(linears[e], columns, "r", cols[e]);
      emitter.pushScope();
      for (auto [i, reduce] : llvm::enumerate(reduces)) {
        std::string value = emitter.emit(
            reduce.getOperand(),
            emitter.unflatten(shapeOf(reduce.getOperand()), linears[e]));
        std::string acc = accumulators[i][e];
        elements.line(acc + " = " + reductionCombine(reduce.getKind(), acc, value) + ";");
      }
      for (auto [k, value] : llvm::enumerate(yield.getOperands()))
        if (isPerElement(fusion.getResult(k), rows, columns))
          stored[k].push_back(emitter.emit(
              value, emitter.unflatten(shapeOf(fusion.getResult(k)), linears[e])));
      emitter.popScope();
    }

    CodeBuffer code;
    emitter.setCode(code);
    code.line("using idx_t = " + indexType + ";");
    code.line("const idx_t col = ((idx_t)blockIdx.x * " + std::to_string(kLanes) +
              " + threadIdx.x) * " + std::to_string(width) + ";");
    for (auto [i, reduce] : llvm::enumerate(reduces))
      for (const std::string &acc : accumulators[i])
        code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
    code.line("if (col < " + n + ") {");
    code.indent();
    // Unrolled only where a lane has rows enough and loads are scalar: a
    // handful of iterations gains nothing, and NVRTC gave such a loop (8
    // rows a lane, unknown trip count) a stack frame. With 16-byte loads,
    // unrolling by 2 changed nothing (a 1024-column bias gradient stayed at
    // 31 us, a GELU backward's at 177-181 us).
    int64_t rowsPerLane = rows / (splits * kRowLanes);
    if (width == 1 && rowsPerLane >= 4 * kRowUnroll)
      code.line("#pragma unroll " + std::to_string(kRowUnroll));
    code.line("for (idx_t r = (idx_t)blockIdx.y * " + std::to_string(kRowLanes) +
              " + threadIdx.y; r < " + std::to_string(rows) +
              "; r += (idx_t)gridDim.y * " + std::to_string(kRowLanes) + ") {");
    code.indent();
    code.line("const idx_t rowStart = r * " + n + " + col;");
    vectorInputs.emitLoads(code, "rowStart");
    code.append(elements);
    for (auto [k, name] : llvm::enumerate(outputs))
      if (!stored[k].empty())
        emitVectorStore(code, name, dtypeOf(fusion.getResult(k)), "rowStart",
                        stored[k], "vout" + std::to_string(k));
    code.dedent();
    code.line("}");
    code.dedent();
    code.line("}");
    // Combine the row lanes of each column in shared memory; then each of
    // the block's columns is finished by one thread.
    int64_t blockSpan = kLanes * width;
    for (auto [i, perReduce] : llvm::enumerate(accumulators))
      for (auto [e, acc] : llvm::enumerate(perReduce))
        storeLanePartial(code, i, blockSpan,
                         "threadIdx.x * " + std::to_string(width) + " + " +
                             std::to_string(e),
                         acc, e == 0);
    code.line("__syncthreads();");
    code.line("{");
    code.indent();
    code.line("const int c = threadIdx.y * " + std::to_string(kLanes) + " + threadIdx.x;");
    code.line("const idx_t col = (idx_t)blockIdx.x * " + std::to_string(blockSpan) + " + c;");
    code.line("if (c < " + std::to_string(blockSpan) + " && col < " + n + ") {");
    code.indent();
    std::vector<std::string> combined;
    for (auto [i, reduce] : llvm::enumerate(reduces)) {
      std::string acc = combineLanes(emitter, code, reduce, i, "c");
      if (splits > 1)
        code.line(partial + "[" + std::to_string(static_cast<int64_t>(i) * splits * columns) +
                  " + (idx_t)blockIdx.y * " + n + " + col] = " + acc + ";");
      combined.push_back(acc);
    }
    if (splits == 1)
      finishColumns(emitter, code, fusion, reduces, combined, outputs, rows,
                    columns);
    code.dedent();
    code.line("}");
    code.dedent();
    code.line("}");
    if (emitter.failed())
      return failure();
    context.bindDenseConstants(emitter, params);
    KernelSpec spec;
    spec.kind = "column_reduction";
    spec.body = kernelSignature(params, static_cast<int>(kLanes * kRowLanes)) +
                code.text() + "}\n";
    spec.helpers = emitter.helpers();
    if (width > 1)
      spec.helpers.push_back("vector_io.cuh");
    spec.grid = {static_cast<uint32_t>(blockColumns), static_cast<uint32_t>(splits), 1};
    spec.block = {static_cast<uint32_t>(kLanes), static_cast<uint32_t>(kRowLanes), 1};
    spec.args = params.args;
    context.addLaunch(spec, label, label, flops, bytes);
  }
  if (splits == 1)
    return success();

  // Kernel 2: per column, the partials combined and the per-column outputs.
  // Blocks of 32 columns x 8 lanes, each lane over every 8th split, so that
  // a column's partials are read with 8 loads in flight, not one after the
  // other (a column alone over 128 splits took 6 us).
  KernelParams params;
  std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
  std::vector<std::string> outputs = bindOutputs(fusion, context, params);
  context.markInPlaceInputs(fusion, inputs, params);
  std::string partial = params.add("partial", DType::F32, true, partials);
  ScalarEmitter emitter(body, inputs, indexType);
  emitter.requireHelper("math.cuh");
  CodeBuffer code;
  emitter.setCode(code);
  code.line("using idx_t = " + indexType + ";");
  code.line("const idx_t col = (idx_t)blockIdx.x * " + std::to_string(kLanes) +
            " + threadIdx.x;");
  std::vector<std::string> accumulators;
  for (auto [i, reduce] : llvm::enumerate(reduces)) {
    std::string acc = emitter.fresh("acc");
    code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
    accumulators.push_back(acc);
  }
  code.line("if (col < " + n + ") {");
  code.indent();
  for (auto [i, constReduce] : llvm::enumerate(reduces)) {
    ReduceOp reduce = constReduce;
    std::string acc = accumulators[i];
    code.line("#pragma unroll 4");
    code.line("for (int s = threadIdx.y; s < " + std::to_string(splits) + "; s += " +
              std::to_string(kRowLanes) + ") " + acc + " = " +
              reductionCombine(reduce.getKind(), acc,
                               partial + "[" + std::to_string(static_cast<int64_t>(i) * splits * columns) +
                                   " + s * " + n + " + col]") +
              ";");
  }
  code.dedent();
  code.line("}");
  for (auto [i, acc] : llvm::enumerate(accumulators))
    storeLanePartial(code, i, kLanes, "threadIdx.x", acc);
  code.line("__syncthreads();");
  code.line("if (threadIdx.y == 0 && col < " + n + ") {");
  code.indent();
  std::vector<std::string> combined;
  for (auto [i, reduce] : llvm::enumerate(reduces))
    combined.push_back(combineLanes(emitter, code, reduce, i, "threadIdx.x"));
  finishColumns(emitter, code, fusion, reduces, combined, outputs, rows,
                columns);
  code.dedent();
  code.line("}");
  if (emitter.failed())
    return failure();
  context.bindDenseConstants(emitter, params);
  KernelSpec spec;
  spec.kind = "column_finish";
  spec.body = kernelSignature(params, static_cast<int>(kLanes * kRowLanes)) +
              code.text() + "}\n";
  spec.helpers = emitter.helpers();
  spec.grid = {static_cast<uint32_t>((columns + kLanes - 1) / kLanes), 1, 1};
  spec.block = {static_cast<uint32_t>(kLanes), static_cast<uint32_t>(kRowLanes), 1};
  spec.args = params.args;
  context.addLaunch(spec, "finish " + label, "finish " + label, 0.0,
                    static_cast<double>(partialFloats) * 4);
  return success();
}

} // namespace fuse::codegen
