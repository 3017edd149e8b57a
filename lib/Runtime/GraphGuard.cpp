//===- GraphGuard.cpp - The kernel that decides a conditional node --------===//

#include "fuse/Runtime/GraphGuard.h"

#include <algorithm>

namespace fuse::runtime {

Kernel graphGuardKernel() {
  // cudaGraphSetConditional is a device runtime builtin that NVRTC knows by
  // its declaration (no relocatable code, no cudadevrt). One thread: the
  // terms are a handful of scalars.
  static const char *const source = R"(// fuse_graph_guard: sets a CUDA graph conditional node to whether any term
// holds (fuse/Runtime/GraphGuard.h has the host side of the parameters).
extern "C" __device__ void cudaGraphSetConditional(unsigned long long handle, unsigned int value);
struct FuseGraphGuardParams {
  const void *flag[32];
  double constant[32];
  unsigned char dtype[32];
  unsigned char compare[32];
  unsigned char negate[32];
  int count;
};
extern "C" __global__ void __launch_bounds__(1) fuse_graph_guard(unsigned long long handle,
                                                               const __grid_constant__ FuseGraphGuardParams params) {
  unsigned int run = 0;
  for (int i = 0; i < params.count; ++i) {
    double value;
    switch (params.dtype[i]) {
    case 0: value = *(const bool *)params.flag[i] ? 1.0 : 0.0; break;
    case 1: value = (double)*(const int *)params.flag[i]; break;
    case 2: value = (double)*(const long long *)params.flag[i]; break;
    default: value = (double)*(const float *)params.flag[i]; break;
    }
    double c = params.constant[i];
    bool holds;
    switch (params.compare[i]) {
    case 0: holds = value == c; break;
    case 1: holds = value != c; break;
    case 2: holds = value < c; break;
    case 3: holds = value <= c; break;
    case 4: holds = value > c; break;
    default: holds = value >= c; break;
    }
    if (holds != (params.negate[i] != 0))
      run = 1;
  }
  cudaGraphSetConditional(handle, run);
}
)";
  Kernel kernel;
  kernel.name = kGraphGuardKernel;
  kernel.body = source;
  return kernel;
}

bool addGraphGuardTerm(GraphGuardParams &params, const LaunchGuardTerm &term,
                       const void *flag) {
  for (int32_t i = 0; i < params.count; ++i)
    if (params.flag[i] == flag && params.constant[i] == term.constant &&
        params.compare[i] == static_cast<uint8_t>(term.compare) &&
        params.negate[i] == term.negate)
      return true; // the same term of another launch
  if (params.count >= kGraphGuardMaxTerms)
    return false;
  int32_t i = params.count++;
  params.flag[i] = flag;
  params.constant[i] = term.constant;
  params.dtype[i] = term.dtype == DType::I1    ? 0
                    : term.dtype == DType::I32 ? 1
                    : term.dtype == DType::I64 ? 2
                                               : 3;
  params.compare[i] = static_cast<uint8_t>(term.compare);
  params.negate[i] = term.negate;
  return true;
}

namespace {

/// Whether `arg`, written, may touch the flag of `term`.
bool mayWrite(const KernelArg &arg, const LaunchGuardTerm &term) {
  return arg.written && arg.ref.kind == term.flag.kind &&
         arg.ref.index == term.flag.index &&
         term.flag.offset + (int64_t)dtypeSize(term.dtype) > arg.ref.offset &&
         term.flag.offset < arg.ref.offset + arg.bytes;
}

bool writesAny(const KernelLaunch &launch,
               const std::vector<LaunchGuardTerm> &terms) {
  for (const KernelArg &arg : launch.args)
    for (const LaunchGuardTerm &term : terms)
      if (mayWrite(arg, term))
        return true;
  return false;
}

} // namespace

std::vector<GuardedRun> findGuardedRuns(const Executable &exe,
                                        size_t minLaunches) {
  std::vector<GuardedRun> runs;
  GuardedRun run;
  size_t launches = 0;
  auto close = [&] {
    if (launches >= std::max<size_t>(minLaunches, 1))
      runs.push_back(run);
    run = GuardedRun();
    launches = 0;
  };
  for (size_t i = 0; i < exe.steps.size(); ++i) {
    const Step &step = exe.steps[i];
    const KernelLaunch *launch =
        step.kind == Step::Kind::Launch ? &exe.launches[step.index] : nullptr;
    if (!launch || launch->changesOnlyWhen.empty()) {
      close();
      continue;
    }
    std::vector<LaunchGuardTerm> terms = run.terms;
    for (const LaunchGuardTerm &term : launch->changesOnlyWhen)
      if (std::find(terms.begin(), terms.end(), term) == terms.end())
        terms.push_back(term);
    // This launch may not write a flag of the run, nor an earlier launch
    // of the run one of this launch's.
    bool conflicts = (int)terms.size() > kGraphGuardMaxTerms ||
                     writesAny(*launch, terms);
    for (size_t j = run.first; launches && !conflicts && j < i; ++j)
      conflicts = writesAny(exe.launches[exe.steps[j].index],
                            launch->changesOnlyWhen);
    if (conflicts) {
      close();
      if (writesAny(*launch, launch->changesOnlyWhen) ||
          (int)launch->changesOnlyWhen.size() > kGraphGuardMaxTerms)
        continue; // not even a run of its own
      terms = launch->changesOnlyWhen;
    }
    if (!launches)
      run.first = i;
    run.last = i;
    run.terms = std::move(terms);
    ++launches;
  }
  close();
  return runs;
}

} // namespace fuse::runtime
