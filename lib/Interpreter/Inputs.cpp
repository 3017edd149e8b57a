//===- Inputs.cpp - Naming inputs and outputs, making random inputs -------===//

#include "fuse/Interpreter/Inputs.h"

#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Interpreter/Interpreter.h"

#include "llvm/Support/raw_ostream.h"

#include <random>

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::HostTensor;

namespace {

std::string describeLocation(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "'" << op->getName() << "' at " << op->getLoc();
  return text;
}

/// The index bound implied by one use of `value`, if the use is an index.
std::optional<std::pair<int64_t, std::string>> boundFromUse(OpOperand &use) {
  Operation *user = use.getOwner();
  Value value = use.get();
  if (auto gather = llvm::dyn_cast<GatherOp>(user); gather && gather.getIndices() == value)
    return std::make_pair(gather.getOperand().getType().getDimSize(gather.getDim()),
                          "the indexed dimension of " + describeLocation(user));
  if (auto scatter = llvm::dyn_cast<ScatterAddOp>(user); scatter && scatter.getIndices() == value)
    return std::make_pair(scatter.getDest().getType().getDimSize(scatter.getDim()),
                          "the indexed dimension of " + describeLocation(user));
  auto classes = [&](Value logits, Value labels) -> std::optional<std::pair<int64_t, std::string>> {
    if (labels != value)
      return std::nullopt;
    auto type = llvm::cast<RankedTensorType>(logits.getType());
    return std::make_pair(type.getShape().back(),
                          "the class count of " + describeLocation(user));
  };
  if (auto ce = llvm::dyn_cast<CrossEntropyOp>(user))
    return classes(ce.getLogits(), ce.getLabels());
  if (auto ce = llvm::dyn_cast<CrossEntropyBackwardOp>(user))
    return classes(ce.getLogits(), ce.getLabels());
  // Inside a fusion, the value is a block argument of its body.
  if (auto fusion = llvm::dyn_cast<FusionOp>(user)) {
    BlockArgument inner = fusion.getBody().getArgument(use.getOperandNumber());
    for (OpOperand &innerUse : inner.getUses())
      if (auto bound = boundFromUse(innerUse))
        return bound;
  }
  return std::nullopt;
}

} // namespace

std::vector<ArgumentInfo>
mlir::fuse::describeArguments(func::FuncOp func,
                              std::optional<int64_t> fallbackBound) {
  std::vector<ArgumentInfo> arguments;
  for (BlockArgument argument : func.getArguments()) {
    unsigned index = argument.getArgNumber();
    ArgumentInfo info;
    info.type = argument.getType();
    auto name = func.getArgAttrOfType<StringAttr>(index, FuseDialect::kNameAttr);
    info.name = name ? name.str() : "arg" + std::to_string(index);

    auto tensorType = llvm::dyn_cast<RankedTensorType>(info.type);
    if (tensorType && llvm::isa<IntegerType>(tensorType.getElementType()) &&
        !tensorType.getElementType().isInteger(1)) {
      if (auto bound = func.getArgAttrOfType<IntegerAttr>(index, FuseDialect::kIndexBoundAttr)) {
        info.indexBound = bound.getInt();
        info.boundSource = FuseDialect::kIndexBoundAttr.str();
      }
      for (OpOperand &use : argument.getUses()) {
        if (info.indexBound)
          break;
        // An indexed dimension of size 0 bounds nothing (the verifier
        // allows it only with no indices to draw) and would be a modulo
        // by zero below.
        if (auto bound = boundFromUse(use); bound && bound->first > 0) {
          info.indexBound = bound->first;
          info.boundSource = bound->second;
        }
      }
      if (!info.indexBound && fallbackBound) {
        info.indexBound = *fallbackBound;
        info.boundSource = "--index-bound";
      }
      if (!info.indexBound) {
        info.indexBound = 2;
        info.boundSource = "default (no fuse.index_bound, no index use, no --index-bound)";
      }
    }
    arguments.push_back(std::move(info));
  }
  return arguments;
}

std::vector<HostTensor>
mlir::fuse::randomInputs(const std::vector<ArgumentInfo> &arguments,
                         uint64_t seed) {
  std::mt19937_64 generator(seed);
  std::vector<HostTensor> inputs;
  for (const ArgumentInfo &argument : arguments) {
    // A type the interpreter cannot hold (the graph type check rejects it
    // first) gets an empty stand-in, which interpret() then reports by
    // argument, instead of a read through a failed result.
    FailureOr<HostTensor> made = makeHostTensor(argument.type);
    HostTensor tensor = succeeded(made) ? std::move(*made) : HostTensor();
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int64_t i = 0, e = tensor.numElements(); i < e; ++i) {
      if (tensor.isFloat())
        tensor.set(i, normal(generator));
      else if (tensor.dtype() == ::fuse::DType::I1)
        tensor.setInt(i, generator() & 1);
      else
        tensor.setInt(i, static_cast<int64_t>(
                             generator() % static_cast<uint64_t>(*argument.indexBound)));
    }
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

std::string mlir::fuse::outputName(func::FuncOp func, unsigned index) {
  if (auto name = func.getResultAttrOfType<StringAttr>(index, FuseDialect::kNameAttr))
    return name.str();
  return "out" + std::to_string(index);
}
