//===- CompareOutputs.cpp - Comparing outputs with references -------------===//

#include "fuse/ToolSupport/CompareOutputs.h"

#include "fuse/ToolSupport/RunSupport.h"

#include "fuse/Interpreter/Inputs.h"
#include "fuse/Interpreter/Interpreter.h"
#include "fuse/Support/Comparison.h"
#include "fuse/Support/Npy.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"

#include <map>

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::DType;
using ::fuse::HostTensor;

LogicalResult mlir::fuse::compareOutputs(llvm::raw_ostream &os,
                                         StringRef label, func::FuncOp func,
                                         const std::vector<HostTensor> &outputs,
                                         const std::vector<HostTensor> &references,
                                         const std::vector<double> &tolerances) {
  std::vector<std::string> names;
  size_t width = 8;
  for (unsigned index = 0; index < outputs.size(); ++index) {
    names.push_back(outputName(func, index));
    width = std::max(width, names.back().size());
  }
  size_t failures = 0;
  for (auto [index, actual, expected] : llvm::enumerate(outputs, references)) {
    ::fuse::ComparisonResult result =
        ::fuse::compareTensors(actual, expected, tolerances[index]);
    os << "  " << llvm::left_justify(names[index], width) << " "
       << llvm::left_justify(expected.typeString(), 20) << " max_abs_error "
       << llvm::format("%.3e", result.maxAbsError) << "  rel_error "
       << llvm::format("%.3e", result.relativeError) << "  "
       << (result.passed ? "PASS" : "FAIL");
    if (!result.passed) {
      os << " (" << result.reason << ")";
      ++failures;
    }
    os << "\n";
  }
  os << label << ": " << (failures ? "FAIL" : "PASS") << " ("
     << references.size() - failures << " of " << references.size()
     << " outputs match)\n";
  return failure(failures != 0);
}

FailureOr<std::vector<HostTensor>>
mlir::fuse::loadExpected(const std::string &path, func::FuncOp func) {
  std::vector<std::string> outputNames;
  for (unsigned index = 0, e = func.getNumResults(); index < e; ++index)
    outputNames.push_back(outputName(func, index));
  // Arrays are checked from their headers before their data is inflated:
  // one of the wrong type, or that no output takes, is never inflated. The
  // problems are reported after the read, output by output.
  std::vector<std::string> available, unused;
  std::map<std::string, std::string> mismatched;
  auto check = [&](const ::fuse::NpzArrayHeader &header, std::string &) {
    available.push_back(header.name);
    auto found = llvm::find(outputNames, header.name);
    if (found == outputNames.end()) {
      unused.push_back(header.name);
      return ::fuse::NpzVerdict::Skip;
    }
    size_t index = found - outputNames.begin();
    std::string output = "output '" + header.name + "' (result #" +
                         std::to_string(index) + ")";
    FailureOr<HostTensorType> type =
        getHostTensorType(func.getResultTypes()[index]);
    if (failed(type))
      mismatched[header.name] = output + " has no tensor type of the fuse dialect";
    else if (type->dtype != header.dtype || type->shape != header.shape)
      mismatched[header.name] =
          output + " is " + type->str() + " but '" + path + "' holds " +
          ::fuse::typeString(header.dtype, header.shape) + " for it";
    else
      return ::fuse::NpzVerdict::Read;
    return ::fuse::NpzVerdict::Skip;
  };
  ::fuse::NamedTensors arrays;
  std::string error;
  if (!::fuse::readNpz(path, arrays, error, check)) {
    (void)reportError("--expected: " + error);
    return failure();
  }

  std::vector<HostTensor> expected;
  for (auto [index, name] : llvm::enumerate(outputNames)) {
    if (auto bad = mismatched.find(name); bad != mismatched.end()) {
      (void)reportError(bad->second);
      return failure();
    }
    auto found = llvm::find_if(arrays, [&](auto &array) {
      return array.first == name;
    });
    if (found == arrays.end()) {
      (void)reportError("output '" + name + "' (result #" +
                        std::to_string(index) + ") has no expected array in '" +
                        path + "' (it has: " + joinNames(available) + ")");
      return failure();
    }
    expected.push_back(std::move(found->second));
  }
  if (!unused.empty()) {
    (void)reportError("'" + path + "' has arrays that no output takes: " +
                      joinNames(unused) + " (outputs: " +
                      joinNames(outputNames) + ")");
    return failure();
  }
  return expected;
}

LogicalResult mlir::fuse::checkExpected(llvm::raw_ostream &os,
                                        const std::string &path,
                                        func::FuncOp func,
                                        const std::vector<HostTensor> &outputs,
                                        const std::vector<HostTensor> &expected,
                                        std::optional<double> tolerance) {
  std::vector<double> tolerances;
  llvm::SetVector<DType> dtypes;
  for (const HostTensor &output : outputs) {
    dtypes.insert(output.dtype());
    tolerances.push_back(tolerance && output.isFloat()
                             ? *tolerance
                             : ::fuse::toleranceFor(output.dtype()));
  }
  os << "expected '" << path << "': ";
  if (tolerance) {
    os << "tolerance " << llvm::format("%g", *tolerance)
       << " (relative, from --tolerance; integer outputs exact)\n";
  } else {
    os << "tolerance by dtype (relative):";
    for (auto [index, dtype] : llvm::enumerate(dtypes)) {
      os << (index ? ", " : " ") << ::fuse::dtypeName(dtype) << " ";
      if (::fuse::isFloat(dtype))
        os << llvm::format("%.0e", ::fuse::toleranceFor(dtype));
      else
        os << "exact";
    }
    os << "\n";
  }
  return compareOutputs(os, "expected", func, outputs, expected, tolerances);
}
