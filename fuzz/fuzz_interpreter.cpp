//===- fuzz_interpreter.cpp - Small graphs on the reference interpreter ---===//
//
// What fuse-run --device=cpu does: parse and check the graph, make random
// inputs (the seed is the input's hash) and interpret the function. Graphs
// whose interpreter working set passes 4 MiB are skipped, as fuse-run
// --max-memory would refuse them, so that every run is quick and the
// sanitizers see the evaluators, not the allocator.
//
//===----------------------------------------------------------------------===//

#include "FuzzGraph.h"

#include "fuse/Interpreter/Inputs.h"
#include "fuse/Interpreter/Interpreter.h"

#include <string>

namespace {
constexpr int64_t kMaxWorkingSet = int64_t(4) << 20;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuse::fuzz::FuzzContext fuzz;
  mlir::OwningOpRef<mlir::ModuleOp> module = fuzz.parse(data, size);
  if (!module)
    return 0;
  std::string error;
  mlir::FailureOr<mlir::func::FuncOp> func = mlir::fuse::findEntryFunction(
      *module, "", "the input", "", error);
  if (failed(func) || func->isExternal())
    return 0;
  if (mlir::fuse::interpreterWorkingSet(*func).bytes > kMaxWorkingSet)
    return 0;
  uint64_t seed = 1469598103934665603ull; // FNV-1a of the input
  for (size_t i = 0; i < size; ++i)
    seed = (seed ^ data[i]) * 1099511628211ull;
  std::vector<mlir::fuse::ArgumentInfo> arguments =
      mlir::fuse::describeArguments(*func, std::nullopt);
  std::vector<fuse::HostTensor> inputs =
      mlir::fuse::randomInputs(arguments, seed);
  (void)mlir::fuse::interpret(*func, inputs);
  return 0;
}
