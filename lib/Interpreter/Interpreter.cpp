//===- Interpreter.cpp - CPU reference evaluator for fuse graphs ----------===//

#include "fuse/Interpreter/Interpreter.h"

#include "Evaluators.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Support/CheckedMath.h"

#include "llvm/ADT/DenseMap.h"

#include <limits>

#include <unistd.h>

using namespace mlir;
using namespace mlir::fuse;
using namespace mlir::fuse::interp;

FailureOr<DType> mlir::fuse::getDType(Type elementType) {
  if (elementType.isF32()) return DType::F32;
  if (elementType.isF16()) return DType::F16;
  if (elementType.isBF16()) return DType::BF16;
  if (elementType.isInteger(64)) return DType::I64;
  if (elementType.isInteger(32)) return DType::I32;
  if (elementType.isInteger(1)) return DType::I1;
  return failure();
}

FailureOr<HostTensorType> mlir::fuse::getHostTensorType(Type type) {
  auto tensorType = llvm::dyn_cast<RankedTensorType>(type);
  if (!tensorType || !tensorType.hasStaticShape())
    return failure();
  FailureOr<DType> dtype = getDType(tensorType.getElementType());
  if (failed(dtype))
    return failure();
  return HostTensorType{*dtype, std::vector<int64_t>(tensorType.getShape().begin(),
                                                     tensorType.getShape().end())};
}

int64_t mlir::fuse::hostMemoryBytes() {
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && pageSize > 0 ? int64_t(pages) * pageSize : 0;
}

int64_t mlir::fuse::hostTensorBytes(Type type) {
  FailureOr<HostTensorType> hostType = getHostTensorType(type);
  if (failed(hostType))
    return 0;
  int64_t perElement = isFloat(hostType->dtype) ? 4 : 8;
  std::optional<int64_t> bytes =
      ::fuse::checkedByteSize(hostType->shape, perElement);
  return bytes ? *bytes : std::numeric_limits<int64_t>::max();
}

void mlir::fuse::InterpreterWorkingSet::hold(Value value) {
  int64_t valueBytes = hostTensorBytes(value.getType());
  bytes = ::fuse::saturatingAdd(bytes, valueBytes);
  if (!largest || valueBytes > largestBytes) {
    largest = value;
    largestBytes = valueBytes;
  }
}

InterpreterWorkingSet mlir::fuse::interpreterWorkingSet(func::FuncOp func) {
  InterpreterWorkingSet set;
  for (BlockArgument argument : func.getArguments())
    set.hold(argument);
  func.walk([&](Operation *op) {
    for (Value result : op->getResults())
      set.hold(result);
    // The body's arguments are copies of the fusion's operands.
    if (auto fusion = llvm::dyn_cast<FusionOp>(op))
      for (BlockArgument argument : fusion.getBody().getArguments())
        set.hold(argument);
  });
  return set;
}

std::string mlir::fuse::hostTensorProblem(Type type) {
  FailureOr<HostTensorType> hostType = getHostTensorType(type);
  if (failed(hostType))
    return "not a static tensor of f32, f16, bf16, i64, i32 or i1";
  // A HostTensor keeps floats as f32 and integers as i64. A tensor the
  // verifier allows (up to 2^48 bytes) can still be more than this machine
  // has; allocating it would end the process (no exceptions here).
  int64_t perElement = isFloat(hostType->dtype) ? 4 : 8;
  std::optional<int64_t> bytes = ::fuse::checkedByteSize(hostType->shape, perElement);
  int64_t memory = hostMemoryBytes();
  if (!bytes || (memory > 0 && *bytes > memory))
    return "its elements take " +
           (bytes ? std::to_string(*bytes) : std::string("over 2^63")) +
           " bytes on the host, more than this machine's " +
           std::to_string(memory) + " bytes of memory";
  return "";
}

FailureOr<HostTensor> mlir::fuse::makeHostTensor(Type type) {
  if (!hostTensorProblem(type).empty())
    return failure();
  FailureOr<HostTensorType> hostType = getHostTensorType(type);
  return HostTensor(hostType->dtype, hostType->shape);
}

namespace {

/// Evaluates blocks op by op, keeping every live value in a map.
class Evaluator {
public:
  /// Runs `block` with its arguments bound to `arguments`; returns the
  /// operands of its terminator.
  FailureOr<std::vector<HostTensor>> runBlock(Block &block,
                                              ArrayRef<HostTensor> arguments);

private:
  LogicalResult runOp(Operation &op);

  llvm::DenseMap<Value, HostTensor> values;
};

FailureOr<std::vector<HostTensor>>
Evaluator::runBlock(Block &block, ArrayRef<HostTensor> arguments) {
  for (auto [argument, tensor] : llvm::zip(block.getArguments(), arguments))
    values[argument] = tensor;
  for (Operation &op : block.without_terminator())
    if (failed(runOp(op)))
      return failure();
  std::vector<HostTensor> returned;
  for (Value value : block.getTerminator()->getOperands())
    returned.push_back(values.at(value));
  return returned;
}

LogicalResult Evaluator::runOp(Operation &op) {
  SmallVector<const HostTensor *> operands;
  for (Value operand : op.getOperands())
    operands.push_back(&values.at(operand));

  std::vector<HostTensor> results;
  for (Type type : op.getResultTypes()) {
    FailureOr<HostTensor> tensor = makeHostTensor(type);
    if (failed(tensor))
      return op.emitError() << "the reference interpreter cannot hold a value "
                               "of type "
                            << type << ": " << hostTensorProblem(type);
    results.push_back(std::move(*tensor));
  }

  if (auto fusion = llvm::dyn_cast<FusionOp>(op)) {
    std::vector<HostTensor> inputs;
    for (const HostTensor *operand : operands)
      inputs.push_back(*operand);
    Evaluator body;
    FailureOr<std::vector<HostTensor>> yielded =
        body.runBlock(fusion.getBody().front(), inputs);
    if (failed(yielded))
      return failure();
    results = std::move(*yielded);
  } else {
    using EvalFn = EvalResult (*)(Operation *, Operands, Results);
    static constexpr EvalFn evaluators[] = {
        evalElementwise, evalGenerator,     evalShape,       evalContraction,
        evalNormalization, evalAttention, evalCrossEntropy};
    EvalResult handled;
    for (EvalFn evaluate : evaluators)
      if ((handled = evaluate(&op, operands, results)))
        break;
    if (!handled)
      return op.emitError() << "the reference interpreter does not support '"
                            << op.getName() << "'";
    if (failed(*handled))
      return failure();
  }

  for (auto [result, tensor] : llvm::zip(op.getResults(), results))
    values[result] = std::move(tensor);
  return success();
}

} // namespace

FailureOr<std::vector<HostTensor>>
mlir::fuse::interpret(func::FuncOp func, ArrayRef<HostTensor> inputs) {
  if (func.isExternal())
    return func.emitError() << "cannot interpret a function without a body";
  Block &entry = func.getBody().front();
  if (inputs.size() != entry.getNumArguments())
    return func.emitError() << "expects " << entry.getNumArguments()
                            << " inputs, got " << inputs.size();
  for (auto [index, argument, input] :
       llvm::enumerate(entry.getArguments(), inputs)) {
    FailureOr<HostTensorType> expected = getHostTensorType(argument.getType());
    std::string problem = hostTensorProblem(argument.getType());
    if (failed(expected) || !problem.empty())
      return func.emitError() << "argument #" << index << " has type "
                              << argument.getType()
                              << ", which the interpreter cannot hold: "
                              << problem;
    if (!expected->matches(input))
      return func.emitError() << "argument #" << index << " is "
                              << expected->str() << " but the input is "
                              << input.typeString();
  }
  if (!func.getBody().hasOneBlock())
    return func.emitError() << "the interpreter runs single-block functions";
  Evaluator evaluator;
  return evaluator.runBlock(entry, inputs);
}
