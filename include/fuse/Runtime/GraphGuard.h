//===- GraphGuard.h - The kernel that decides a conditional node -*- C++ -*-===//
//
// A run of launches that change nothing unless a guard term holds
// (LaunchGuardTerm: an optimizer's update on a micro-batch that only
// accumulates) is captured into a CUDA graph conditional node. One small
// kernel before it, fuse_graph_guard, evaluates the terms of all of them
// and sets the node's condition, so on calls where no term holds the graph
// runs none of those launches at all (each would only return at once, but
// a launch in a graph still costs a few microseconds).
//
// The code generator adds the kernel's source to an executable that has
// guard terms (it is compiled and cached with the others); the executor
// fills GraphGuardParams, whose layout the source repeats.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_RUNTIME_GRAPHGUARD_H
#define FUSE_RUNTIME_GRAPHGUARD_H

#include "fuse/Runtime/Executable.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fuse::runtime {

/// The kernel's second parameter, by value: up to kGraphGuardMaxTerms terms
/// with their flags' device addresses.
struct GraphGuardParams {
  const void *flag[kGraphGuardMaxTerms];
  double constant[kGraphGuardMaxTerms];
  uint8_t dtype[kGraphGuardMaxTerms];   // 0 i1, 1 i32, 2 i64, 3 f32
  uint8_t compare[kGraphGuardMaxTerms]; // LaunchGuardTerm::Compare
  uint8_t negate[kGraphGuardMaxTerms];
  int32_t count;
};

/// The kernel (named kGraphGuardKernel) with its parameter layout, for the
/// code generator to add to an executable.
Kernel graphGuardKernel();

/// Adds `term` at `flag` to `params`; false if it is full.
bool addGraphGuardTerm(GraphGuardParams &params, const LaunchGuardTerm &term,
                       const void *flag);

/// Consecutive guarded launch steps, first to last, that the executor
/// captures into one conditional node, and the distinct terms of all of
/// them (at most kGraphGuardMaxTerms).
struct GuardedRun {
  size_t first = 0, last = 0;
  std::vector<LaunchGuardTerm> terms;
};

/// The longest runs of consecutive launch steps with guard terms, of at
/// least `minLaunches` each (fewer would save less than the guard kernel
/// costs). A run ends where its terms would pass kGraphGuardMaxTerms, or
/// where a launch might write a flag that the run's terms read (the guard
/// reads them all before the first launch): arguments are compared by
/// their whole extent, so a launch writing anywhere before a flag in the
/// same buffer ends the run.
std::vector<GuardedRun> findGuardedRuns(const Executable &exe,
                                        size_t minLaunches = 3);

} // namespace fuse::runtime

#endif // FUSE_RUNTIME_GRAPHGUARD_H
