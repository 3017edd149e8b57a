//===- fuse-translate.cpp - A fuse graph to CUDA ---------------------------===//
//
//   fuse-translate GRAPH.mlir --emit-cuda      the kernels as one CUDA file
//   fuse-translate GRAPH.mlir --emit-plan      the launch plan
//   fuse-translate GRAPH.mlir --nvrtc-check    compile every kernel with NVRTC
//                                              and check registers and spills
//
// The graph goes through the compile driver (include/fuse/Driver/Driver.h):
// fuse-pipeline first unless it is planned already (has fuse.arena_size). --emit-cuda's output compiles with NVRTC (or nvcc)
// as it is: the kernels/ helpers it uses are inlined.
//
//===----------------------------------------------------------------------===//

#include "fuse/Driver/Driver.h"
#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Runtime/TranslationUnit.h"
#include "fuse/ToolSupport/RunSupport.h"
#ifdef FUSE_ENABLE_CUDA
#include "fuse/Runtime/KernelCompiler.h"
#endif

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace mlir;
using namespace mlir::fuse;
namespace cl = llvm::cl;
namespace rt = ::fuse::runtime;

static cl::OptionCategory category("fuse-translate options");
static cl::opt<std::string> graphPath(cl::Positional, cl::Required,
                                      cl::desc("<graph.mlir>"), cl::cat(category));
enum class Action { EmitCuda, EmitPlan, NvrtcCheck };
static cl::opt<Action> action(
    cl::desc("What to produce:"), cl::init(Action::EmitCuda),
    cl::values(
        clEnumValN(Action::EmitCuda, "emit-cuda",
                   "The kernels as one self-contained CUDA C++ file (default)"),
        clEnumValN(Action::EmitPlan, "emit-plan",
                   "The launch plan: kernels with grid and block, arguments as "
                   "arena offsets, cuBLASLt GEMM descriptors"),
        clEnumValN(Action::NvrtcCheck, "nvrtc-check",
                   "Compile every kernel with NVRTC, print registers and spills "
                   "per kernel, exit 1 if one is over the limits")),
    cl::cat(category));
static cl::opt<std::string> outputPath("o", cl::init("-"),
                                       cl::desc("Output file (default stdout)"),
                                       cl::cat(category));
static cl::opt<std::string> entry(
    "entry", cl::desc("Function to compile (default: the module's only function)"),
    cl::cat(category));
static cl::opt<std::string> pipeline(
    "pipeline", cl::init("fuse-pipeline"),
    cl::desc("Pass pipeline applied first (skipped for a planned graph)"),
    cl::cat(category));
static cl::opt<std::string> arch("arch", cl::init("sm_90a"),
                                 cl::desc("GPU architecture of the kernels"),
                                 cl::cat(category));
static cl::opt<std::string> saveExecutable(
    "save-executable",
    cl::desc("Also write the executable (runs on another machine) to this file"),
    cl::cat(category));
static cl::opt<int> maxRegisters(
    "max-registers", cl::init(255),
    cl::desc("--nvrtc-check: most registers a kernel may use (beyond this, a "
             "kernel also fails when one block of its launch does not fit the "
             "65536 registers of an SM)"),
    cl::cat(category));
static cl::opt<int> maxSpillBytes(
    "max-spill-bytes", cl::init(0),
    cl::desc("--nvrtc-check: most spill store+load bytes a kernel may have"),
    cl::cat(category));

namespace {

LogicalResult nvrtcCheck(const rt::Executable &executable, llvm::raw_ostream &os) {
#ifdef FUSE_ENABLE_CUDA
  rt::NvrtcOptions options;
  options.arch = executable.arch;
  rt::StatusOr<rt::CompiledModule> module = rt::compileWithNvrtc(
      rt::translationUnit(executable), executable.entry + ".cu", options);
  if (!module)
    return reportError(module.status().message());
  bool ok = true;
  os << llvm::format("%-40s %9s %12s %12s\n", "kernel", "registers",
                     "spill-stores", "spill-loads");
  // The largest block each kernel is launched with.
  std::map<std::string, int64_t> threads;
  for (const rt::KernelLaunch &launch : executable.launches) {
    int64_t n = int64_t(launch.block[0]) * launch.block[1] * launch.block[2];
    int64_t &most = threads[executable.kernels[launch.kernel].name];
    most = std::max(most, n);
  }
  for (const rt::KernelResources &kernel : module->kernels) {
    bool over = kernel.registers > maxRegisters ||
                kernel.registers * threads[kernel.name] > 65536 ||
                kernel.spillStoreBytes + kernel.spillLoadBytes > maxSpillBytes;
    ok &= !over;
    os << llvm::format("%-40s %9d %12d %12d", kernel.name.c_str(),
                       kernel.registers, kernel.spillStoreBytes,
                       kernel.spillLoadBytes)
       << (over ? "  OVER LIMIT" : "") << "\n";
  }
  if (module->kernels.size() != executable.kernels.size())
    return reportError("NVRTC reported " + std::to_string(module->kernels.size()) +
                       " kernels, the executable has " +
                       std::to_string(executable.kernels.size()));
  os << "nvrtc-check: " << executable.kernels.size() << " kernels compiled for "
     << executable.arch << "; limits " << maxRegisters << " registers, "
     << maxSpillBytes << " spill bytes: " << (ok ? "PASS" : "FAIL") << "\n";
  return success(ok);
#else
  (void)executable;
  (void)os;
  return reportError("--nvrtc-check needs a build with the CUDA toolkit");
#endif
}

LogicalResult translate(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  if (failed(readGraphFile(sourceMgr, graphPath)))
    return failure();
  ::fuse::driver::CompileOptions options =
      graphOptions(graphPath, entry, pipeline);
  options.arch = arch;
  ::fuse::driver::Compilation compilation;
  ::fuse::driver::DriverError driverError;
  if (failed(::fuse::driver::compileGraph(context, sourceMgr, options,
                                          compilation, driverError)))
    return reportError(driverError);
  const rt::Executable &executable = compilation.executable;
  if (!saveExecutable.empty())
    if (rt::Status status = rt::writeExecutableFile(executable, saveExecutable); !status)
      return reportError(status.message());

  std::string error;
  std::unique_ptr<llvm::ToolOutputFile> output = openOutputFile(outputPath, &error);
  if (!output)
    return reportError(error);
  LogicalResult result = success();
  switch (action) {
  case Action::EmitCuda:
    output->os() << rt::translationUnit(executable);
    break;
  case Action::EmitPlan:
    output->os() << rt::formatPlan(executable);
    break;
  case Action::NvrtcCheck:
    result = nvrtcCheck(executable, output->os());
    break;
  }
  output->keep();
  return result;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  setToolName("fuse-translate");
  ::fuse::driver::registerPipelinePasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "fuse-translate: a fuse graph to CUDA kernels and a launch plan\n");
  DialectRegistry registry;
  ::fuse::driver::registerGraphDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  return succeeded(translate(context, sourceMgr)) ? 0 : 1;
}
