//===- Executor.cpp - Load and run an Executable on the GPU ---------------===//
//
// create(): device and arch check, validation, memory (arena, workspace,
// constants, cuBLASLt's workspace), kernels (ModuleCompiler, KernelLoader),
// GEMM descriptors and algorithms (GemmRunner). run(): the steps in order,
// directly or through a captured CUDA Graph (CudaGraph.h).
//
// Graph mode runs the very first step eagerly. That run loads every kernel
// (CUDA loads modules lazily, on first launch) and cuBLASLt's kernels outside
// any capture, and reports a bad launch with the step that made it; later
// runs capture once per pointer set and replay.
//
// Launches with TMA tensor maps get them encoded (TensorMapEncoder.h) from
// the pointers of the run being enqueued, every time: a captured graph holds
// the maps of the pointers it was captured with, and a new pointer set is
// captured anew, so its kernel nodes get fresh maps as they get fresh
// pointer arguments.
//
// A run of launches that change nothing unless a guard term holds (an
// optimizer's update on a micro-batch that only accumulates) is captured
// into a CUDA graph conditional node behind the fuse_graph_guard kernel
// (GraphGuard.h): on calls where no term holds, the replay launches none of
// them. Only in this executor's own graphs (not in a caller's capture, nor
// with step events or signals, whose nodes a conditional body cannot hold);
// FUSE_GRAPH_CONDITIONALS=0 turns it off.
//
// FUSE_SYNC_STEPS=1 in the environment turns graphs off and synchronizes
// after every step, so an asynchronous fault (an illegal address in a kernel)
// is reported with the step that caused it.
//
// An Executor is not thread-safe: one run at a time (GEMM descriptors are
// shared between steps and updated per call).
//
//===----------------------------------------------------------------------===//

#include "fuse/Runtime/Executor.h"
#include "fuse/Runtime/ScratchMemory.h"

#include "CudaError.h"
#include "CudaGraph.h"
#include "StepSignals.h"
#include "GemmRunner.h"
#include "KernelLoader.h"
#include "ModuleCompiler.h"
#include "TensorMapEncoder.h"

#include "fuse/Runtime/ExecutableIO.h"
#include "fuse/Runtime/GraphGuard.h"
#include "fuse/Support/ArenaPacking.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <optional>

namespace fuse::runtime {

using detail::cudaCheck;

namespace {

/// Constants are packed into one allocation at this alignment.
constexpr int64_t kConstantAlignment = 256;
/// Captured graphs kept per executable, one per set of pointers: enough
/// for a graph that is one layer of a 32-layer model, run once per layer.
constexpr size_t kCapturedGraphs = 32;

/// "sm_90a" -> {9, 0}; "sm_100a" -> {10, 0}; nullopt if not "sm_<digits>".
std::optional<std::pair<int, int>> parseArch(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0)
    return std::nullopt;
  size_t end = 3;
  while (end < arch.size() && std::isdigit(static_cast<unsigned char>(arch[end])))
    ++end;
  std::string digits = arch.substr(3, end - 3);
  if (digits.size() < 2)
    return std::nullopt;
  return std::make_pair(std::atoi(digits.substr(0, digits.size() - 1).c_str()),
                        digits.back() - '0');
}

std::string tensorNames(const std::vector<TensorSpec> &specs) {
  std::string names;
  for (const TensorSpec &spec : specs)
    names += (names.empty() ? "" : ", ") + spec.name;
  return names;
}

/// Destroys CUDA events on every way out of medianStepMilliseconds.
struct EventList {
  std::vector<cudaEvent_t> events;
  ~EventList() {
    for (cudaEvent_t event : events)
      cudaEventDestroy(event);
  }
};

} // namespace

class Executor::Impl {
public:
  ~Impl() {
    // Work of ours may still be queued on the caller's stream; the arena and
    // the kernels must outlive it.
    cudaDeviceSynchronize();
    if (captureStream)
      cudaStreamDestroy(captureStream);
    if (bodyStream)
      cudaStreamDestroy(bodyStream);
  }

  Status initialize(const DeviceInfo &device);
  Status checkBindings(const std::vector<void *> &inputs,
                       const std::vector<void *> &outputs) const;
  void *resolve(const BufferRef &ref, const std::vector<void *> &inputs,
                const std::vector<void *> &outputs) const;
  /// A GEMM's operands resolved (C and the bias only where it has them).
  detail::GemmPointers gemmPointers(const GemmStep &gemm,
                                    const std::vector<void *> &inputs,
                                    const std::vector<void *> &outputs) const;
  /// With `stepEvents` (one more than there are steps), records event i
  /// before step i and the last one after the step. With `before`/`after`,
  /// calls them around step i (the profiler's hooks).
  /// With `conditionals`, the guarded runs go into conditional nodes (the
  /// stream must be capturing into this executor's own graph).
  Status enqueueSteps(cudaStream_t stream, const std::vector<void *> &inputs,
                      const std::vector<void *> &outputs,
                      const std::vector<cudaEvent_t> *stepEvents = nullptr,
                      const std::function<Status(size_t)> *before = nullptr,
                      const std::function<Status(size_t)> *after = nullptr,
                      bool conditionals = false);
  /// Enqueues launch step `i` (its pointers resolved, its maps encoded).
  Status enqueueLaunch(size_t i, cudaStream_t stream,
                       const std::vector<void *> &inputs,
                       const std::vector<void *> &outputs);
  /// Captures `run` as the guard kernel and a conditional node whose body
  /// holds its launches, into the graph `stream` is capturing.
  Status enqueueGuardedRun(const GuardedRun &run, cudaStream_t stream,
                           const std::vector<void *> &inputs,
                           const std::vector<void *> &outputs);
  Status run(const std::vector<void *> &inputs,
             const std::vector<void *> &outputs, cudaStream_t stream);
  /// Runs `body` (what enqueues the steps on `stream`) where the scratch
  /// memory, if shared, is this executor's alone (ScratchMemory::use).
  Status usingScratch(cudaStream_t stream,
                      const std::function<Status(bool captured)> &body);
  /// run() after the checks: plain launches (the first run, or into the
  /// caller's capture), else the captured graph for these pointers.
  Status enqueueOrReplay(const std::vector<void *> &inputs,
                         const std::vector<void *> &outputs,
                         cudaStream_t stream, bool captured);
  /// "step 12 (launch fuse_k3: loop: add, mul (model.py:34))".
  std::string describeStep(size_t index) const;
  std::string name() const { return "@" + exe.entry; }
  void *arenaBase() const {
    if (options.arenaPerRun)
      return runArena;
    return options.scratch ? options.scratch->arena() : arena.data();
  }
  void *workspaceBase() const {
    return options.scratch ? options.scratch->workspace() : workspace.data();
  }

  Executable exe;
  ExecutorOptions options;
  CompileReport report;
  int device = 0;
  int multiprocessors = 0; // for the grids of persistent launches
  bool syncSteps = false;
  bool warmedUp = false;
  DeviceBuffer arena, workspace, constants, cublasWorkspace;
  /// The caller's arena (ExecutorOptions::arenaPerRun), set by setArena.
  void *runArena = nullptr;
  std::vector<void *> constantPointers;
  std::unique_ptr<detail::LoadedKernels> kernels;
  std::unique_ptr<detail::GemmRunner> gemms;
  cudaStream_t captureStream = nullptr;
  /// Guarded runs (empty where conditional nodes are off), the guard
  /// kernel, and the stream that captures a conditional node's body.
  std::vector<GuardedRun> guardedRuns;
  int64_t guardKernel = -1;
  cudaStream_t bodyStream = nullptr;
  // Launch parameters, reused from launch to launch. CUtensorMap is
  // alignas(64): the vector's storage is too (C++17 aligned new), as
  // cuTensorMapEncodeTiled requires. cudaLaunchKernel copies the
  // parameters, so these may be reused by the next launch.
  std::vector<void *> launchValues, launchParams;
  std::vector<CUtensorMap> launchMaps;
  // Declared before the graphs, which hold record nodes of its events.
  detail::StepSignals signals;
  detail::StepGraphCache graphs{kCapturedGraphs};
};

Status Executor::Impl::initialize(const DeviceInfo &info) {
  device = info.ordinal;
  multiprocessors = info.multiprocessors;
  const char *sync = std::getenv("FUSE_SYNC_STEPS");
  syncSteps = sync && *sync && std::string(sync) != "0";

  // Memory first: running out is reported before a long compile.
  auto allocate = [&](DeviceBuffer &buffer, int64_t bytes,
                      const std::string &what) -> Status {
    StatusOr<DeviceBuffer> allocated =
        DeviceBuffer::allocate(bytes, what + " of " + name());
    if (!allocated.ok())
      return allocated.status();
    buffer = std::move(*allocated);
    return Status::success();
  };
  auto inArena = [](const TensorSpec &spec) { return spec.arenaOffset >= 0; };
  if (!options.arenaPerRun &&
      (std::any_of(exe.inputs.begin(), exe.inputs.end(), inArena) ||
       std::any_of(exe.outputs.begin(), exe.outputs.end(), inArena)))
    return Status::failure(
        name() + " finds inputs or leaves outputs in its arena "
                 "(fuse.arena_offset): its caller must give each run the "
                 "arena (an arena per run; the C API's "
                 "FuseSessionOptions.arena_per_run)");
  int64_t ownArena = options.arenaPerRun ? 0 : exe.arenaBytes;
  if (options.scratch) {
    if (options.scratch->device() != device)
      return Status::failure(name() + ": its shared scratch memory is on device " +
                             std::to_string(options.scratch->device()) +
                             ", the executor on device " + std::to_string(device));
    FUSE_RETURN_IF_ERROR(
        options.scratch->reserve(ownArena, exe.workspaceBytes, name()));
  } else {
    FUSE_RETURN_IF_ERROR(allocate(arena, ownArena, "arena"));
    FUSE_RETURN_IF_ERROR(allocate(workspace, exe.workspaceBytes, "workspace"));
  }
  std::vector<int64_t> constantOffsets;
  int64_t constantBytes = 0;
  for (const ConstantData &constant : exe.constants) {
    constantOffsets.push_back(constantBytes);
    constantBytes += (constant.spec.bytes() + kConstantAlignment - 1) /
                     kConstantAlignment * kConstantAlignment;
  }
  FUSE_RETURN_IF_ERROR(allocate(constants, constantBytes, "constants"));
  if (!exe.gemms.empty() && !options.scratch)
    FUSE_RETURN_IF_ERROR(allocate(cublasWorkspace, kCublasWorkspaceBytes,
                                  "cuBLASLt workspace"));
  for (size_t i = 0; i < exe.constants.size(); ++i) {
    char *pointer = static_cast<char *>(constants.data()) + constantOffsets[i];
    constantPointers.push_back(pointer);
    const ConstantData &constant = exe.constants[i];
    if (constant.bytes.empty())
      continue;
    FUSE_RETURN_IF_ERROR(cudaCheck(
        cudaMemcpy(pointer, constant.bytes.data(), constant.bytes.size(),
                   cudaMemcpyHostToDevice),
        "uploading constant " + std::to_string(i) + " (" +
            constant.spec.name + ") of " + name()));
  }

  auto start = std::chrono::steady_clock::now();
  StatusOr<std::vector<detail::ModuleBinary>> modules =
      detail::compileModules(exe, options, report);
  if (!modules.ok())
    return modules.status();
  StatusOr<std::unique_ptr<detail::LoadedKernels>> loaded =
      detail::LoadedKernels::load(exe, options, *modules, device);
  if (!loaded.ok())
    return loaded.status();
  kernels = std::move(*loaded);
  report.seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - start)
                       .count();

  if (!exe.gemms.empty()) {
    // Caller memory is not bound yet: assume cudaMalloc's alignment for it
    // (a run with less aligned pointers queries the heuristic again).
    void *aligned = reinterpret_cast<void *>(uintptr_t(1) << 40);
    std::vector<void *> fakeInputs(exe.inputs.size(), aligned);
    std::vector<void *> fakeOutputs(exe.outputs.size(), aligned);
    std::vector<detail::GemmPointers> assumed;
    if (options.arenaPerRun) // nor is the arena
      runArena = aligned;
    for (const GemmStep &gemm : exe.gemms)
      assumed.push_back(gemmPointers(gemm, fakeInputs, fakeOutputs));
    if (options.arenaPerRun)
      runArena = nullptr;
    void *gemmWorkspace = options.scratch ? options.scratch->cublasWorkspace()
                                          : cublasWorkspace.data();
    int64_t gemmWorkspaceBytes = options.scratch
                                     ? options.scratch->cublasBytes()
                                     : kCublasWorkspaceBytes;
    StatusOr<std::unique_ptr<detail::GemmRunner>> runner =
        detail::GemmRunner::create(exe, gemmWorkspace, gemmWorkspaceBytes,
                                   assumed);
    if (!runner.ok())
      return Status::failure(name() + ": " + runner.status().message());
    gemms = std::move(*runner);
  }

  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaStreamCreateWithFlags(&captureStream, cudaStreamNonBlocking),
      "creating the capture stream"));
  // Conditional nodes captured from streams need CUDA 12.4's driver.
  const char *conditionals = std::getenv("FUSE_GRAPH_CONDITIONALS");
  int driver = 0;
  cudaDriverGetVersion(&driver);
  for (size_t k = 0; k < exe.kernels.size(); ++k)
    if (exe.kernels[k].name == kGraphGuardKernel)
      guardKernel = static_cast<int64_t>(k);
  if (guardKernel >= 0 && driver >= 12040 &&
      !(conditionals && std::string(conditionals) == "0")) {
    guardedRuns = findGuardedRuns(exe);
    if (!guardedRuns.empty()) {
      FUSE_RETURN_IF_ERROR(cudaCheck(
          cudaStreamCreateWithFlags(&bodyStream, cudaStreamNonBlocking),
          "creating the conditional body stream"));
      // The guard runs only in captures: load it now, as the first run
      // loads the others (a kernel loads lazily, on first use).
      cudaFuncAttributes attributes;
      FUSE_RETURN_IF_ERROR(cudaCheck(
          cudaFuncGetAttributes(&attributes, reinterpret_cast<const void *>(
                                                 kernels->kernel(guardKernel))),
          "loading " + std::string(kGraphGuardKernel) + " of " + name()));
    }
  }
  // The constants' uploads are complete before create() returns.
  return cudaCheck(cudaDeviceSynchronize(), "loading " + name());
}

void *Executor::Impl::resolve(const BufferRef &ref,
                              const std::vector<void *> &inputs,
                              const std::vector<void *> &outputs) const {
  char *base = nullptr;
  switch (ref.kind) {
  case BufferRef::Kind::Arena: base = static_cast<char *>(arenaBase()); break;
  case BufferRef::Kind::Workspace:
    base = static_cast<char *>(workspaceBase());
    break;
  case BufferRef::Kind::Input: base = static_cast<char *>(inputs[ref.index]); break;
  case BufferRef::Kind::Output:
    base = static_cast<char *>(outputs[ref.index]);
    break;
  case BufferRef::Kind::Constant:
    base = static_cast<char *>(constantPointers[ref.index]);
    break;
  }
  return base ? base + ref.offset : nullptr;
}

detail::GemmPointers
Executor::Impl::gemmPointers(const GemmStep &gemm,
                             const std::vector<void *> &inputs,
                             const std::vector<void *> &outputs) const {
  detail::GemmPointers pointers;
  pointers.a = resolve(gemm.a, inputs, outputs);
  pointers.b = resolve(gemm.b, inputs, outputs);
  pointers.d = resolve(gemm.d, inputs, outputs);
  if (gemm.hasC())
    pointers.c = resolve(gemm.c, inputs, outputs);
  if (gemm.hasBias())
    pointers.bias = resolve(gemm.bias, inputs, outputs);
  return pointers;
}

Status Executor::Impl::checkBindings(const std::vector<void *> &inputs,
                                     const std::vector<void *> &outputs) const {
  auto check = [&](const char *kind, const std::vector<TensorSpec> &specs,
                   const std::vector<void *> &pointers) -> Status {
    if (pointers.size() != specs.size())
      return Status::failure(
          "running " + name() + ": expected " + std::to_string(specs.size()) +
          " " + kind + "s (" + tensorNames(specs) + "), got " +
          std::to_string(pointers.size()));
    for (size_t i = 0; i < specs.size(); ++i)
      if (!pointers[i] && specs[i].bytes() > 0 && specs[i].arenaOffset < 0)
        return Status::failure("running " + name() + ": " + kind + " " +
                               std::to_string(i) + " (" + specs[i].name +
                               ", " +
                               typeString(specs[i].dtype, specs[i].shape) +
                               ") is a null pointer");
    return Status::success();
  };
  FUSE_RETURN_IF_ERROR(check("input", exe.inputs, inputs));
  FUSE_RETURN_IF_ERROR(check("output", exe.outputs, outputs));
  if (options.arenaPerRun && !runArena && exe.arenaBytes > 0)
    return Status::failure("running " + name() +
                           ": no arena given (it takes one per run: setArena)");
  return Status::success();
}

std::string Executor::Impl::describeStep(size_t index) const {
  const Step &step = exe.steps[index];
  std::string text = "step " + std::to_string(index) + " (" +
                     stepKindName(step.kind);
  if (step.kind == Step::Kind::Launch)
    text += " " + exe.kernels[exe.launches[step.index].kernel].name;
  else
    text += " " + std::to_string(step.index);
  if (!step.label.empty())
    text += ": " + step.label;
  return text + ") of " + name();
}

Status Executor::Impl::enqueueLaunch(size_t i, cudaStream_t stream,
                                     const std::vector<void *> &inputs,
                                     const std::vector<void *> &outputs) {
  const KernelLaunch &launch = exe.launches[exe.steps[i].index];
  std::vector<void *> &values = launchValues, &params = launchParams;
  std::vector<CUtensorMap> &maps = launchMaps;
  // Parameters: the pointers of `args`, then the tensor maps by value.
  size_t pointers = launch.args.size();
  values.resize(pointers);
  maps.resize(launch.tensorMaps.size());
  params.resize(pointers + maps.size());
  for (size_t a = 0; a < pointers; ++a) {
    values[a] = resolve(launch.args[a].ref, inputs, outputs);
    params[a] = &values[a];
  }
  for (size_t m = 0; m < maps.size(); ++m) {
    const TensorMapArg &map = launch.tensorMaps[m];
    Status encoded = detail::encodeTensorMap(
        map, resolve(map.base, inputs, outputs), &maps[m]);
    if (!encoded.ok())
      return Status::failure(
          "launching " + describeStep(i) + ": tensor map " +
          std::to_string(m) + " over " + formatBufferRef(exe, map.base) +
          ": " + encoded.message());
    params[pointers + m] = &maps[m];
  }
  const std::array<uint32_t, 3> shape = launchGrid(launch, multiprocessors);
  dim3 grid(shape[0], shape[1], shape[2]);
  dim3 block(launch.block[0], launch.block[1], launch.block[2]);
  // CUDA 12+ accepts a cudaKernel_t cast to a function pointer here.
  cudaError_t error = cudaLaunchKernel(
      reinterpret_cast<const void *>(kernels->kernel(launch.kernel)), grid,
      block, params.empty() ? nullptr : params.data(), launch.sharedBytes,
      stream);
  if (error == cudaSuccess)
    error = cudaGetLastError();
  return cudaCheck(error, "launching " + describeStep(i));
}

Status Executor::Impl::enqueueGuardedRun(const GuardedRun &run,
                                         cudaStream_t stream,
                                         const std::vector<void *> &inputs,
                                         const std::vector<void *> &outputs) {
  std::string what = "capturing steps " + std::to_string(run.first) + " to " +
                     std::to_string(run.last) + " of " + name() +
                     " as a conditional node: ";
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  cudaGraph_t graph = nullptr;
  const cudaGraphNode_t *dependencies = nullptr;
  size_t count = 0;
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &dependencies,
                               nullptr, &count),
      what + "cudaStreamGetCaptureInfo"));
  if (status != cudaStreamCaptureStatusActive)
    return Status::failure(what + "the stream is not capturing");
  cudaGraphConditionalHandle handle = 0;
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaGraphConditionalHandleCreate(&handle, graph, 0,
                                       cudaGraphCondAssignDefault),
      what + "cudaGraphConditionalHandleCreate"));
  // The guard: whether any launch of the run may change something.
  GraphGuardParams guard{};
  for (const LaunchGuardTerm &term : run.terms)
    if (!addGraphGuardTerm(guard, term, resolve(term.flag, inputs, outputs)))
      return Status::failure(what + "more than " +
                             std::to_string(kGraphGuardMaxTerms) + " terms");
  void *guardArgs[] = {&handle, &guard};
  cudaError_t error = cudaLaunchKernel(
      reinterpret_cast<const void *>(kernels->kernel(guardKernel)), dim3(1),
      dim3(1), guardArgs, 0, stream);
  if (error == cudaSuccess)
    error = cudaGetLastError();
  FUSE_RETURN_IF_ERROR(cudaCheck(error, what + "launching the guard"));
  // The node, after the guard.
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaStreamGetCaptureInfo(stream, &status, nullptr, &graph, &dependencies,
                               nullptr, &count),
      what + "cudaStreamGetCaptureInfo"));
  cudaGraphNodeParams node{};
  node.type = cudaGraphNodeTypeConditional;
  node.conditional.handle = handle;
  node.conditional.type = cudaGraphCondTypeIf;
  node.conditional.size = 1;
  cudaGraphNode_t conditional = nullptr;
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaGraphAddNode(&conditional, graph, dependencies, nullptr, count, &node),
      what + "cudaGraphAddNode"));
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaStreamUpdateCaptureDependencies(stream, &conditional, nullptr, 1,
                                          cudaStreamSetCaptureDependencies),
      what + "cudaStreamUpdateCaptureDependencies"));
  // Its body: the run's launches, captured from a stream of their own.
  FUSE_RETURN_IF_ERROR(cudaCheck(
      cudaStreamBeginCaptureToGraph(bodyStream, node.conditional.phGraph_out[0],
                                    nullptr, nullptr, 0,
                                    cudaStreamCaptureModeThreadLocal),
      what + "cudaStreamBeginCaptureToGraph"));
  Status enqueued = Status::success();
  for (size_t i = run.first; i <= run.last && enqueued.ok(); ++i)
    enqueued = enqueueLaunch(i, bodyStream, inputs, outputs);
  cudaGraph_t body = nullptr;
  cudaError_t ended = cudaStreamEndCapture(bodyStream, &body);
  FUSE_RETURN_IF_ERROR(enqueued);
  return cudaCheck(ended, what + "cudaStreamEndCapture");
}

Status Executor::Impl::enqueueSteps(cudaStream_t stream,
                                    const std::vector<void *> &inputs,
                                    const std::vector<void *> &outputs,
                                    const std::vector<cudaEvent_t> *stepEvents,
                                    const std::function<Status(size_t)> *before,
                                    const std::function<Status(size_t)> *after,
                                    bool conditionals) {
  auto guarded = guardedRuns.begin();
  bool capturing = false;
  if (!signals.empty()) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    FUSE_RETURN_IF_ERROR(cudaCheck(cudaStreamIsCapturing(stream, &status),
                                   "running " + name() + ": cudaStreamIsCapturing"));
    capturing = status != cudaStreamCaptureStatusNone;
    FUSE_RETURN_IF_ERROR(signals.recordAfter(-1, stream, capturing));
  }
  for (size_t i = 0; i < exe.steps.size(); ++i) {
    const Step &step = exe.steps[i];
    while (guarded != guardedRuns.end() && guarded->first < i)
      ++guarded;
    if (conditionals && guarded != guardedRuns.end() && guarded->first == i) {
      FUSE_RETURN_IF_ERROR(enqueueGuardedRun(*guarded, stream, inputs, outputs));
      i = guarded->last;
      continue;
    }
    if (before && *before)
      FUSE_RETURN_IF_ERROR((*before)(i));
    if (stepEvents)
      FUSE_RETURN_IF_ERROR(cudaCheck(cudaEventRecord((*stepEvents)[i], stream),
                                     "timing steps: cudaEventRecord"));
    switch (step.kind) {
    case Step::Kind::Launch:
      FUSE_RETURN_IF_ERROR(enqueueLaunch(i, stream, inputs, outputs));
      break;
    case Step::Kind::Gemm: {
      FUSE_RETURN_IF_ERROR(gemms->run(
          step.index, gemmPointers(exe.gemms[step.index], inputs, outputs),
          stream, describeStep(i)));
      break;
    }
    case Step::Kind::Fill: {
      const FillStep &fill = exe.fills[step.index];
      if (fill.bytes > 0)
        FUSE_RETURN_IF_ERROR(cudaCheck(
            cudaMemsetAsync(resolve(fill.dst, inputs, outputs), 0,
                            (size_t)fill.bytes, stream),
            describeStep(i) + ": cudaMemsetAsync"));
      break;
    }
    case Step::Kind::Copy: {
      const CopyStep &copy = exe.copies[step.index];
      void *dst = resolve(copy.dst, inputs, outputs);
      const void *src = resolve(copy.src, inputs, outputs);
      // A result planned in a donated input's memory is copied to its
      // output; a caller that binds the output to that same memory (an
      // optimizer updating parameters in place) needs no copy.
      if (copy.bytes > 0 && dst != src)
        FUSE_RETURN_IF_ERROR(cudaCheck(
            cudaMemcpyAsync(dst, src, (size_t)copy.bytes,
                            cudaMemcpyDeviceToDevice, stream),
            describeStep(i) + ": cudaMemcpyAsync"));
      break;
    }
    }
    if (syncSteps)
      FUSE_RETURN_IF_ERROR(cudaCheck(cudaStreamSynchronize(stream),
                                     describeStep(i) + " (FUSE_SYNC_STEPS)"));
    if (!signals.empty())
      FUSE_RETURN_IF_ERROR(signals.recordAfter((int64_t)i, stream, capturing));
    if (after && *after)
      FUSE_RETURN_IF_ERROR((*after)(i));
  }
  if (stepEvents)
    FUSE_RETURN_IF_ERROR(cudaCheck(
        cudaEventRecord((*stepEvents)[exe.steps.size()], stream),
        "timing steps: cudaEventRecord"));
  return Status::success();
}

Status Executor::Impl::run(const std::vector<void *> &inputs,
                           const std::vector<void *> &outputs,
                           cudaStream_t stream) {
  FUSE_RETURN_IF_ERROR(checkBindings(inputs, outputs));
  return usingScratch(stream, [&](bool captured) {
    if (!options.useCudaGraph || syncSteps)
      return enqueueSteps(stream, inputs, outputs);
    return enqueueOrReplay(inputs, outputs, stream, captured);
  });
}

Status Executor::Impl::usingScratch(
    cudaStream_t stream, const std::function<Status(bool captured)> &body) {
  // The caller may be capturing `stream` into a graph of its own: our steps
  // then become part of it, as plain nodes.
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  FUSE_RETURN_IF_ERROR(cudaCheck(cudaStreamIsCapturing(stream, &capturing),
                                 "running " + name() +
                                     ": cudaStreamIsCapturing"));
  bool captured = capturing != cudaStreamCaptureStatusNone;
  if (!options.scratch)
    return body(captured);
  return options.scratch->use(stream, captured, [&] { return body(captured); });
}

Status Executor::Impl::enqueueOrReplay(const std::vector<void *> &inputs,
                                       const std::vector<void *> &outputs,
                                       cudaStream_t stream, bool captured) {
  if (captured || !warmedUp) {
    Status status = enqueueSteps(stream, inputs, outputs);
    warmedUp = warmedUp || status.ok();
    return status;
  }
  // A graph bakes in the arena and workspace too, which move when shared
  // scratch memory grows: they are part of the pointers a graph is for.
  std::vector<void *> bound = outputs;
  if (options.scratch || options.arenaPerRun)
    bound.insert(bound.end(), {arenaBase(), workspaceBase()});
  StatusOr<detail::StepGraph *> graph = graphs.get(
      captureStream,
      [&](cudaStream_t capture) {
        return enqueueSteps(capture, inputs, outputs, nullptr, nullptr,
                            nullptr, signals.empty());
      },
      inputs, bound);
  if (!graph.ok())
    return graph.status();
  return (*graph)->launch(stream, "running " + name());
}

//===------------------------------- Executor -----------------------------===//

Executor::Executor(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executor::~Executor() = default;

StatusOr<std::unique_ptr<Executor>>
Executor::create(const Executable &executable, const ExecutorOptions &options) {
  StatusOr<DeviceInfo> device = queryDevice();
  if (!device.ok())
    return device.status();
  std::string name = "@" + executable.entry;
  std::optional<std::pair<int, int>> arch = parseArch(executable.arch);
  if (!arch)
    return Status::failure("executable " + name + " targets '" +
                           executable.arch +
                           "', which is not an architecture such as sm_90a");
  if (arch->first != device->computeMajor ||
      arch->second != device->computeMinor)
    return Status::failure(
        "executable " + name + " was compiled for " + executable.arch +
        " (compute capability " + std::to_string(arch->first) + "." +
        std::to_string(arch->second) + "), but device " +
        std::to_string(device->ordinal) + " (" + device->name + ") is " +
        device->arch() + " (compute capability " +
        std::to_string(device->computeMajor) + "." +
        std::to_string(device->computeMinor) + "): compile it for " +
        device->arch());
  FUSE_RETURN_IF_ERROR(validateExecutable(executable, "executable " + name));

  auto impl = std::make_unique<Impl>();
  impl->exe = executable;
  impl->options = options;
  FUSE_RETURN_IF_ERROR(impl->initialize(*device));
  return std::unique_ptr<Executor>(new Executor(std::move(impl)));
}

Status Executor::run(const std::vector<void *> &inputs,
                     const std::vector<void *> &outputs, void *stream) {
  return impl_->run(inputs, outputs, static_cast<cudaStream_t>(stream));
}

Status Executor::setArena(void *arena, int64_t bytes) {
  const std::string what = "giving " + impl_->name() + " an arena";
  if (!impl_->options.arenaPerRun)
    return Status::failure(what + ": it has its own (arenaPerRun is off)");
  if (bytes < impl_->exe.arenaBytes || (!arena && impl_->exe.arenaBytes > 0))
    return Status::failure(what + ": " + std::to_string(bytes) +
                           " bytes at " +
                           (arena ? "a device address" : "a null pointer") +
                           ", but it needs " +
                           std::to_string(impl_->exe.arenaBytes));
  if (reinterpret_cast<uintptr_t>(arena) % kArenaAlignment != 0)
    return Status::failure(what + ": the address is not a multiple of " +
                           std::to_string(kArenaAlignment));
  impl_->runArena = arena;
  return Status::success();
}

Status Executor::synchronize(void *stream) {
  return cudaCheck(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)),
                   "running " + impl_->name() +
                       " (an asynchronous error from one of its steps; set "
                       "FUSE_SYNC_STEPS=1 to find which)");
}

StatusOr<std::vector<double>>
Executor::stepMilliseconds(const std::vector<void *> &inputs,
                           const std::vector<void *> &outputs, void *stream) {
  FUSE_RETURN_IF_ERROR(impl_->checkBindings(inputs, outputs));
  auto cudaStream = static_cast<cudaStream_t>(stream);
  EventList list;
  for (size_t i = 0; i <= impl_->exe.steps.size(); ++i) {
    cudaEvent_t event = nullptr;
    FUSE_RETURN_IF_ERROR(
        cudaCheck(cudaEventCreate(&event), "timing steps: cudaEventCreate"));
    list.events.push_back(event);
  }
  FUSE_RETURN_IF_ERROR(impl_->usingScratch(cudaStream, [&](bool) {
    return impl_->enqueueSteps(cudaStream, inputs, outputs, &list.events);
  }));
  FUSE_RETURN_IF_ERROR(synchronize(stream));
  std::vector<double> times;
  for (size_t i = 0; i < impl_->exe.steps.size(); ++i) {
    float ms = 0;
    FUSE_RETURN_IF_ERROR(cudaCheck(
        cudaEventElapsedTime(&ms, list.events[i], list.events[i + 1]),
        "timing steps: cudaEventElapsedTime"));
    times.push_back(ms);
  }
  return times;
}

StatusOr<double> Executor::medianStepMilliseconds(
    const std::vector<void *> &inputs, const std::vector<void *> &outputs,
    void *stream, int warmup, int iterations) {
  if (iterations < 1)
    return Status::failure("timing " + impl_->name() +
                           ": iterations must be at least 1");
  for (int i = 0; i < warmup; ++i)
    FUSE_RETURN_IF_ERROR(run(inputs, outputs, stream));
  auto cudaStream = static_cast<cudaStream_t>(stream);
  EventList list;
  for (int i = 0; i < 2 * iterations; ++i) {
    cudaEvent_t event = nullptr;
    FUSE_RETURN_IF_ERROR(
        cudaCheck(cudaEventCreate(&event), "timing: cudaEventCreate"));
    list.events.push_back(event);
  }
  for (int i = 0; i < iterations; ++i) {
    FUSE_RETURN_IF_ERROR(cudaCheck(
        cudaEventRecord(list.events[2 * i], cudaStream), "timing: cudaEventRecord"));
    FUSE_RETURN_IF_ERROR(run(inputs, outputs, stream));
    FUSE_RETURN_IF_ERROR(cudaCheck(cudaEventRecord(list.events[2 * i + 1],
                                                   cudaStream),
                                   "timing: cudaEventRecord"));
  }
  FUSE_RETURN_IF_ERROR(synchronize(stream));
  std::vector<double> times;
  for (int i = 0; i < iterations; ++i) {
    float ms = 0;
    FUSE_RETURN_IF_ERROR(cudaCheck(
        cudaEventElapsedTime(&ms, list.events[2 * i], list.events[2 * i + 1]),
        "timing: cudaEventElapsedTime"));
    times.push_back(ms);
  }
  std::sort(times.begin(), times.end());
  size_t mid = times.size() / 2;
  return times.size() % 2 ? times[mid] : (times[mid - 1] + times[mid]) / 2;
}

Status Executor::runWithStepHooks(const std::vector<void *> &inputs,
                                  const std::vector<void *> &outputs,
                                  void *stream,
                                  const std::function<Status(size_t)> &before,
                                  const std::function<Status(size_t)> &after) {
  FUSE_RETURN_IF_ERROR(impl_->checkBindings(inputs, outputs));
  auto cudaStream = static_cast<cudaStream_t>(stream);
  return impl_->usingScratch(cudaStream, [&](bool) {
    return impl_->enqueueSteps(cudaStream, inputs, outputs, nullptr, &before,
                               &after);
  });
}

void *Executor::kernelHandle(int64_t index) const {
  return reinterpret_cast<void *>(impl_->kernels->kernel(index));
}

const CompileReport &Executor::compileReport() const { return impl_->report; }

int64_t Executor::graphCaptures() const { return impl_->graphs.captures(); }
size_t Executor::conditionalRuns() const {
  return impl_->signals.empty() ? impl_->guardedRuns.size() : 0;
}
size_t Executor::cachedGraphs() const { return impl_->graphs.size(); }

Status Executor::setSignals(const std::vector<int64_t> &afterSteps) {
  FUSE_RETURN_IF_ERROR(
      impl_->signals.reset(afterSteps, impl_->exe.steps.size(), impl_->name()));
  // The captured graphs have the old signals' nodes (or none).
  impl_->graphs.reset();
  return Status::success();
}

Status Executor::waitSignal(size_t signal, void *stream) {
  return impl_->signals.wait(signal, static_cast<cudaStream_t>(stream),
                             impl_->name());
}

size_t Executor::numSignals() const { return impl_->signals.size(); }

int64_t Executor::deviceBytes() const {
  return impl_->arena.bytes() + impl_->workspace.bytes() +
         impl_->constants.bytes() + impl_->cublasWorkspace.bytes();
}
const Executable &Executor::executable() const { return impl_->exe; }

} // namespace fuse::runtime
