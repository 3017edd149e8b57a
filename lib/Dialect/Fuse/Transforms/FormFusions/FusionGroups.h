//===- FusionGroups.h - Groups of ops that become one kernel each -*- C++ -*-===//
//
// The state of fuse-form-fusions over one block: a partition of its ops
// into groups, each a candidate kernel, with the merges the greedy search
// makes and the checks a merge needs (the kernel template, the bounds on
// inputs and outputs, acyclicity). Each op starts in a group of its own;
// constants are in none, since they are immediates or baked-in inputs.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_LIB_DIALECT_FUSE_TRANSFORMS_FORMFUSIONS_FUSIONGROUPS_H
#define FUSE_LIB_DIALECT_FUSE_TRANSFORMS_FORMFUSIONS_FUSIONGROUPS_H

#include "fuse/Analysis/CostFormulas.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <optional>

namespace mlir::fuse::fusion {

struct Group {
  /// Members in block order.
  SmallVector<Operation *> ops;
  llvm::SmallPtrSet<Operation *, 8> members;
  /// The kernel template, or nullopt for an op that never joins a fusion.
  std::optional<FusionKind> kind;
  /// What the group costs as it would be emitted (a lone view costs 0).
  ::fuse::OpCost cost;
  bool alive = true;
};

/// What a kernel made of a set of ops reads and writes: the values its ops
/// read that none of them defines (immediates aside: they are copied in),
/// in first-read order, and the results read by any other op.
struct FusionBoundary {
  llvm::SetVector<Value> inputs;
  SmallVector<Value> outputs;
};

FusionBoundary boundaryOf(ArrayRef<Operation *> ops,
                          const llvm::SmallPtrSetImpl<Operation *> &members);

/// A merge the search may make, with what it saves.
struct MergeCandidate {
  unsigned first, second;
  /// Bytes saved plus kLaunchEquivalentBytes per kernel saved.
  int64_t benefit;
};

class GroupSet {
public:
  GroupSet(Block &block, unsigned maxInputs, unsigned maxOutputs);

  ArrayRef<Group> groups() const { return groupList; }
  std::optional<unsigned> groupOf(Operation *op) const;

  /// The merge of `a` and `b` if it is a kernel within the bounds that
  /// saves something; does not check acyclicity (see createsCycle).
  std::optional<MergeCandidate> evaluate(unsigned a, unsigned b) const;

  /// Whether merging `a` and `b` would put a group both before and after
  /// the merged one.
  bool createsCycle(unsigned a, unsigned b) const;

  /// Merges `b` into `a` (evaluate must have accepted them).
  void merge(unsigned a, unsigned b);

  /// The groups that read a value `group` defines (in the order of its ops
  /// and their users), and those that define a value it reads.
  ArrayRef<unsigned> consumers(unsigned group) const;
  SmallVector<unsigned> producers(unsigned group) const;

private:
  Group makeGroup(SmallVector<Operation *> ops) const;
  void reorderForMerge(unsigned first, unsigned last, unsigned merged,
                       unsigned dead);

  SmallVector<Group> groupList;
  llvm::DenseMap<Operation *, unsigned> groupIndex;
  llvm::DenseMap<Operation *, int64_t> position;
  /// The groups in a topological order, kept so through merges (dead
  /// groups stay in it, inert), and each group's index in it: a path
  /// between two groups only runs through groups ranked between them.
  SmallVector<unsigned> order, rank;
  /// Each group's consumers as last computed, valid where `consumersValid`
  /// says so: the cycle check walks them for every merge (a 24-layer step
  /// with clipping and accumulation asked 2.3 million times), and a merge
  /// changes only those of the two groups and of their producers.
  mutable SmallVector<SmallVector<unsigned>> consumerLists;
  mutable llvm::BitVector consumersValid;
  unsigned maxInputs, maxOutputs;
};

/// Copies cheap producers (fusion::isDuplicable) into each consumer that can
/// absorb them when the cost model says the copies save more than they add
/// (a broadcast's small input read again beats its large result stored and
/// loaded; a scalar computed again in each kernel beats a launch).
void duplicateCheapProducers(Block &block);

/// Makes each attention op the flash kernels take a fuse.fusion together
/// with the views of its operands and results that they can address by
/// strides (AttentionViews.cpp); an attention op with no such view is left
/// alone. Runs before the search, which leaves fusions as they are.
void formStridedAttentionFusions(Block &block);

/// Rewrites each group of two or more ops, each lone fusible op and each
/// attention op of `groups` into a fuse.fusion of its kind, and orders the
/// block so that every value is defined before its uses.
void materializeFusions(Block &block, const GroupSet &groups);

/// Rewrites one group into a fuse.fusion of its kind placed after the last
/// of `group.ops`, which are in an order where each comes after the members
/// it reads and the last after every input. A result read before that place
/// leaves the block to be sorted topologically.
void materializeGroup(const Group &group);

} // namespace mlir::fuse::fusion

#endif // FUSE_LIB_DIALECT_FUSE_TRANSFORMS_FORMFUSIONS_FUSIONGROUPS_H
