//===- RowReductionFusion.cpp - Reductions over trailing dimensions -------===//
//
// One row per warp (rows up to 256 elements, several rows per block) or per
// block (longer rows). The reductions of a row run in passes, a pass per
// level of dependence (layer norm: the mean, then the variance of x - mean),
// then a last pass writes the full-size outputs and one thread per row the
// per-row outputs. Rows of up to 8 elements per thread keep every value a
// later pass needs in registers (the register cache), so the input is read
// from memory once; longer rows (a 50k-entry vocabulary) are first copied
// whole into shared memory with 16-byte asynchronous copies (many in flight
// per thread: element-by-element loads left a cross-entropy row at 40% of
// the bandwidth), and every pass reads them there.
//
// Every pass gives a row's element j to the same thread, so an output may be
// planned over an input read only at its own elements or reduced
// (fuse-plan-memory): the thread computes an element's outputs, then stores.
//
//===----------------------------------------------------------------------===//

#include "Lowerings.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

std::string reductionInit(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Max: return "__int_as_float(0xff800000)";
  case ReduceKind::Min: return "__int_as_float(0x7f800000)";
  default: return "0.0f";
  }
}

std::string reductionCombine(ReduceKind kind, const std::string &a,
                             const std::string &b) {
  switch (kind) {
  case ReduceKind::Max: return "fuse::maximum(" + a + ", " + b + ")";
  case ReduceKind::Min: return "fuse::minimum(" + a + ", " + b + ")";
  default: return a + " + " + b;
  }
}

std::string reductionSuffix(ReduceKind kind) {
  switch (kind) {
  case ReduceKind::Max: return "Max";
  case ReduceKind::Min: return "Min";
  default: return "Sum";
  }
}

void provideReduction(ScalarEmitter &emitter, CodeBuffer &code, ReduceOp reduce,
                      const std::string &acc, int64_t count) {
  std::string value = acc;
  if (reduce.getKind() == ReduceKind::Mean)
    value = acc + " / " + floatLiteral(static_cast<double>(count));
  std::string name = emitter.fresh("red");
  code.line("const float " + name + " = " +
            ScalarEmitter::roundTo(dtypeOf(reduce.getResult()), value) + ";");
  emitter.provide(reduce.getResult(), name);
}

FailureOr<ReductionShape> reductionShape(ReduceOp reduce, bool trailing) {
  std::vector<int64_t> shape = shapeOf(reduce.getOperand());
  auto dims = reduce.getDims();
  int64_t rank = static_cast<int64_t>(shape.size());
  int64_t count = static_cast<int64_t>(dims.size());
  for (auto [i, dim] : llvm::enumerate(dims)) {
    int64_t expected = trailing ? rank - count + static_cast<int64_t>(i)
                                : static_cast<int64_t>(i);
    if (dim != expected)
      return reduce.emitError()
             << "the " << (trailing ? "row" : "column")
             << " reduction template reduces the "
             << (trailing ? "trailing" : "leading")
             << " dimensions of its operand, not these";
  }
  ReductionShape result;
  result.reduced = 1;
  for (int64_t dim : dims)
    result.reduced *= shape[dim];
  result.kept = numElements(shape) / std::max<int64_t>(result.reduced, 1);
  if (!isFloat(dtypeOf(reduce.getResult())))
    return reduce.emitError() << "the CUDA code generator reduces floats only";
  return result;
}

FailureOr<ReductionShape>
sharedReductionShape(FusionOp fusion, bool trailing, SmallVectorImpl<ReduceOp> &reduces) {
  fusion.getBody().walk([&](ReduceOp reduce) { reduces.push_back(reduce); });
  const char *kind = trailing ? "row" : "column";
  if (reduces.empty())
    return fusion.emitError() << kind << "_reduction fusion without a fuse.reduce";
  FailureOr<ReductionShape> shape = reductionShape(reduces.front(), trailing);
  if (failed(shape))
    return failure();
  for (ReduceOp reduce : reduces) {
    FailureOr<ReductionShape> other = reductionShape(reduce, trailing);
    if (failed(other))
      return failure();
    if (other->kept != shape->kept || other->reduced != shape->reduced)
      return reduce.emitError()
             << kind << " reductions of one fusion must share " << kind << "s ("
             << shape->kept << " " << kind << "s of " << shape->reduced
             << ", here " << other->kept << " of " << other->reduced << ")";
  }
  return shape;
}

/// Which pass each reduction runs in: one after every reduction its operand
/// depends on.
std::vector<int> reductionLevels(ArrayRef<ReduceOp> reduces) {
  llvm::DenseMap<Operation *, int> level;
  std::function<int(Value)> levelOf = [&](Value value) -> int {
    Operation *def = value.getDefiningOp();
    if (!def)
      return 0;
    auto found = level.find(def);
    if (found != level.end())
      return found->second;
    int deepest = 0;
    for (Value operand : def->getOperands())
      deepest = std::max(deepest, levelOf(operand));
    if (isa<ReduceOp>(def))
      deepest += 1;
    level[def] = deepest;
    return deepest;
  };
  std::vector<int> levels;
  for (ReduceOp reduce : reduces)
    levels.push_back(levelOf(reduce.getResult()));
  return levels;
}

namespace {

/// Dynamic shared memory a long-row kernel may take for its inputs (H100
/// and H200 allow 227 KiB per block; the rest is for the reductions).
constexpr int64_t kRowSharedBytes = 200 * 1024;

struct RowSchedule {
  int64_t threadsPerRow;
  int64_t rowsPerBlock;
  int64_t items; // elements per thread
  bool cached;
};

RowSchedule scheduleRows(int64_t rowLength) {
  auto roundUp32 = [](int64_t n) { return (n + 31) / 32 * 32; };
  if (rowLength <= 256)
    return {32, 4, (rowLength + 31) / 32, true};
  if (rowLength <= 8192) {
    int64_t threads = std::min<int64_t>(1024, roundUp32((rowLength + 3) / 4));
    return {threads, 1, (rowLength + threads - 1) / threads, true};
  }
  return {1024, 1, (rowLength + 1023) / 1024, false};
}

} // namespace

LogicalResult lowerRowReductionFusion(FusionOp fusion, CodegenContext &context) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  SmallVector<ReduceOp> reduces;
  FailureOr<ReductionShape> shape = sharedReductionShape(fusion, true, reduces);
  if (failed(shape))
    return failure();
  int64_t rows = shape->kept, rowLength = shape->reduced;
  for (Value result : fusion.getResults()) {
    int64_t n = numElements(shapeOf(result));
    if (n != rows * rowLength && n != rows)
      return fusion.emitError() << "row_reduction output of " << n
                                << " elements is neither per row (" << rows
                                << ") nor per element (" << rows * rowLength << ")";
  }
  std::vector<int> levels = reductionLevels(reduces);
  FailureOr<bool> split = lowerSplitRowReduction(fusion, context, reduces, levels, rows, rowLength);
  if (failed(split))
    return failure();
  if (*split)
    return success();
  int deepest = *std::max_element(levels.begin(), levels.end());
  RowSchedule schedule = scheduleRows(rowLength);

  KernelParams params;
  std::string indexType = indexTypeFor(fusion);
  std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
  std::vector<std::string> outputs = bindOutputs(fusion, context, params);
  // An input planned in place under an output (fuse-plan-memory: read only
  // at the elements this thread writes, or reduced before) loses
  // __restrict__, so that its loads stay before the stores.
  context.markInPlaceInputs(fusion, inputs, params);
  ScalarEmitter emitter(body, inputs, indexType);
  emitter.requireHelper("reductions.cuh");
  emitter.requireHelper("math.cuh");

  // Rows too long for registers copy their full-size inputs into shared
  // memory (their storage type, as many as fit) before the first pass, so
  // each is read from memory once, not once per pass: a 50k-entry
  // vocabulary row of f32 logits takes 196 KiB.
  std::vector<std::pair<unsigned, std::string>> rowShared;
  int64_t sharedBytes = 0;
  if (!schedule.cached) {
    for (unsigned i = 0; i < fusion->getNumOperands(); ++i) {
      Value input = body.getArgument(i);
      int64_t bytes = rowLength * static_cast<int64_t>(dtypeSize(dtypeOf(input)));
      bytes = (bytes + 15) / 16 * 16;
      if (inputs[i].param.empty() ||
          numElements(shapeOf(input)) != rows * rowLength ||
          sharedBytes + bytes > kRowSharedBytes)
        continue;
      rowShared.push_back({i, "row" + std::to_string(i)});
      sharedBytes += bytes;
    }
    emitter.setLoadHook([&](unsigned argument,
                            const std::string &linear) -> std::optional<std::string> {
      if (linear != "lin")
        return std::nullopt;
      for (auto &[index, name] : rowShared)
        if (index == argument)
          return name + "[j]";
      return std::nullopt;
    });
  }

  CodeBuffer code;
  emitter.setCode(code);
  std::string tx = std::to_string(schedule.threadsPerRow);
  code.line("using idx_t = " + indexType + ";");
  code.line("const idx_t row = (idx_t)blockIdx.x * " +
            std::to_string(schedule.rowsPerBlock) + " + threadIdx.y;");
  if (schedule.rowsPerBlock > 1)
    code.line("if (row >= " + std::to_string(rows) + ") return;");
  bool blockWide = schedule.threadsPerRow > 32;
  if (blockWide)
    code.line("__shared__ float scratch[32];");
  if (!rowShared.empty()) {
    code.line("extern __shared__ __align__(16) unsigned char rowShared[];");
    int64_t offset = 0;
    for (auto &[index, name] : rowShared) {
      DType dtype = dtypeOf(body.getArgument(index));
      code.line(storageType(dtype) + " *" + name + " = (" + storageType(dtype) +
                " *)(rowShared + " + std::to_string(offset) + ");");
      offset += (rowLength * static_cast<int64_t>(dtypeSize(dtype)) + 15) / 16 * 16;
    }
    emitter.requireHelper("vector_io.cuh");
    for (auto &[index, name] : rowShared)
      code.line("fuse::startCopyToShared(" + name + ", " + inputs[index].param +
                " + row * " + std::to_string(rowLength) + ", " +
                std::to_string(rowLength) + ", threadIdx.x, " + tx + ");");
    code.line("fuse::finishCopiesToShared();");
    code.line("__syncthreads();");
  }

  // The loop over a row's elements; `emitBody` writes one element.
  auto rowLoop = [&](const std::function<void()> &emitBody) {
    if (schedule.cached) {
      code.line("#pragma unroll");
      code.line("for (int it = 0; it < " + std::to_string(schedule.items) + "; ++it) {");
      code.indent();
      code.line("const idx_t j = threadIdx.x + it * " + tx + ";");
      bool exact = schedule.items * schedule.threadsPerRow == rowLength;
      code.line(exact ? "{" : "if (j < " + std::to_string(rowLength) + ") {");
    } else {
      code.line("for (idx_t j = threadIdx.x; j < " + std::to_string(rowLength) +
                "; j += " + tx + ") {");
      code.indent();
      code.line("{");
    }
    code.indent();
    code.line("const idx_t lin = row * " + std::to_string(rowLength) + " + j;");
    emitter.knowSplit("lin", rowLength, "row", "j");
    // Cached: elements stay memoised across passes (they live on in the c*
    // arrays); only the index variables go out of scope with the loop.
    if (schedule.cached)
      emitter.setRegisterCache(std::string("it"), static_cast<int>(schedule.items));
    else
      emitter.pushScope();
    emitBody();
    emitter.setRegisterCache(std::nullopt);
    if (schedule.cached)
      emitter.forgetIndices();
    else
      emitter.popScope();
    code.dedent();
    code.line("}");
    code.dedent();
    code.line("}");
  };

  for (int level = 1; level <= deepest; ++level) {
    std::vector<std::pair<ReduceOp, std::string>> pass;
    for (auto [reduce, reduceLevel] : llvm::zip(reduces, levels))
      if (reduceLevel == level) {
        std::string acc = emitter.fresh("acc");
        code.line("float " + acc + " = " + reductionInit(reduce.getKind()) + ";");
        pass.push_back({reduce, acc});
      }
    rowLoop([&] {
      for (auto &[reduce, acc] : pass) {
        Index index = emitter.unflatten(shapeOf(reduce.getOperand()), "lin");
        std::string value = emitter.emit(reduce.getOperand(), index);
        code.line(acc + " = " + reductionCombine(reduce.getKind(), acc, value) + ";");
      }
    });
    for (auto &[reduce, acc] : pass) {
      std::string suffix = reductionSuffix(reduce.getKind());
      code.line(acc + (blockWide ? " = fuse::blockReduce" + suffix + "(" + acc + ", scratch);"
                                 : " = fuse::warpReduce" + suffix + "(" + acc + ");"));
      provideReduction(emitter, code, reduce, acc, rowLength);
    }
  }

  // Every value of an element (or row) first, then its stores: an output
  // may be planned over an input read there (in place).
  auto emitStores = [&](bool perRow, const std::string &at) {
    std::vector<std::string> stores;
    for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
      Value result = fusion.getResult(k);
      if ((numElements(shapeOf(result)) == rows && rowLength != 1) != perRow)
        continue;
      std::string element = emitter.emit(value, emitter.unflatten(shapeOf(result), at));
      stores.push_back(storeStatement(outputs[k], dtypeOf(result), at, element));
    }
    for (const std::string &store : stores)
      code.line(store);
  };
  bool anyFull = false, anyRow = false;
  for (Value result : fusion.getResults())
    (numElements(shapeOf(result)) == rows ? anyRow : anyFull) = true;
  if (anyFull)
    rowLoop([&] { emitStores(false, "lin"); });
  if (anyRow && rowLength != 1) {
    emitter.forgetElements();
    code.line("if (threadIdx.x == 0) {");
    code.indent();
    emitStores(true, "row");
    code.dedent();
    code.line("}");
  }
  if (emitter.failed())
    return failure();
  context.bindDenseConstants(emitter, params);

  std::string declarations;
  for (const std::string &declaration : emitter.cacheDeclarations())
    declarations += "  " + declaration + "\n";
  int64_t threads = schedule.threadsPerRow * schedule.rowsPerBlock;
  KernelSpec spec;
  spec.kind = "row_reduction";
  spec.body = kernelSignature(params, static_cast<int>(threads)) + declarations +
              code.text() + "}\n";
  spec.helpers = emitter.helpers();
  int64_t blocks = (rows + schedule.rowsPerBlock - 1) / schedule.rowsPerBlock;
  spec.grid = {static_cast<uint32_t>(blocks), 1, 1};
  spec.sharedBytes = static_cast<uint32_t>(sharedBytes);
  spec.block = {static_cast<uint32_t>(schedule.threadsPerRow),
                static_cast<uint32_t>(schedule.rowsPerBlock), 1};
  spec.args = params.args;
  auto [flops, bytes] = stepCost(fusion);
  context.addLaunch(spec, describeOp(fusion), describeOp(fusion), flops, bytes);
  return success();
}

} // namespace fuse::codegen
