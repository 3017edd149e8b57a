//===- LoopFusion.cpp - The loop (elementwise) kernel template ------------===//

#include "Lowerings.h"
#include "VectorAccess.h"

#include "llvm/ADT/STLExtras.h"

#include <set>

using namespace mlir;
using namespace mlir::fuse;

namespace fuse::codegen {

std::vector<std::string> bindOutputs(Operation *fusion, CodegenContext &context,
                                     KernelParams &params) {
  std::vector<std::string> names;
  for (Value result : fusion->getResults())
    names.push_back(
        params.add("out", dtypeOf(result), false, context.buffer(result)));
  return names;
}

std::string storeStatement(const std::string &pointer, DType dtype,
                           const std::string &linear, const std::string &value) {
  return pointer + "[" + linear + "] = " +
         ScalarEmitter::toStorage(dtype, value) + ";";
}

KernelSpec plainKernel(const std::string &kind, const KernelParams &params,
                       const CodeBuffer &code, int64_t blocks) {
  KernelSpec spec;
  spec.kind = kind;
  spec.body = kernelSignature(params, 256) + code.text() + "}\n";
  spec.helpers = {"common.cuh"};
  spec.grid = {static_cast<uint32_t>(std::max<int64_t>(blocks, 1)), 1, 1};
  spec.block = {256, 1, 1};
  spec.args = params.args;
  return spec;
}

namespace {

constexpr int kLoopBlock = 256;
constexpr int64_t kLoopMaxBlocks = kGridStrideMaxBlocks;

/// Elements per thread: one 16-byte access of the widest output.
int64_t vectorWidth(FusionOp fusion, int64_t total) {
  size_t widest = 1;
  for (Value result : fusion.getResults())
    widest = std::max(widest, dtypeSize(dtypeOf(result)));
  int64_t width = static_cast<int64_t>(16 / widest);
  return total % width == 0 ? width : 1;
}

/// The smallest product of `shape`'s innermost dimensions that `width`
/// divides, if it is less than the whole (else 0): a thread's `width`
/// consecutive elements then share every index above it, so each element's
/// position splits into p / divisor, the same for all of them, and
/// p % divisor + e. Without it each element divided its own position by
/// every dimension's extent (a 50304-wide loss gradient: a division and a
/// remainder per element, most of its instructions).
int64_t sharedRowDivisor(const std::vector<int64_t> &shape, int64_t width) {
  if (width <= 1)
    return 0;
  int64_t product = 1;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d > 0; --d) {
    product *= shape[d];
    if (product % width == 0)
      return product < numElements(shape) ? product : 0;
  }
  return 0;
}

} // namespace

LogicalResult lowerLoopFusion(FusionOp fusion, CodegenContext &context,
                              const LoopKernelSetup &setup) {
  Block &body = fusion.getBody().front();
  auto yield = cast<YieldOp>(body.getTerminator());
  int64_t total = numElements(shapeOf(fusion.getResult(0)));
  for (Value result : fusion.getResults())
    if (numElements(shapeOf(result)) != total)
      return fusion.emitError()
             << "loop fusion with outputs of different element counts ("
             << total << " and " << numElements(shapeOf(result))
             << "): the loop template needs one iteration space";

  KernelParams params;
  std::string indexType = indexTypeFor(fusion);
  std::vector<InputBinding> inputs = context.bindInputs(fusion, params);
  std::vector<std::string> outputs = bindOutputs(fusion, context, params);
  // An input planned in place under an output (its last read) is read
  // through the coherent path and without __restrict__; every store comes
  // after the thread's loads.
  std::set<unsigned> inPlace = context.markInPlaceInputs(fusion, inputs, params);
  ScalarEmitter emitter(body, inputs, indexType);
  if (setup)
    setup(emitter, params);
  int64_t width = vectorWidth(fusion, total);

  // A kernel that keeps every output as it is unless a scalar condition
  // holds (an optimizer's update on a micro-batch that only accumulates)
  // returns before its loop when it does not (UnchangedUnless.cpp).
  CodeBuffer guard;
  std::vector<runtime::LaunchGuardTerm> guardedBy;
  if (std::vector<KeptUnless> kept = total > 1 ? keptUnless(fusion, context)
                                               : std::vector<KeptUnless>{};
      !kept.empty()) {
    guardedBy = guardTerms(fusion, kept, context);
    emitter.setCode(guard);
    emitter.pushScope();
    std::string unchanged;
    for (const KeptUnless &output : kept) {
      std::string condition =
          emitter.emit(output.condition, emitter.unflatten(shapeOf(output.condition), "0"));
      unchanged += (unchanged.empty() ? "" : " && ") + std::string(output.changesWhen ? "!" : "") +
                   "(" + condition + ")";
    }
    guard.line("if (" + unchanged + ") return;");
    emitter.popScope();
  }

  // Inputs read at the element's own position are loaded as vectors once per
  // thread.
  std::vector<std::string> elementNames;
  for (int64_t e = 0; e < width; ++e)
    elementNames.push_back("pe" + std::to_string(e));
  int64_t rowDivisor = sharedRowDivisor(shapeOf(fusion.getResult(0)), width);
  if (rowDivisor > 0)
    for (int64_t e = 0; e < width; ++e)
      emitter.knowSplit(elementNames[e], rowDivisor, "prow",
                        "pcol + " + std::to_string(e));
  VectorInputs vectorInputs(body, inputs, total, elementNames, inPlace);
  vectorInputs.install(emitter);

  CodeBuffer elements;
  elements.setDepth(2);
  emitter.setCode(elements);
  std::vector<std::vector<std::string>> stored(outputs.size());
  for (int64_t e = 0; e < width; ++e) {
    emitter.pushScope();
    emitter.code().line("const " + indexType + " " + elementNames[e] + " = p + " +
                        std::to_string(e) + ";");
    for (auto [k, value] : llvm::enumerate(yield.getOperands())) {
      Index index = emitter.unflatten(shapeOf(fusion.getResult(k)), elementNames[e]);
      stored[k].push_back(emitter.emit(value, index));
    }
    emitter.popScope();
  }
  if (emitter.failed())
    return failure();
  context.bindDenseConstants(emitter, params);

  CodeBuffer code;
  code.line("using idx_t = " + indexType + ";");
  code.append(guard);
  code.line("const idx_t vectors = " + std::to_string(total / width) + ";");
  code.line("for (idx_t q = (idx_t)blockIdx.x * blockDim.x + threadIdx.x; q < vectors;"
            " q += (idx_t)gridDim.x * blockDim.x) {");
  code.indent();
  code.line("const idx_t p = q * " + std::to_string(width) + ";");
  if (rowDivisor > 0) {
    code.line("const idx_t prow = p / " + std::to_string(rowDivisor) + ";");
    code.line("const idx_t pcol = p % " + std::to_string(rowDivisor) + ";");
  }
  vectorInputs.emitLoads(code, "p");
  code.append(elements);
  for (auto [k, name] : llvm::enumerate(outputs))
    emitVectorStore(code, name, dtypeOf(fusion.getResult(k)), "p", stored[k],
                    "vout" + std::to_string(k));
  code.dedent();
  code.line("}");

  KernelSpec spec;
  spec.kind = stringifyFusionKind(fusion.getKind()).str();
  spec.body = kernelSignature(params, kLoopBlock) + code.text() + "}\n";
  spec.helpers = emitter.helpers();
  if (width > 1)
    spec.helpers.push_back("vector_io.cuh");
  int64_t blocks = (total / width + kLoopBlock - 1) / kLoopBlock;
  spec.grid = {static_cast<uint32_t>(std::max<int64_t>(1, std::min(blocks, kLoopMaxBlocks))), 1, 1};
  spec.block = {kLoopBlock, 1, 1};
  spec.args = params.args;
  spec.changesOnlyWhen = std::move(guardedBy);
  auto [flops, bytes] = stepCost(fusion);
  context.addLaunch(spec, describeOp(fusion), describeOp(fusion), flops, bytes);
  return success();
}

} // namespace fuse::codegen
