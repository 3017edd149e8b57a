//===- RunSupport.cpp - Loading graphs and inputs, reporting results ------===//

#include "fuse/ToolSupport/RunSupport.h"

#include "fuse/Interpreter/Interpreter.h"
#include "fuse/Support/CheckedMath.h"
#include "fuse/Support/HumanSize.h"
#include "fuse/Support/Npy.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::HostTensor;

static const char *toolName = "fuse-run";

void mlir::fuse::setToolName(const char *name) { toolName = name; }

LogicalResult mlir::fuse::reportError(const std::string &message) {
  llvm::errs() << toolName << ": error: " << message << "\n";
  return failure();
}

LogicalResult
mlir::fuse::reportError(const ::fuse::driver::DriverError &error) {
  if (error.diagnosed)
    return failure();
  return reportError(error.message);
}

::fuse::driver::CompileOptions
mlir::fuse::graphOptions(const std::string &path, const std::string &entry,
                         const std::string &pipeline) {
  ::fuse::driver::CompileOptions options;
  options.entry = entry;
  options.graphName = "'" + path + "'";
  options.entryHint = "choose one with --entry";
  options.pipeline = pipeline;
  options.pipelineFlag = "--pipeline";
  return options;
}

LogicalResult mlir::fuse::readGraphFile(llvm::SourceMgr &sourceMgr,
                                        const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(path);
  if (std::error_code error = buffer.getError())
    return reportError("cannot open graph '" + path + "': " + error.message());
  sourceMgr.AddNewSourceBuffer(std::move(*buffer), llvm::SMLoc());
  return success();
}

LogicalResult mlir::fuse::loadGraph(MLIRContext &context,
                                    llvm::SourceMgr &sourceMgr,
                                    const std::string &path,
                                    const ::fuse::driver::CompileOptions &options,
                                    ::fuse::driver::Compilation &compilation) {
  if (failed(readGraphFile(sourceMgr, path)))
    return failure();
  ::fuse::driver::DriverError error;
  if (failed(::fuse::driver::parseGraph(context, sourceMgr, options,
                                        compilation, error)))
    return reportError(error);
  return success();
}

/// Fails if two of `names` are equal; `what` is "argument" or "result".
static LogicalResult checkUnique(func::FuncOp func, ArrayRef<std::string> names,
                                 const std::string &what) {
  llvm::StringMap<unsigned> first;
  for (auto [later, name] : llvm::enumerate(names)) {
    auto [found, inserted] = first.try_emplace(name, later);
    if (!inserted)
      return reportError(
          what + "s #" + std::to_string(found->second) + " and #" +
          std::to_string(later) + " of @" + func.getSymName().str() +
          " are both named '" + name + "' (an unnamed " + what +
          " #N is named " + (what == "argument" ? "argN" : "outN") +
          "): give one of them another fuse.name");
  }
  return success();
}

LogicalResult
mlir::fuse::checkUniqueNames(func::FuncOp func,
                             const std::vector<ArgumentInfo> &arguments) {
  std::vector<std::string> argumentNames, resultNames;
  for (const ArgumentInfo &argument : arguments)
    argumentNames.push_back(argument.name);
  for (unsigned index = 0, e = func.getNumResults(); index < e; ++index)
    resultNames.push_back(outputName(func, index));
  return failure(failed(checkUnique(func, argumentNames, "argument")) ||
                 failed(checkUnique(func, resultNames, "result")));
}

std::string mlir::fuse::joinNames(ArrayRef<std::string> names) {
  std::string text;
  for (const std::string &name : names)
    text += (text.empty() ? "" : ", ") + name;
  return text.empty() ? "nothing" : text;
}

LogicalResult mlir::fuse::checkHostMemory(func::FuncOp func, bool interprets,
                                          bool expected,
                                          std::optional<int64_t> limit) {
  int64_t memory = limit ? *limit : hostMemoryBytes();
  if (memory <= 0)
    return success(); // this machine does not say; allocation will
  InterpreterWorkingSet set;
  if (interprets) {
    set = interpreterWorkingSet(func);
  } else {
    // On the GPU without --check the host holds the inputs and outputs.
    for (BlockArgument argument : func.getArguments())
      set.hold(argument);
    for (Value result : func.getBody().front().getTerminator()->getOperands())
      set.hold(result);
  }
  if (expected)
    for (Type type : func.getResultTypes())
      set.bytes = ::fuse::saturatingAdd(set.bytes, hostTensorBytes(type));
  if (set.bytes <= memory)
    return success();

  std::string largest;
  if (auto argument = llvm::dyn_cast<BlockArgument>(set.largest);
      argument && argument.getOwner()->getParentOp() == func.getOperation()) {
    unsigned index = argument.getArgNumber();
    auto name = func.getArgAttrOfType<StringAttr>(index, "fuse.name");
    largest = "argument #" + std::to_string(index) +
              (name ? " '" + name.str() + "'" : std::string());
  } else if (llvm::isa<BlockArgument>(set.largest)) {
    largest = "a fusion body's copy of its operand";
  } else {
    largest = "the result of '" +
              set.largest.getDefiningOp()->getName().getStringRef().str() + "'";
  }
  std::string type;
  llvm::raw_string_ostream(type) << set.largest.getType();
  auto bytes = [](int64_t n) {
    return std::to_string(n) + " bytes (" + ::fuse::humanBytes(n) + ")";
  };
  mlir::emitError(set.largest.getLoc())
      << "running @" << func.getSymName() << " needs "
      << (set.bytes == std::numeric_limits<int64_t>::max() ? "over "
                                                           : "about ")
      << bytes(set.bytes) << " of host memory ("
      << (interprets ? "the reference interpreter holds every argument and "
                       "every op's result"
                     : "its inputs and outputs")
      << (expected ? ", and the --expected arrays" : "") << "), more than "
      << (limit ? "--max-memory, " + bytes(memory)
                : "this machine's " + bytes(memory) +
                      " (--max-memory sets another limit)")
      << "; the largest tensor is " << largest << ", " << type << ", "
      << bytes(set.largestBytes);
  return failure();
}

FailureOr<std::vector<HostTensor>>
mlir::fuse::loadInputs(const std::string &path,
                       const std::vector<ArgumentInfo> &arguments) {
  std::vector<std::string> argumentNames;
  for (const ArgumentInfo &argument : arguments)
    argumentNames.push_back(argument.name);
  std::string expected = joinNames(argumentNames);
  // Each array is checked against its argument from its header, before its
  // data is inflated: an archive cannot make this process hold more than
  // the graph's arguments, however far its members would inflate.
  auto check = [&](const ::fuse::NpzArrayHeader &header, std::string &error) {
    auto found = llvm::find_if(arguments, [&](const ArgumentInfo &argument) {
      return argument.name == header.name;
    });
    if (found == arguments.end()) {
      error = "'" + path + "' has an array '" + header.name +
              "' that matches no argument (arguments: " + expected + ")";
      return ::fuse::NpzVerdict::Refuse;
    }
    HostTensorType type = *getHostTensorType(found->type);
    if (type.dtype != header.dtype || type.shape != header.shape) {
      error = "input '" + found->name + "' (argument #" +
              std::to_string(found - arguments.begin()) + ") must be " +
              type.str() + " but '" + path + "' holds " +
              ::fuse::typeString(header.dtype, header.shape);
      return ::fuse::NpzVerdict::Refuse;
    }
    return ::fuse::NpzVerdict::Read;
  };
  ::fuse::NamedTensors arrays;
  std::string error;
  if (!::fuse::readNpz(path, arrays, error, check)) {
    (void)reportError(error);
    return failure();
  }
  std::vector<std::string> arrayNames;
  for (auto &[name, tensor] : arrays)
    arrayNames.push_back(name);
  std::string available = joinNames(arrayNames);

  std::vector<HostTensor> inputs;
  for (auto [index, argument] : llvm::enumerate(arguments)) {
    auto found = llvm::find_if(arrays, [&](auto &array) {
      return array.first == argument.name;
    });
    if (found == arrays.end()) {
      (void)reportError("input '" + argument.name + "' (argument #" +
                        std::to_string(index) + ") is missing from '" + path +
                        "' (it has: " + available + ")");
      return failure();
    }
    inputs.push_back(std::move(found->second));
  }
  return inputs;
}

/// "2, 0" for element `linear` of a tensor of `shape` (row-major).
static std::string positionOf(int64_t linear, const std::vector<int64_t> &shape) {
  std::string where;
  for (int64_t dim = static_cast<int64_t>(shape.size()) - 1; dim >= 0; --dim) {
    where = std::to_string(linear % shape[dim]) + (where.empty() ? "" : ", ") +
            where;
    linear /= shape[dim];
  }
  return where;
}

LogicalResult mlir::fuse::checkFinite(const std::vector<HostTensor> &inputs,
                                      const std::vector<ArgumentInfo> &arguments,
                                      bool allowNan, bool allowInf) {
  for (auto [tensor, argument] : llvm::zip(inputs, arguments)) {
    if (!tensor.isFloat())
      continue;
    int64_t nans = 0, infs = 0, firstNan = -1, firstInf = -1;
    for (int64_t i = 0, e = tensor.numElements(); i < e; ++i) {
      float value = tensor.floats()[i];
      if (std::isnan(value) && nans++ == 0)
        firstNan = i;
      else if (std::isinf(value) && infs++ == 0)
        firstInf = i;
    }
    if (nans && !allowNan)
      return reportError("input '" + argument.name + "' holds " +
                         std::to_string(nans) + " NaN value(s), the first at [" +
                         positionOf(firstNan, tensor.shape()) +
                         "]; pass --allow-nan to run anyway");
    if (infs && !allowInf)
      return reportError("input '" + argument.name + "' holds " +
                         std::to_string(infs) +
                         " infinite value(s) (+Inf or -Inf), the first (" +
                         (tensor.floats()[firstInf] > 0 ? "+Inf" : "-Inf") +
                         ") at [" + positionOf(firstInf, tensor.shape()) +
                         "]; pass --allow-inf to run anyway");
  }
  return success();
}

LogicalResult mlir::fuse::saveOutputs(const std::string &path,
                                      func::FuncOp func,
                                      const std::vector<HostTensor> &outputs) {
  ::fuse::NamedTensors arrays;
  for (auto [index, tensor] : llvm::enumerate(outputs))
    arrays.emplace_back(outputName(func, index), tensor);
  std::string error;
  if (!::fuse::writeNpz(path, arrays, error))
    return reportError(error);
  return success();
}

/// "min -1.2 max 3.4 mean 0.01" for floats, "min 0 max 9" for integers.
static std::string statistics(const HostTensor &tensor) {
  if (tensor.numElements() == 0)
    return "empty";
  double min = INFINITY, max = -INFINITY, sum = 0;
  int64_t nans = 0;
  for (int64_t i = 0, e = tensor.numElements(); i < e; ++i) {
    double value = tensor.get(i);
    if (std::isnan(value)) {
      ++nans;
      continue;
    }
    min = std::min(min, value);
    max = std::max(max, value);
    sum += value;
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "min " << llvm::format("%.4g", min) << "  max "
     << llvm::format("%.4g", max);
  if (tensor.isFloat())
    os << "  mean "
       << llvm::format("%.4g", sum / std::max<int64_t>(1, tensor.numElements() - nans));
  if (nans)
    os << "  NaN " << nans;
  return text;
}

void mlir::fuse::printSummary(llvm::raw_ostream &os, func::FuncOp func,
                              const std::vector<ArgumentInfo> &arguments,
                              const std::vector<HostTensor> &inputs,
                              bool randomInputs, uint64_t seed,
                              const std::vector<HostTensor> &outputs,
                              double milliseconds) {
  os << "fuse-run: @" << func.getSymName() << " on cpu (reference interpreter)\n";
  for (auto [argument, tensor] : llvm::zip(arguments, inputs)) {
    os << "  input   " << llvm::left_justify(argument.name, 24) << " "
       << llvm::left_justify(tensor.typeString(), 20);
    if (randomInputs && tensor.isFloat())
      os << " random normal (seed " << seed << ")";
    else if (randomInputs && argument.indexBound)
      os << " random in [0, " << *argument.indexBound << ") from "
         << argument.boundSource;
    else if (randomInputs)
      os << " random bits (seed " << seed << ")";
    os << "\n";
  }
  for (auto [index, tensor] : llvm::enumerate(outputs))
    os << "  output  " << llvm::left_justify(outputName(func, index), 24) << " "
       << llvm::left_justify(tensor.typeString(), 20) << " "
       << statistics(tensor) << "\n";
  os << "  time    " << llvm::format("%.3f", milliseconds) << " ms\n";
}
