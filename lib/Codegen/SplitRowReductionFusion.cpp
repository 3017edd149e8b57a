//===- SplitRowReductionFusion.cpp - Few long rows over many blocks -------===//
//
// The row template gives each row one block. With few rows and long ones
// that leaves the GPU idle: a weight gradient accumulated over micro-batches
// and its squared norm taken for global-norm clipping is one row of four
// million elements, which one block reduced at 4 GB/s (2 ms a weight; 80% of
// an HF-defaults BERT-large step). Here each row is cut into chunks spread
// over gridDim.x: a block reduces its chunk and writes the chunk's
// per-element outputs as it goes, its partial results go to the workspace,
// and a second kernel (`row_finish`) combines a row's partials and computes
// the per-row outputs. The split is fixed by the shape, so results are
// deterministic.
//
// It applies where the row template would run a single pass: every
// reduction reads only elements (none reads another's result), and no
// per-element output depends on a reduction (it is written before its row
// is reduced).
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

namespace {

// Blocks of the row template that fill an H100 / H200 (132 multiprocessors,
// two 1024-thread blocks each): with at least this many rows it is left alone.
constexpr int64_t kRowsThatFill = 264;
// Blocks of 256 threads that fill the GPU once, as in the column template.
constexpr int64_t kTargetBlocks = 1056;
constexpr int64_t kThreads = 256;
// Elements a block should at least get (16 a thread), so that the partials
// stay few and a block's start-up is paid over enough loads.
constexpr int64_t kMinChunk = 4096;

/// Whether `value`, computed inside the fusion body, reads a reduction's
/// result.
bool readsReduction(Value value) {
  SmallVector<Value> work{value};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    if (isa<ReduceOp>(def))
      return true;
    llvm::append_range(work, def->getOperands());
  }
  return false;
}

bool isPerRow(Value result, int64_t rows) {
  return numElements(shapeOf(result)) == rows;
}

} // namespace

int64_t rowSplits(FusionOp fusion, ArrayRef<int> levels, int64_t rows,
                  int64_t rowLength) {
  if (rows >= kRowsThatFill || rowLength < 2 * kMinChunk || rows == rowLength)
    return 1;
  if (llvm::any_of(levels, [](int level) { return level != 1; }))
    return 1;
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [k, value] : llvm::enumerate(yield.getOperands()))
    if (!isPerRow(fusion.getResult(k), rows) && readsReduction(value))
      return 1;
  int64_t splits = std::min((kTargetBlocks + rows - 1) / rows, rowLength / kMinChunk);
  // Chunks of whole thread strides; no block left without elements.
  int64_t chunk = (rowLength + splits - 1) / splits;
  chunk = (chunk + kThreads - 1) / kThreads * kThreads;
  return (rowLength + chunk - 1) / chunk;
}

LogicalResult lowerSplitRowReduction(FusionOp fusion, CodegenContext &context,
                                     ArrayRef<ReduceOp> reduceList, int64_t rows,
                                     int64_t rowLength, int64_t splits) {
  SmallVector<ReduceOp> reduces(reduceList.begin(), reduceList.end()); // ops' accessors are not const
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  int64_t chunk = (rowLength + splits - 1) / splits;
  chunk = (chunk + kThreads - 1) / kThreads * kThreads;
  std::string length = std::to_string(rowLength);
  std::string indexType = indexTypeFor(fusion);
  std::string label = describeOp(fusion);
  auto [flops, bytes] = stepCost(fusion);
  int64_t partialFloats = static_cast<int64_t>(reduces.size()) * rows * splits;
  runtime::BufferRef partials = context.workspace(partialFloats * 4);
  // Where reduction i's partial of (row, split) lives.
  auto partialAt = [&](const std::string &pointer, size_t i, const std::string &split) {
    return pointer + "[(" + std::to_string(static_cast<int64_t>(i) * rows) + " + row) * " +
           std::to_string(splits) + " + " + split + "]";
  };

  // Kernel 1: each block a chunk of a row; per-element outputs; partials.
  {
    KernelParams params;
    std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
    std::vector<std::string> outputs = bindOutputs(fusion, context, params);
    context.markInPlaceInputs(fusion, inputs, params);
    std::string partial = params.add("partial", DType::F32, false, partials);
    ScalarEmitter emitter(body, inputs, indexType);
    emitter.requireHelper("reductions.cuh");
    emitter.requireHelper("math.cuh");
    CodeBuffer code;
    emitter.setCode(code);
    code.line("using idx_t = " + indexType + ";");
    code.line("__shared__ float scratch[32];");
    code.line("const idx_t row = blockIdx.y;");
    code.line("const idx_t begin = (idx_t)blockIdx.x * " + std::to_string(chunk) + ";");
    code.line("const idx_t end = begin + " + std::to_string(chunk) + " < " + length +
              " ? begin + " + std::to_string(chunk) + " : " + length + ";");
    std::vector<std::string> accumulators;
    for (ReduceOp reduce : reduces) {
      accumulators.push_back(emitter.fresh("acc"));
      code.line("float " + accumulators.back() + " = " + reductionInit(reduce.getKind()) + ";");
    }
    code.line("for (idx_t j = begin + threadIdx.x; j < end; j += " + std::to_string(kThreads) + ") {");
    code.indent();
    code.line("const idx_t lin = row * " + length + " + j;");
    emitter.knowSplit("lin", rowLength, "row", "j");
    emitter.pushScope();
    for (auto [reduce, acc] : llvm::zip(reduces, accumulators)) {
      std::string value = emitter.emit(reduce.getOperand(),
                                       emitter.unflatten(shapeOf(reduce.getOperand()), "lin"));
      code.line(acc + " = " + reductionCombine(reduce.getKind(), acc, value) + ";");
    }
    // Every value of the element first, then its stores: an output may be
    // planned over an input read here (in place).
    std::vector<std::string> stores;
    for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
      Value result = fusion.getResult(k);
      if (isPerRow(result, rows))
        continue;
      std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), "lin"));
      stores.push_back(storeStatement(outputs[k], dtypeOf(result), "lin", element));
    }
    for (const std::string &store : stores)
      code.line(store);
    emitter.popScope();
    code.dedent();
    code.line("}");
    for (auto [i, pair] : llvm::enumerate(llvm::zip(reduces, accumulators))) {
      auto [reduce, acc] = pair;
      code.line(acc + " = fuse::blockReduce" + reductionSuffix(reduce.getKind()) + "(" + acc +
                ", scratch);");
      code.line("if (threadIdx.x == 0) " + partialAt(partial, i, "blockIdx.x") + " = " + acc + ";");
    }
    if (emitter.failed())
      return failure();
    context.bindDenseConstants(emitter, params);
    KernelSpec spec;
    spec.kind = "row_partial";
    spec.body = kernelSignature(params, static_cast<int>(kThreads)) + code.text() + "}\n";
    spec.helpers = emitter.helpers();
    spec.grid = {static_cast<uint32_t>(splits), static_cast<uint32_t>(rows), 1};
    spec.block = {static_cast<uint32_t>(kThreads), 1, 1};
    spec.args = params.args;
    context.addLaunch(spec, label, label, flops, bytes);
  }

  // Kernel 2: a warp per row combines its partials; lane 0 writes the
  // per-row outputs.
  KernelParams params;
  std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
  std::vector<std::string> outputs = bindOutputs(fusion, context, params);
  context.markInPlaceInputs(fusion, inputs, params);
  std::string partial = params.add("partial", DType::F32, true, partials);
  ScalarEmitter emitter(body, inputs, indexType);
  emitter.requireHelper("reductions.cuh");
  emitter.requireHelper("math.cuh");
  CodeBuffer code;
  emitter.setCode(code);
  code.line("using idx_t = " + indexType + ";");
  code.line("const idx_t row = blockIdx.x;");
  std::vector<std::string> combined;
  for (auto [i, reduce] : llvm::enumerate(reduces)) {
    std::string acc = emitter.fresh("acc");
    code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
    code.line("for (int s = threadIdx.x; s < " + std::to_string(splits) + "; s += 32) " + acc +
              " = " + reductionCombine(reduce.getKind(), acc, partialAt(partial, i, "s")) + ";");
    code.line(acc + " = fuse::warpReduce" + reductionSuffix(reduce.getKind()) + "(" + acc + ");");
    combined.push_back(acc);
  }
  code.line("if (threadIdx.x == 0) {");
  code.indent();
  for (auto [reduce, acc] : llvm::zip(reduces, combined)) {
    std::string value = acc;
    if (reduce.getKind() == ReduceKind::Mean)
      value = acc + " / " + floatLiteral(static_cast<double>(rowLength));
    std::string name = emitter.fresh("red");
    code.line("const float " + name + " = " +
              ScalarEmitter::roundTo(dtypeOf(reduce.getResult()), value) + ";");
    emitter.provide(reduce.getResult(), name);
  }
  emitter.pushScope();
  std::vector<std::string> stores;
  for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
    Value result = fusion.getResult(k);
    if (!isPerRow(result, rows))
      continue;
    std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), "row"));
    stores.push_back(storeStatement(outputs[k], dtypeOf(result), "row", element));
  }
  for (const std::string &store : stores)
    code.line(store);
  emitter.popScope();
  code.dedent();
  code.line("}");
  if (emitter.failed())
    return failure();
  context.bindDenseConstants(emitter, params);
  KernelSpec spec;
  spec.kind = "row_finish";
  spec.body = kernelSignature(params, 32) + code.text() + "}\n";
  spec.helpers = emitter.helpers();
  spec.grid = {static_cast<uint32_t>(rows), 1, 1};
  spec.block = {32, 1, 1};
  spec.args = params.args;
  context.addLaunch(spec, "finish " + label, "finish " + label, 0.0,
                    static_cast<double>(partialFloats) * 4);
  return success();
}

} // namespace fuse::codegen
