//===- ColumnReductionFusion.cpp - Reductions over leading dimensions -----===//
//
// Blocks of 32 columns x 8 row lanes: a warp reads 32 adjacent columns of a
// row (coalesced), the 8 lanes combine in shared memory. When the columns
// alone give too few blocks to fill the GPU (a bias gradient of 768 columns
// over 8192 rows), the rows are split over gridDim.y and the partial sums
// are added into the output with atomics, which a fill zeroes first; that
// needs every per-column output to be a plain f32 sum. Otherwise one block
// row covers all rows and finishes the per-column outputs itself.
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
// Blocks that fill an H100/H200 about twice over.
constexpr int64_t kTargetBlocks = 1056;
// Rows a block lane should at least get, so the atomics stay few.
constexpr int64_t kMinRowsPerBlock = 64;

/// Whether every per-column output is directly an f32 sum, so partial sums
/// from several blocks can be added into it.
bool atomicsAllowed(FusionOp fusion, int64_t columns) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
    if (numElements(shapeOf(fusion.getResult(k))) != columns)
      continue;
    auto reduce = value.getDefiningOp<ReduceOp>();
    if (!reduce || reduce.getKind() != ReduceKind::Sum ||
        dtypeOf(value) != DType::F32)
      return false;
  }
  return true;
}

} // namespace

LogicalResult lowerColumnReductionFusion(FusionOp fusion,
                                         CodegenContext &context) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<ReduceOp> reduces;
  body.walk([&](ReduceOp reduce) { reduces.push_back(reduce); });
  if (reduces.empty())
    return fusion.emitError() << "column_reduction fusion without a fuse.reduce";
  FailureOr<ReductionShape> shape = reductionShape(reduces.front(), false);
  if (failed(shape))
    return failure();
  llvm::SmallPtrSet<Operation *, 8> reduceOps;
  for (ReduceOp reduce : reduces)
    reduceOps.insert(reduce);
  for (ReduceOp reduce : reduces) {
    FailureOr<ReductionShape> other = reductionShape(reduce, false);
    if (failed(other))
      return failure();
    if (other->kept != shape->kept || other->reduced != shape->reduced)
      return reduce.emitError() << "column reductions of one fusion must share "
                                   "columns and rows";
    // A reduction of a reduction would need a grid-wide barrier.
    bool nested = false;
    std::function<void(Value)> visit = [&](Value v) {
      Operation *def = v.getDefiningOp();
      if (!def || nested)
        return;
      if (reduceOps.contains(def)) {
        nested = true;
        return;
      }
      for (Value operand : def->getOperands())
        visit(operand);
    };
    visit(reduce.getOperand());
    if (nested)
      return reduce.emitError() << "the column reduction template cannot "
                                   "reduce the result of another reduction";
  }
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
  int64_t splits = 1;
  if (atomicsAllowed(fusion, columns))
    splits = std::max<int64_t>(
        1, std::min((kTargetBlocks + blockColumns - 1) / blockColumns,
                    (rows + kRowLanes * kMinRowsPerBlock - 1) /
                        (kRowLanes * kMinRowsPerBlock)));
  bool atomic = splits > 1;

  KernelParams params;
  std::string indexType = indexTypeFor(fusion);
  std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
  std::vector<std::string> outputs = bindOutputs(fusion, context, params);
  ScalarEmitter emitter(body, inputs, indexType);
  emitter.requireHelper("math.cuh");
  if (atomic)
    emitter.requireHelper("reductions.cuh");
  llvm::DenseMap<Value, std::string> reduced;
  emitter.setOverride([&](Value value, const Index &) -> std::optional<std::string> {
    auto found = reduced.find(value);
    if (found == reduced.end())
      return std::nullopt;
    return found->second;
  });

  CodeBuffer code;
  emitter.setCode(code);
  std::string n = std::to_string(columns);
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
  code.line("for (idx_t r = (idx_t)blockIdx.y * " + std::to_string(kRowLanes) +
            " + threadIdx.y; r < " + std::to_string(rows) +
            "; r += (idx_t)gridDim.y * " + std::to_string(kRowLanes) + ") {");
  code.indent();
  code.line("const idx_t lin = r * " + n + " + col;");
  emitter.pushScope();
  for (auto [reduce, acc] : llvm::zip(reduces, accumulators)) {
    std::string value = emitter.emit(reduce.getOperand(),
                                     emitter.unflatten(shapeOf(reduce.getOperand()), "lin"));
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

  // Combine the 8 row lanes of each column in shared memory.
  for (auto [i, acc] : llvm::enumerate(accumulators))
    code.line("__shared__ float part" + std::to_string(i) + "[" +
              std::to_string(kRowLanes) + "][" + std::to_string(kColumns + 1) +
              "];");
  for (auto [i, acc] : llvm::enumerate(accumulators))
    code.line("part" + std::to_string(i) + "[threadIdx.y][threadIdx.x] = " + acc + ";");
  code.line("__syncthreads();");
  code.line("if (threadIdx.y == 0 && col < " + n + ") {");
  code.indent();
  for (auto [i, reduce] : llvm::enumerate(reduces)) {
    std::string acc = accumulators[i], part = "part" + std::to_string(i);
    code.line(acc + " = " + part + "[0][threadIdx.x];");
    code.line("#pragma unroll");
    code.line("for (int lane = 1; lane < " + std::to_string(kRowLanes) + "; ++lane) " +
              acc + " = " +
              reductionCombine(reduce.getKind(), acc, part + "[lane][threadIdx.x]") + ";");
    std::string value = acc;
    if (reduce.getKind() == ReduceKind::Mean)
      value = acc + " / " + floatLiteral(static_cast<double>(rows));
    std::string name = emitter.fresh("red");
    code.line("const float " + name + " = " +
              ScalarEmitter::roundTo(dtypeOf(reduce.getResult()), value) + ";");
    reduced[reduce.getResult()] = name;
  }
  emitter.pushScope();
  for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
    Value result = fusion.getResult(k);
    if (numElements(shapeOf(result)) != columns || rows == 1)
      continue;
    std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), "col"));
    if (atomic)
      code.line("atomicAdd(" + outputs[k] + " + col, " + element + ");");
    else
      code.line(storeStatement(outputs[k], dtypeOf(result), "col", element));
  }
  emitter.popScope();
  code.dedent();
  code.line("}");
  if (emitter.failed())
    return failure();
  context.bindDenseConstants(emitter, params);

  if (atomic)
    for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
      Value result = fusion.getResult(k);
      if (numElements(shapeOf(result)) == columns)
        context.addFill({context.buffer(result), columns * 4},
                        "zero " + describeOp(fusion));
    }
  KernelSpec spec;
  spec.kind = "column_reduction";
  spec.body = kernelSignature(params, static_cast<int>(kColumns * kRowLanes)) +
              code.text() + "}\n";
  spec.helpers = emitter.helpers();
  spec.grid = {static_cast<uint32_t>(blockColumns), static_cast<uint32_t>(splits), 1};
  spec.block = {static_cast<uint32_t>(kColumns), static_cast<uint32_t>(kRowLanes), 1};
  spec.args = params.args;
  auto [flops, bytes] = stepCost(fusion);
  context.addLaunch(spec, describeOp(fusion), describeOp(fusion), flops, bytes);
  return success();
}

} // namespace fuse::codegen
