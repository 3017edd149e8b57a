//===- fuzz_graph.cpp - Graph text to a launch plan -----------------------===//
//
// What fuse-translate does with a file: parse (behind the nesting check),
// the graph type check, the entry function, fuse-pipeline (mixed precision,
// decomposition, fusion, rematerialization, scheduling, memory planning),
// code generation into an Executable, which must pass validateExecutable
// (buildExecutable checks it), and the printed plan. Any input may fail at
// any step with a diagnostic; none may crash, trip a sanitizer or hang.
//
//===----------------------------------------------------------------------===//

#include "FuzzGraph.h"

#include "fuse/Codegen/Codegen.h"
#include "fuse/Runtime/ExecutableIO.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuse::fuzz::registerPassesOnce();
  fuse::fuzz::FuzzContext fuzz;
  mlir::OwningOpRef<mlir::ModuleOp> module = fuzz.parse(data, size);
  if (!module)
    return 0;
  std::string error;
  mlir::FailureOr<mlir::func::FuncOp> func = mlir::fuse::findEntryFunction(
      *module, "", "the input", "", error);
  if (failed(func))
    return 0;
  std::string name = func->getSymName().str();
  if (!mlir::fuse::isPlanned(*func)) {
    if (failed(mlir::fuse::runPipeline(*module, "fuse-pipeline", "--pipeline",
                                       error)))
      return 0;
    func = module->lookupSymbol<mlir::func::FuncOp>(name);
    if (!*func)
      return 0;
  }
  mlir::FailureOr<fuse::runtime::Executable> executable =
      fuse::codegen::buildExecutable(*func);
  if (failed(executable))
    return 0;
  (void)fuse::runtime::formatPlan(*executable);
  return 0;
}
