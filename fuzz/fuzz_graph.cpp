//===- fuzz_graph.cpp - Graph text to a launch plan -----------------------===//
//
// What fuse-translate does with a file, through the same compile driver
// (Driver.h): parse (behind the nesting check),
// the graph type check, the entry function, fuse-pipeline (mixed precision,
// decomposition, fusion, rematerialization, scheduling, memory planning),
// code generation into an Executable, which must pass validateExecutable
// (buildExecutable checks it), and the printed plan. Any input may fail at
// any step with a diagnostic; none may crash, trip a sanitizer or hang.
//
//===----------------------------------------------------------------------===//

#include "FuzzGraph.h"

#include "fuse/Driver/Driver.h"
#include "fuse/Runtime/ExecutableIO.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuse::driver::registerPipelinePasses();
  fuse::fuzz::FuzzContext fuzz;
  fuzz.addInput(data, size);
  fuse::driver::CompileOptions options;
  options.arch = "sm_90a";
  fuse::driver::Compilation compilation;
  fuse::driver::DriverError error;
  if (failed(fuse::driver::compileGraph(fuzz.context, fuzz.sourceMgr, options,
                                        compilation, error)))
    return 0;
  (void)fuse::runtime::formatPlan(compilation.executable);
  return 0;
}
