//===- Codegen.cpp - A planned graph to an Executable ---------------------===//

#include "fuse/Codegen/Codegen.h"
#include "fuse/Codegen/DeviceLibrary.h"

#include "CodegenContext.h"
#include "Lowerings.h"

#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/GraphVerification.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::runtime::BufferRef;

namespace fuse::codegen {

namespace {

runtime::TensorSpec tensorSpec(Value value, StringAttr name,
                               const std::string &fallback) {
  runtime::TensorSpec spec;
  spec.name = name ? name.str() : fallback;
  spec.dtype = dtypeOf(value);
  spec.shape = shapeOf(value);
  return spec;
}

/// The result number under which `value` is returned: as it is, or
/// through a chain of reshapes (views of its memory) and in-place
/// scatter_adds (accumulations into it), which the memory plan places with
/// it.
std::optional<int64_t> returnedAs(Value value, func::ReturnOp terminator) {
  auto position = llvm::find(terminator.getOperands(), value);
  if (position != terminator.getOperands().end())
    return position - terminator.getOperands().begin();
  for (Operation *user : value.getUsers()) {
    auto scatter = dyn_cast<ScatterAddOp>(user);
    bool sameMemory = isa<ReshapeOp>(user) ||
                      (scatter && scatter.getDest() == value &&
                       scatter.accumulatesInPlace());
    if (sameMemory)
      if (std::optional<int64_t> viewed = returnedAs(user->getResult(0), terminator))
        return viewed;
  }
  return std::nullopt;
}

/// Where fuse-plan-memory put each result of a top-level op.
LogicalResult placeResults(Operation *op, func::ReturnOp terminator,
                           CodegenContext &context) {
  auto buffers = op->getAttrOfType<ArrayAttr>("fuse.buffers");
  if (!buffers || buffers.size() != op->getNumResults())
    return op->emitError() << "no memory plan on this op: run fuse-plan-memory "
                              "(or fuse-pipeline) before code generation";
  for (auto [result, attr] : llvm::zip(op->getResults(), buffers)) {
    auto buffer = cast<BufferAttr>(attr);
    ValueLocation where;
    if (std::optional<int64_t> offset = buffer.getOffset()) {
      where.buffer = BufferRef::arena(*offset);
    } else if (std::optional<int64_t> argument = buffer.getArgument()) {
      where.buffer = BufferRef::input(*argument);
    } else {
      std::optional<int64_t> position = returnedAs(result, terminator);
      if (!position)
        return op->emitError() << "result placed in caller memory (external) "
                                  "but not returned";
      where.buffer = BufferRef::output(*position);
    }
    context.setLocation(result, where);
  }
  return success();
}

/// An op (or an op of a fusion) that reads an empty tensor but writes a
/// non-empty one: a reduction over an empty dimension, a matmul with K = 0,
/// a concat with an empty piece. canonicalize rewrites each into what it
/// equals (EmptyTensorCanonicalization.cpp), so only a graph planned
/// without it gets here; no template handles one.
LogicalResult checkNoEmptyInputs(Operation *op) {
  WalkResult walk = op->walk([](Operation *inner) {
    bool writes = llvm::any_of(inner->getResults(), [](Value result) {
      return numElements(shapeOf(result)) != 0;
    });
    for (Value operand : inner->getOperands()) {
      if (!writes || numElements(shapeOf(operand)) != 0)
        continue;
      inner->emitError() << "reads the empty " << operand.getType()
                         << " but writes a non-empty result: code generation "
                            "has no kernel for this (canonicalize, which "
                            "fuse-pipeline runs, rewrites it into the value "
                            "it equals)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult lowerOp(Operation *op, func::ReturnOp terminator,
                      CodegenContext &context) {
  if (auto constant = dyn_cast<ConstantOp>(op)) {
    ValueLocation where;
    auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (elements && elements.isSplat()) {
      DType dtype = dtypeOf(constant.getResult());
      if (isFloat(dtype))
        where.literal = floatLiteral(elements.getSplatValue<APFloat>().convertToDouble());
      else
        where.literal = dtype == DType::I1
                            ? std::string(elements.getSplatValue<APInt>().isZero() ? "false" : "true")
                            : "(" + std::to_string(elements.getSplatValue<APInt>().getSExtValue()) + "LL)";
      where.splat = op;
    } else {
      where.buffer = context.constant(op);
    }
    context.setLocation(constant.getResult(), where);
    return success();
  }
  if (auto reshape = dyn_cast<ReshapeOp>(op)) {
    // A view: the operand's memory under another shape.
    context.setLocation(reshape.getResult(), context.location(reshape.getOperand()));
    return success();
  }
  if (failed(placeResults(op, terminator, context)))
    return failure();
  // Tensors with a zero dimension: an op whose results are all empty has
  // nothing to compute (templates would divide by the empty dimension).
  bool allEmpty = op->getNumResults() != 0 &&
                  llvm::all_of(op->getResults(), [](Value result) {
    return numElements(shapeOf(result)) == 0;
  });
  if (allEmpty)
    return success();
  if (failed(checkNoEmptyInputs(op)))
    return failure();
  context.beginStep(op);
  if (auto fusion = dyn_cast<FusionOp>(op)) {
    switch (fusion.getKind()) {
    case FusionKind::Loop: return lowerLoopFusion(fusion, context);
    case FusionKind::RowReduction: return lowerRowReductionFusion(fusion, context);
    case FusionKind::ColumnReduction: return lowerColumnReductionFusion(fusion, context);
    case FusionKind::GemmEpilogue: return lowerGemmEpilogueFusion(fusion, context);
    case FusionKind::Attention: return lowerAttentionFusion(fusion, context);
    }
  }
  if (auto matmul = dyn_cast<MatmulOp>(op))
    return lowerMatmul(matmul, context);
  if (auto scatter = dyn_cast<ScatterAddOp>(op))
    return lowerScatterAdd(scatter, context);
  if (auto cumsum = dyn_cast<CumsumOp>(op))
    return lowerCumsum(cumsum, context);
  return op->emitError() << "the CUDA code generator expects top-level ops to "
                            "be fusions, matmuls, scatter_adds, cumsums, "
                            "reshapes and constants (run fuse-pipeline first)";
}

/// Returned values that are not already in the caller's output memory (an
/// argument returned as it is, a value returned twice, a dense constant) are
/// copied there; splat constants, which have no memory, are written there.
LogicalResult copyResults(func::ReturnOp terminator, CodegenContext &context) {
  const runtime::Executable &executable = context.executable();
  for (auto [i, value] : llvm::enumerate(terminator.getOperands())) {
    BufferRef output = BufferRef::output(static_cast<int64_t>(i));
    const ValueLocation &where = context.location(value);
    // A result left in the arena is where the plan put it; the caller reads
    // it there (its output pointer is not used).
    if (int64_t offset = executable.outputs[i].arenaOffset; offset >= 0) {
      if (!where.buffer || !(*where.buffer == BufferRef::arena(offset)))
        return terminator.emitError()
               << "result #" << i << " is to be left in the arena at byte "
               << offset << ", but the memory plan put it elsewhere (run "
                  "fuse-plan-memory after anything that changes results)";
      continue;
    }
    int64_t bytes = numElements(shapeOf(value)) *
                    static_cast<int64_t>(dtypeSize(dtypeOf(value)));
    if (where.literal) {
      lowerSplatFill(where, value, output, "result " + std::to_string(i), context);
    } else if (!(*where.buffer == output) && bytes != 0) {
      context.addCopy({*where.buffer, output, bytes},
                      "copy to result " + std::to_string(i));
    }
  }
  return success();
}

} // namespace

FailureOr<runtime::Executable> buildExecutable(func::FuncOp func,
                                               const CodegenOptions &options) {
  // The front ends check this when they load a graph; a caller that built
  // or planned the function itself may not have.
  if (failed(verifyGraphTypes(func)))
    return failure();
  CodegenContext context;
  runtime::Executable &executable = context.executable();
  executable.entry = func.getSymName().str();
  executable.arch = options.arch;
  // The staging bound: the function's, else its module's.
  for (Operation *holder : {func.getOperation(), func->getParentOp()})
    if (holder)
      if (auto bound = holder->getAttrOfType<IntegerAttr>(FuseDialect::kGemmStagingBytesAttr)) {
        context.setGemmStagingBytes(bound.getInt());
        break;
      }
  if (auto arena = func->getAttrOfType<IntegerAttr>("fuse.arena_size"))
    executable.arenaBytes = arena.getInt();
  else
    return func.emitError() << "no fuse.arena_size: run fuse-plan-memory (or "
                               "fuse-pipeline) before code generation";
  Block &body = func.getBody().front();
  auto terminator = cast<func::ReturnOp>(body.getTerminator());
  for (BlockArgument argument : func.getArguments()) {
    unsigned i = argument.getArgNumber();
    executable.inputs.push_back(tensorSpec(
        argument, func.getArgAttrOfType<StringAttr>(i, "fuse.name"),
        "arg" + std::to_string(i)));
    // An argument the caller left in the arena is read there.
    ValueLocation where;
    where.buffer = BufferRef::input(i);
    if (auto offset = func.getArgAttrOfType<IntegerAttr>(i, FuseDialect::kArenaOffsetAttr)) {
      executable.inputs.back().arenaOffset = offset.getInt();
      where.buffer = BufferRef::arena(offset.getInt());
    }
    context.setLocation(argument, where);
  }
  for (auto [i, value] : llvm::enumerate(terminator.getOperands())) {
    executable.outputs.push_back(tensorSpec(
        value, func.getResultAttrOfType<StringAttr>(i, "fuse.name"),
        "result" + std::to_string(i)));
    if (func.getResultAttr(i, FuseDialect::kInArenaAttr))
      return func.emitError() << "result #" << i
                              << " asks for an arena offset (fuse.in_arena) "
                                 "that no memory plan chose: run "
                                 "fuse-plan-memory (or fuse-pipeline) first";
    if (auto offset = func.getResultAttrOfType<IntegerAttr>(i, FuseDialect::kArenaOffsetAttr))
      executable.outputs.back().arenaOffset = offset.getInt();
  }
  for (Operation &op : body.without_terminator())
    if (failed(lowerOp(&op, terminator, context)))
      return failure();
  context.finishHoistedCasts();
  if (failed(copyResults(terminator, context)))
    return failure();

  // Every kernel names the helpers it uses with their dependencies; the
  // executable carries their text.
  std::vector<std::string> used;
  for (runtime::Kernel &kernel : executable.kernels) {
    kernel.helpers = helperClosure(kernel.helpers);
    for (const std::string &name : kernel.helpers)
      if (!llvm::is_contained(used, name))
        used.push_back(name);
  }
  for (const std::string &name : helperClosure(used))
    executable.helperSources.push_back({name, deviceLibraryFile(name).text});
  // The runtime refuses what does not pass; refusing it here names the
  // graph, and nothing invalid reaches a file (--save-executable) or a GPU.
  if (runtime::Status status =
          runtime::validateExecutable(executable, "executable @" + executable.entry);
      !status)
    return func.emitError() << "code generation produced an invalid executable "
                               "(a bug in the code generator): "
                            << status.message();
  return executable;
}

} // namespace fuse::codegen
