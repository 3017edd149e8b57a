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
// Where per-element outputs read a reduction (the same step's last kernel:
// the global norm finished, then every clipped AdamW update that reads it),
// the first kernel writes nothing but partials, and the second
// (`row_apply`) has the first's grid: each block combines its row's
// partials, then computes and writes its chunk's elements, and the row's
// first block its per-row outputs. All elements are written by the second
// kernel, so an output planned in place over an input never changes what
// the first read; a per-row output planned over an input is refused (the
// other blocks may still read it).
//
// It applies where the row template would run a single pass of reductions:
// every reduction reads only elements, none another's result.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "llvm/ADT/STLExtras.h"

#include <functional>
#include <memory>

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

namespace {

// Blocks of the row template that fill an H100 / H200 (132 multiprocessors,
// two 1024-thread blocks each): with at least this many rows it is left alone.
constexpr int64_t kRowsThatFill = 264;
constexpr int64_t kTargetBlocks = kSplitTargetBlocks;
constexpr int64_t kThreads = 256;
// Elements a block should at least get (16 a thread), so that the partials
// stay few and a block's start-up is paid over enough loads.
constexpr int64_t kMinChunk = 4096;
// Rows shorter than this many chunks (65536 elements) stay with the row
// template: one block reduces them in a few microseconds, about what the
// second launch costs (a loss's mean over 8192 tokens was split in two
// blocks and a finish kernel for nothing).
constexpr int64_t kMinChunksPerRow = 16;

/// Whether `value`, computed inside the fusion body, reads a reduction's
/// result.
bool readsReduction(Value value) {
  return llvm::any_of(bodySlice(value).ops, [](Operation *op) { return isa<ReduceOp>(op); });
}

bool isPerRow(Value result, int64_t rows) {
  return numElements(shapeOf(result)) == rows;
}

/// Whether a per-element output reads a reduction's result.
bool elementsReadReductions(FusionOp fusion, int64_t rows) {
  auto yield = cast<YieldOp>(fusion.getBody().front().getTerminator());
  for (auto [k, value] : llvm::enumerate(yield.getOperands()))
    if (!isPerRow(fusion.getResult(k), rows) && readsReduction(value))
      return true;
  return false;
}

/// How a row reduction is split: `splits` chunks of `chunk` elements a
/// row, and whether per-element outputs read a reduction (then the second
/// kernel writes them all).
struct RowSplit {
  int64_t splits, chunk;
  bool elementsReadReductions;
};

/// The split of a row reduction with few long rows, or none where the row
/// template's block per row fills the GPU or the split cannot apply.
std::optional<RowSplit> planRowSplit(FusionOp fusion, CodegenContext &context,
                                     ArrayRef<int> levels, int64_t rows, int64_t rowLength) {
  if (rows >= kRowsThatFill || rowLength < kMinChunksPerRow * kMinChunk || rows == rowLength)
    return std::nullopt;
  if (llvm::any_of(levels, [](int level) { return level != 1; }))
    return std::nullopt;
  bool dependent = elementsReadReductions(fusion, rows);
  if (dependent)
    for (Value result : fusion.getResults())
      if (isPerRow(result, rows))
        for (Value input : fusion.getOperands()) {
          const ValueLocation &where = context.location(input);
          if (where.buffer && *where.buffer == context.buffer(result))
            return std::nullopt;
        }
  int64_t splits = std::min((kTargetBlocks + rows - 1) / rows, rowLength / kMinChunk);
  // Chunks of whole thread strides; no block left without elements.
  int64_t chunk = (rowLength + splits - 1) / splits;
  chunk = (chunk + kThreads - 1) / kThreads * kThreads;
  return RowSplit{(rowLength + chunk - 1) / chunk, chunk, dependent};
}

/// What the kernels of one split reduction share: the fusion, its shape and
/// split, the workspace of partials, and the emission steps two kernels do.
struct SplitRows {
  FusionOp fusion;
  CodegenContext &context;
  SmallVector<ReduceOp> reduces;
  int64_t rows, rowLength, splits, chunk;
  runtime::BufferRef partials;

  Block &body() { return fusion.getBody().front(); }
  YieldOp yield() { return cast<YieldOp>(body().getTerminator()); }
  std::string length() const { return std::to_string(rowLength); }

  /// Where reduction i's partial of (row, split) lives.
  std::string partialAt(const std::string &pointer, size_t i, const std::string &split) const {
    return pointer + "[(" + std::to_string(static_cast<int64_t>(i) * rows) + " + row) * " +
           std::to_string(splits) + " + " + split + "]";
  }

  /// The block's chunk of its row: `row`, `begin`, `end`.
  void emitChunk(CodeBuffer &code) const {
    code.line("const idx_t row = blockIdx.y;");
    code.line("const idx_t begin = (idx_t)blockIdx.x * " + std::to_string(chunk) + ";");
    code.line("const idx_t end = begin + " + std::to_string(chunk) + " < " + length() +
              " ? begin + " + std::to_string(chunk) + " : " + length() + ";");
  }

  /// The loop over the chunk's elements, `emitBody` once per element.
  void emitChunkLoop(ScalarEmitter &emitter, CodeBuffer &code,
                     const std::function<void()> &emitBody) const {
    code.line("for (idx_t j = begin + threadIdx.x; j < end; j += " + std::to_string(kThreads) + ") {");
    code.indent();
    code.line("const idx_t lin = row * " + length() + " + j;");
    emitter.knowSplit("lin", rowLength, "row", "j");
    emitter.pushScope();
    emitBody();
    emitter.popScope();
    code.dedent();
    code.line("}");
  }

  /// Every value of the outputs of one kind (per row or per element) at
  /// `at`, then their stores: an output may be planned over an input read
  /// there (in place).
  void emitStores(ScalarEmitter &emitter, CodeBuffer &code, const std::vector<std::string> &outputs,
                  bool perRow, const std::string &at) {
    std::vector<std::string> stores;
    for (auto [k, value] : llvm::enumerate(yield().getOperands())) {
      Value result = fusion.getResult(k);
      if (isPerRow(result, rows) != perRow)
        continue;
      std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), at));
      stores.push_back(storeStatement(outputs[k], dtypeOf(result), at, element));
    }
    for (const std::string &store : stores)
      code.line(store);
  }

  /// The reductions' results from their combined accumulators.
  void provideReductions(ScalarEmitter &emitter, CodeBuffer &code,
                         const std::vector<std::string> &combined) {
    for (auto [reduce, acc] : llvm::zip(reduces, combined))
      provideReduction(emitter, code, reduce, acc, rowLength);
  }

  /// A kernel's launch with the fusion's inputs and outputs bound.
  struct Kernel {
    KernelParams params;
    std::vector<InputBinding> inputs;
    std::vector<std::string> outputs;
    std::string partial;
    CodeBuffer code;
    std::unique_ptr<ScalarEmitter> emitter;
  };

  void begin(Kernel &kernel, bool writesPartials, const std::string &indexType) {
    kernel.inputs = context.bindInputs(fusion, kernel.params);
    kernel.outputs = bindOutputs(fusion, context, kernel.params);
    context.markInPlaceInputs(fusion, kernel.inputs, kernel.params);
    kernel.partial = kernel.params.add("partial", DType::F32, !writesPartials, partials);
    kernel.emitter = std::make_unique<ScalarEmitter>(body(), kernel.inputs, indexType);
    kernel.emitter->requireHelper("reductions.cuh");
    kernel.emitter->requireHelper("math.cuh");
    kernel.emitter->setCode(kernel.code);
    kernel.code.line("using idx_t = " + indexType + ";");
  }

  LogicalResult launch(Kernel &kernel, const std::string &kind, std::array<uint32_t, 3> grid,
                       int threads, const std::string &label, double flops, double bytes) {
    if (kernel.emitter->failed())
      return failure();
    context.bindDenseConstants(*kernel.emitter, kernel.params);
    KernelSpec spec;
    spec.kind = kind;
    spec.body = kernelSignature(kernel.params, threads) + kernel.code.text() + "}\n";
    spec.helpers = kernel.emitter->helpers();
    spec.grid = grid;
    spec.block = {static_cast<uint32_t>(threads), 1, 1};
    spec.args = kernel.params.args;
    context.addLaunch(spec, label, label, flops, bytes);
    return success();
  }
};

} // namespace

FailureOr<bool> lowerSplitRowReduction(FusionOp fusion, CodegenContext &context,
                                       ArrayRef<ReduceOp> reduceList, ArrayRef<int> levels,
                                       int64_t rows, int64_t rowLength) {
  std::optional<RowSplit> plan = planRowSplit(fusion, context, levels, rows, rowLength);
  if (!plan)
    return false;
  int64_t splits = plan->splits;
  int64_t partialFloats = static_cast<int64_t>(reduceList.size()) * rows * splits;
  SplitRows split{fusion, context, SmallVector<ReduceOp>(reduceList.begin(), reduceList.end()),
                  rows, rowLength, splits, plan->chunk, context.workspace(partialFloats * 4)};
  // Per-element outputs that read a reduction are all written by the
  // second kernel, after the partials are complete.
  bool dependent = plan->elementsReadReductions;
  std::string indexType = indexTypeFor(fusion);
  std::string label = describeOp(fusion);
  auto [flops, bytes] = stepCost(fusion);
  std::array<uint32_t, 3> chunks{static_cast<uint32_t>(splits), static_cast<uint32_t>(rows), 1};

  // Kernel 1: each block a chunk of a row: its partials (and, unless the
  // second kernel writes them, its per-element outputs).
  {
    SplitRows::Kernel kernel;
    split.begin(kernel, true, indexType);
    ScalarEmitter &emitter = *kernel.emitter;
    CodeBuffer &code = kernel.code;
    code.line("__shared__ float scratch[32];");
    split.emitChunk(code);
    std::vector<std::string> accumulators;
    for (ReduceOp reduce : split.reduces) {
      accumulators.push_back(emitter.fresh("acc"));
      code.line("float " + accumulators.back() + " = " + reductionInit(reduce.getKind()) + ";");
    }
    split.emitChunkLoop(emitter, code, [&] {
      for (auto [reduce, acc] : llvm::zip(split.reduces, accumulators)) {
        std::string value = emitter.emit(reduce.getOperand(),
                                         emitter.unflatten(shapeOf(reduce.getOperand()), "lin"));
        code.line(acc + " = " + reductionCombine(reduce.getKind(), acc, value) + ";");
      }
      if (!dependent)
        split.emitStores(emitter, code, kernel.outputs, false, "lin");
    });
    for (auto [i, pair] : llvm::enumerate(llvm::zip(split.reduces, accumulators))) {
      auto [reduce, acc] = pair;
      code.line(acc + " = fuse::blockReduce" + reductionSuffix(reduce.getKind()) + "(" + acc +
                ", scratch);");
      code.line("if (threadIdx.x == 0) " + split.partialAt(kernel.partial, i, "blockIdx.x") +
                " = " + acc + ";");
    }
    if (failed(split.launch(kernel, "row_partial", chunks, kThreads, label, flops, bytes)))
      return failure();
  }

  SplitRows::Kernel kernel;
  split.begin(kernel, false, indexType);
  ScalarEmitter &emitter = *kernel.emitter;
  CodeBuffer &code = kernel.code;
  double partialBytes = static_cast<double>(partialFloats) * 4;
  if (!dependent) {
    // Kernel 2: a warp per row combines its partials; lane 0 writes the
    // per-row outputs.
    code.line("const idx_t row = blockIdx.x;");
    std::vector<std::string> combined;
    for (auto [i, reduce] : llvm::enumerate(split.reduces)) {
      std::string acc = emitter.fresh("acc");
      code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
      code.line("for (int s = threadIdx.x; s < " + std::to_string(splits) + "; s += 32) " + acc +
                " = " + reductionCombine(reduce.getKind(), acc, split.partialAt(kernel.partial, i, "s")) +
                ";");
      code.line(acc + " = fuse::warpReduce" + reductionSuffix(reduce.getKind()) + "(" + acc + ");");
      combined.push_back(acc);
    }
    code.line("if (threadIdx.x == 0) {");
    code.indent();
    split.provideReductions(emitter, code, combined);
    emitter.pushScope();
    split.emitStores(emitter, code, kernel.outputs, true, "row");
    emitter.popScope();
    code.dedent();
    code.line("}");
    if (failed(split.launch(kernel, "row_finish", {static_cast<uint32_t>(rows), 1, 1}, 32,
                            "finish " + label, 0.0, partialBytes)))
      return failure();
    return true;
  }

  // Kernel 2, where elements read the reductions: the first kernel's grid;
  // each block combines its row's partials, then writes its chunk, and the
  // row's first block the per-row outputs.
  code.line("__shared__ float scratch[32];");
  split.emitChunk(code);
  std::vector<std::string> combined;
  for (auto [i, reduce] : llvm::enumerate(split.reduces)) {
    std::string acc = emitter.fresh("acc");
    code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
    code.line("for (int s = threadIdx.x; s < " + std::to_string(splits) + "; s += " +
              std::to_string(kThreads) + ") " + acc + " = " +
              reductionCombine(reduce.getKind(), acc, split.partialAt(kernel.partial, i, "s")) + ";");
    code.line(acc + " = fuse::blockReduce" + reductionSuffix(reduce.getKind()) + "(" + acc +
              ", scratch);");
    combined.push_back(acc);
  }
  split.provideReductions(emitter, code, combined);
  split.emitChunkLoop(emitter, code,
                      [&] { split.emitStores(emitter, code, kernel.outputs, false, "lin"); });
  code.line("if (blockIdx.x == 0 && threadIdx.x == 0) {");
  code.indent();
  emitter.pushScope();
  split.emitStores(emitter, code, kernel.outputs, true, "row");
  emitter.popScope();
  code.dedent();
  code.line("}");
  if (failed(split.launch(kernel, "row_apply", chunks, kThreads, "apply " + label, 0.0, bytes)))
    return failure();
  return true;
}

} // namespace fuse::codegen
