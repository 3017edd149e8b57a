//===- fuse-run.cpp - Run a fuse graph ------------------------------------===//
//
//   fuse-run GRAPH.mlir --device=cpu [--entry NAME] [--seed N]
//            [--inputs IN.npz] [--allow-nan] [--allow-inf] [--max-memory SIZE]
//            [--dump-outputs OUT.npz]
//            [--expected REF.npz [--tolerance X]] [--check-pipeline=PIPELINE]
//   fuse-run GRAPH.mlir --device=cuda [--check] [--iters N] [--no-cuda-graph]
//            [--profile] [--profile-json FILE] [--trace FILE] [--calibrate]
//            [--peak-tflops X] [--no-counters]
//
// Runs a function of a fuse graph on the CPU reference interpreter, on the
// inputs given or on random ones, and prints a summary. --device=cuda
// compiles it (fuse-pipeline, CUDA code generation, NVRTC) and runs it on the
// GPU instead (CudaRun.cpp). With --expected it
// compares every output with a reference array of its name; with
// --check-pipeline it also runs the graph after a pass pipeline on the same
// inputs and compares every output, failing (exit 1) when a pass changed the
// graph's meaning. Before any input is made or read, the host memory the run
// needs (the interpreter's working set, or the inputs and outputs alone on
// the GPU without --check) is checked against --max-memory, by default this
// machine's memory. Every error names what and where and exits with 1.
//
//===----------------------------------------------------------------------===//

#ifdef FUSE_ENABLE_CUDA
#include "CudaRun.h"
#endif

#include "fuse/Interpreter/Inputs.h"
#include "fuse/Interpreter/Interpreter.h"
#include "fuse/Support/Comparison.h"
#include "fuse/Support/HumanSize.h"
#include "fuse/Support/Npy.h"
#include "fuse/ToolSupport/CompareOutputs.h"
#include "fuse/ToolSupport/RunSupport.h"
#include "TestPasses.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>

using namespace mlir;
using namespace mlir::fuse;
using ::fuse::HostTensor;
namespace cl = llvm::cl;

static cl::OptionCategory runCategory("fuse-run options");

static cl::opt<std::string> graphPath(cl::Positional, cl::Required,
                                      cl::desc("<graph.mlir>"),
                                      cl::cat(runCategory));
static cl::opt<std::string> device(
    "device", cl::init("cpu"),
    cl::desc("Where to run: cpu (the reference interpreter) or cuda (the "
             "compiled graph on the GPU)"),
    cl::cat(runCategory));
static cl::opt<std::string> entry(
    "entry", cl::desc("Function to run (default: the module's only function)"),
    cl::cat(runCategory));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("Seed of the random inputs"),
                              cl::cat(runCategory));
static cl::opt<std::string> inputsPath(
    "inputs",
    cl::desc("Read the inputs from this .npz (one array per argument, named "
             "by its fuse.name or arg<N>) instead of making random ones"),
    cl::cat(runCategory));
static cl::opt<std::string> outputsPath(
    "dump-outputs",
    cl::desc("Write the outputs to this .npz, one array per result, named by "
             "its fuse.name or out<N>"),
    cl::cat(runCategory));
static cl::opt<std::string> expectedPath(
    "expected",
    cl::desc("Compare the outputs with the arrays of this .npz (one per "
             "result, named by its fuse.name or out<N>); exit 1 if any "
             "differs beyond its relative tolerance (--device=cpu)"),
    cl::cat(runCategory));
static cl::opt<double> tolerance(
    "tolerance",
    cl::desc("Relative tolerance of --expected for float outputs (default "
             "from the dtype: f32 1e-4, bf16 2e-2, f16 1e-2); integer and i1 "
             "outputs must match exactly"),
    cl::cat(runCategory));
static cl::opt<int64_t> indexBound(
    "index-bound",
    cl::desc("Random integer inputs lie in [0, N) when neither a "
             "fuse.index_bound attribute nor an index use bounds them"),
    cl::cat(runCategory));
static cl::opt<bool> allowNan(
    "allow-nan", cl::init(false),
    cl::desc("Run even if an input holds NaN (else that is an error)"),
    cl::cat(runCategory));
static cl::opt<bool> allowInf(
    "allow-inf", cl::init(false),
    cl::desc("Run even if an input holds +Inf or -Inf (else that is an "
             "error), e.g. an additive attention mask"),
    cl::cat(runCategory));
static cl::opt<std::string> maxMemory(
    "max-memory",
    cl::desc("Refuse, before making or reading any input, a run whose host "
             "memory (on the CPU, or with --check, an upper bound on what the "
             "reference interpreter holds: every argument and every op's "
             "result; else the inputs and outputs) exceeds this many bytes "
             "(K, M, G, T: powers of 1024, e.g. 16G); default: this "
             "machine's memory"),
    cl::value_desc("size"), cl::cat(runCategory));
static cl::opt<std::string> checkPipeline(
    "check-pipeline",
    cl::desc("Also run the graph after this pass pipeline (e.g. "
             "'canonicalize,cse') on the same inputs and compare the outputs "
             "within dtype tolerances; exit 1 if any differs (--device=cpu)"),
    cl::cat(runCategory));

static cl::OptionCategory cudaCategory("fuse-run --device=cuda options");
static cl::opt<bool> check(
    "check", cl::init(false),
    cl::desc("Compare every GPU output with the CPU reference interpreter's "
             "(tolerance from the compiled graph's dtypes); exit 1 on a mismatch"),
    cl::cat(cudaCategory));
static cl::opt<int> iterations(
    "iters", cl::init(20),
    cl::desc("Timed steps (median reported, after 3 warm-up steps); 0 skips timing"),
    cl::cat(cudaCategory));
static cl::opt<bool> noCudaGraph(
    "no-cuda-graph", cl::init(false),
    cl::desc("Launch every kernel each step instead of replaying one CUDA Graph"),
    cl::cat(cudaCategory));
static cl::opt<std::string> pipeline(
    "pipeline", cl::init("fuse-pipeline"),
    cl::desc("Pass pipeline applied before code generation (skipped for a "
             "graph that is planned already)"),
    cl::cat(cudaCategory));
static cl::opt<std::string> cacheDir(
    "cache-dir",
    cl::desc("Cubin cache directory, created with mode 0700 (default "
             "$FUSE_CACHE_DIR, else $XDG_CACHE_HOME/fuse, else ~/.cache/fuse)"),
    cl::cat(cudaCategory));
static cl::opt<bool> noCache("no-cache", cl::init(false),
                             cl::desc("Compile every kernel, read and write no cache"),
                             cl::cat(cudaCategory));
static cl::opt<bool> profile(
    "profile", cl::init(false),
    cl::desc("Profile every kernel and GEMM of the step: median time, SM "
             "efficiency, occupancy and DRAM bytes (CUPTI), roofline "
             "fractions, bound verdict, and the step's MFU"),
    cl::cat(cudaCategory));
static cl::opt<std::string> profileJson(
    "profile-json", cl::desc("Write the profile (every figure) as JSON to this "
                             "file (implies --profile)"),
    cl::cat(cudaCategory));
static cl::opt<std::string> tracePath(
    "trace", cl::desc("Write the profile as a Chrome trace (opens in Perfetto) "
                      "to this file (implies --profile)"),
    cl::cat(cudaCategory));
static cl::opt<bool> calibrate(
    "calibrate", cl::init(false),
    cl::desc("Measure this device's ceilings (1 GiB copy, bf16 8192^3 "
             "cuBLASLt GEMM) and cache them for later profiles"),
    cl::cat(cudaCategory));
static cl::opt<double> peakTflops(
    "peak-tflops", cl::init(0),
    cl::desc("Dense bf16 peak (TFLOP/s) for MFU, instead of the datasheet "
             "table's (needed for a device the table does not know)"),
    cl::cat(cudaCategory));
static cl::opt<bool> noCounters(
    "no-counters", cl::init(false),
    cl::desc("Profile without CUPTI counters (estimates, labelled so)"),
    cl::cat(cudaCategory));
static cl::opt<std::string> saveExecutable(
    "save-executable",
    cl::desc("Also write the compiled executable to this file"),
    cl::cat(cudaCategory));

namespace {

/// Runs `func` and times it; prints nothing on success.
FailureOr<std::vector<HostTensor>> runTimed(func::FuncOp func,
                                            ArrayRef<HostTensor> inputs,
                                            double &milliseconds) {
  auto start = std::chrono::steady_clock::now();
  FailureOr<std::vector<HostTensor>> outputs = interpret(func, inputs);
  milliseconds = std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - start)
                     .count();
  return outputs;
}

LogicalResult run(MLIRContext &context, llvm::SourceMgr &sourceMgr) {
  if (device != "cpu" && device != "cuda")
    return reportError("--device=" + device + " is not a device: use cpu or cuda");
#ifndef FUSE_ENABLE_CUDA
  if (device == "cuda")
    return reportError("--device=cuda is not available: this build has no CUDA "
                       "toolkit (configure with CUDAToolkit_ROOT)");
#endif
  if (device == "cpu" && (check || noCudaGraph || iterations.getNumOccurrences()))
    return reportError("--check, --iters and --no-cuda-graph apply to "
                       "--device=cuda (use --expected or --check-pipeline on the CPU)");
  if (device == "cuda" && (!expectedPath.empty() || checkPipeline.getNumOccurrences()))
    return reportError("--expected and --check-pipeline apply to --device=cpu "
                       "(on the GPU, --check compares every output with the "
                       "reference interpreter)");
  std::optional<int64_t> memoryLimit;
  if (maxMemory.getNumOccurrences()) {
    memoryLimit = ::fuse::parseHumanBytes(maxMemory);
    if (!memoryLimit)
      return reportError("--max-memory=" + maxMemory +
                         " is not a size: give bytes, or a whole number with "
                         "K, M, G or T (powers of 1024), e.g. 512M or 16G");
  }

  ::fuse::driver::CompileOptions compileOptions =
      graphOptions(graphPath, entry, pipeline);
  ::fuse::driver::Compilation compilation;
  if (failed(loadGraph(context, sourceMgr, graphPath, compileOptions,
                       compilation)))
    return failure();
  ModuleOp module = *compilation.module;
  func::FuncOp func = compilation.entry;

  std::optional<int64_t> fallbackBound;
  if (indexBound.getNumOccurrences()) {
    if (indexBound <= 0)
      return reportError("--index-bound must be positive, got " +
                         std::to_string(indexBound));
    fallbackBound = indexBound;
  }
  std::vector<ArgumentInfo> arguments = describeArguments(func, fallbackBound);
  if (failed(checkUniqueNames(func, arguments)))
    return failure();
  // Before anything is allocated: what the run will hold on the host.
  bool interprets = device == "cpu" || check;
  if (failed(checkHostMemory(func, interprets, !expectedPath.empty(),
                             memoryLimit)))
    return failure();

  std::optional<double> expectedTolerance;
  if (tolerance.getNumOccurrences()) {
    if (expectedPath.empty())
      return reportError("--tolerance needs --expected (it sets the tolerance "
                         "of the comparison with the expected arrays)");
    if (!(tolerance >= 0) || std::isinf(tolerance)) {
      std::string value;
      llvm::raw_string_ostream(value) << llvm::format("%g", tolerance.getValue());
      return reportError("--tolerance must be a finite number >= 0, got " + value);
    }
    expectedTolerance = tolerance;
  }
  // Read the reference arrays before running: a bad file fails at once.
  std::vector<HostTensor> expected;
  if (!expectedPath.empty()) {
    FailureOr<std::vector<HostTensor>> loaded = loadExpected(expectedPath, func);
    if (failed(loaded))
      return failure();
    expected = std::move(*loaded);
  }

  std::vector<HostTensor> inputs;
  if (!inputsPath.empty()) {
    FailureOr<std::vector<HostTensor>> loaded = loadInputs(inputsPath, arguments);
    if (failed(loaded))
      return failure();
    inputs = std::move(*loaded);
  } else {
    // Random inputs are made on the host, on either device: an argument
    // larger than this machine's memory is an error here, not an abort in
    // the allocator.
    for (auto [index, argument] : llvm::enumerate(arguments))
      if (std::string problem = hostTensorProblem(argument.type); !problem.empty())
        return reportError("cannot make a random input '" + argument.name +
                           "' (argument #" + std::to_string(index) + "): " +
                           problem);
    inputs = randomInputs(arguments, seed);
  }
  if (failed(checkFinite(inputs, arguments, allowNan, allowInf)))
    return failure();

#ifdef FUSE_ENABLE_CUDA
  if (device == "cuda") {
    CudaRunOptions options;
    options.check = check;
    options.iterations = iterations;
    options.useCudaGraph = !noCudaGraph;
    options.useCache = !noCache;
    options.cacheDir = cacheDir;
    options.saveExecutable = saveExecutable;
    options.dumpOutputs = outputsPath;
    options.profile = profile || !profileJson.empty() || !tracePath.empty();
    options.profileJson = profileJson;
    options.tracePath = tracePath;
    options.calibrate = calibrate;
    options.peakTflops = peakTflops;
    options.counters = !noCounters;
    return runOnCuda(compilation, compileOptions, inputs, options);
  }
#endif

  double milliseconds = 0;
  FailureOr<std::vector<HostTensor>> outputs = runTimed(func, inputs, milliseconds);
  if (failed(outputs))
    return failure();

  printSummary(llvm::outs(), func, arguments, inputs, inputsPath.empty(),
               seed, *outputs, milliseconds);
  if (!outputsPath.empty() &&
      failed(saveOutputs(outputsPath, func, *outputs)))
    return failure();

  // Both comparisons run even if the first fails.
  bool matches = true;
  if (!expectedPath.empty())
    matches &= succeeded(checkExpected(llvm::outs(), expectedPath, func,
                                       *outputs, expected, expectedTolerance));
  if (checkPipeline.getNumOccurrences())
    matches &= succeeded(checkAgainstPipeline(context, module, func,
                                              checkPipeline, inputs, *outputs));
  return success(matches);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  ::fuse::driver::registerPipelinePasses();
  mlir::fuse::test::registerTestPasses();
  cl::HideUnrelatedOptions({&runCategory, &cudaCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "fuse-run: run a fuse graph on the CPU reference interpreter or, "
      "compiled, on the GPU\n");

  DialectRegistry registry;
  ::fuse::driver::registerGraphDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics print with file:line:col; errors are failures below.
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  return succeeded(run(context, sourceMgr)) ? 0 : 1;
}
