//===- Inputs.h - Naming inputs and outputs, random inputs ------*- C++ -*-===//
//
// What fuse-run (and tests) need to feed a function and name its results:
// argument names, the valid range of integer arguments, random inputs drawn
// from them, and output names.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_INTERPRETER_INPUTS_H
#define FUSE_INTERPRETER_INPUTS_H

#include "fuse/Support/HostTensor.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>
#include <vector>

namespace mlir::fuse {

struct ArgumentInfo {
  /// The `fuse.name` of the argument, else "arg<N>".
  std::string name;
  Type type;
  /// For integer arguments: values are drawn from [0, indexBound).
  std::optional<int64_t> indexBound;
  /// Where indexBound came from: "fuse.index_bound", "used as gather
  /// indices by fuse.gather at LOC", "--index-bound", or "default".
  std::string boundSource;
};

/// Describes every argument of `func`. An integer argument's bound comes from
/// its `fuse.index_bound` attribute, else from its use (gather/scatter_add
/// indices: the indexed dimension; cross-entropy labels: the class count),
/// else from `fallbackBound` (a flag), else 2.
std::vector<ArgumentInfo> describeArguments(func::FuncOp func,
                                            std::optional<int64_t> fallbackBound);

/// Random inputs for `arguments`, reproducible from `seed`: standard normal
/// floats (rounded to their dtype), integers uniform in [0, bound), i1 fair
/// coin flips.
std::vector<::fuse::HostTensor>
randomInputs(const std::vector<ArgumentInfo> &arguments, uint64_t seed);

/// The name of result #`index` of `func`: its `fuse.name`, else "out<index>".
std::string outputName(func::FuncOp func, unsigned index);

} // namespace mlir::fuse

#endif // FUSE_INTERPRETER_INPUTS_H
