//===- PlanMemory.cpp - fuse-plan-memory ----------------------------------===//
//
// Liveness over each function's schedule (fuse/Analysis/Liveness.h), in-place
// reuse, then offsets in one arena (fuse/Support/ArenaPacking.h); the plan
// is written into the IR as `fuse.buffers` on ops and the arena's size and
// lower bound on functions and the module. See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//

#include "fuse/Dialect/Fuse/Transforms/PrintHelpers.h"

#include "fuse/Analysis/CostFormulas.h"
#include "fuse/Analysis/Liveness.h"
#include "fuse/Dialect/Fuse/IR/FuseAttrs.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"
#include "fuse/Support/ArenaPacking.h"
#include "fuse/Support/HumanSize.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

#define DEBUG_TYPE "fuse-plan-memory"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSEPLANMEMORY
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;

namespace {

/// Whether `value`'s element `i` sits at the same byte offset as `other`'s:
/// as many elements of as many bytes.
bool sameLayout(Value value, Value other) {
  auto a = cast<ShapedType>(value.getType());
  auto b = cast<ShapedType>(other.getType());
  return a.getNumElements() == b.getNumElements() &&
         ::fuse::cost::tensorBytes(1, a.getElementTypeBitWidth()) ==
             ::fuse::cost::tensorBytes(1, b.getElementTypeBitWidth());
}

/// Whether everything computed from `argument` in a fusion body is computed
/// element by element (elementwise ops and reshapes, which keep the linear
/// index): element `i` of a result then reads element `i` of the argument
/// alone. With `rowReduces`, a `fuse.reduce` may read it too (see
/// mayWriteInPlace); what the reduction computes is not followed.
bool readOnlyIndexAligned(BlockArgument argument, bool rowReduces) {
  SmallVector<Value> worklist = {argument};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (isa<YieldOp>(user) || (rowReduces && isa<ReduceOp>(user)))
        continue;
      if (!user->hasTrait<OpTrait::Elementwise>() && !isa<ReshapeOp>(user))
        return false;
      if (seen.insert(user).second)
        llvm::append_range(worklist, user->getResults());
    }
  }
  return true;
}

/// Whether `op` may write a result over one of its inputs: an elementwise
/// op, or a `loop`, `column_reduction` or `row_reduction` fusion (further
/// checked per input). A column reduction reads an input that only
/// elementwise ops use in one thread per element: a per-element input where
/// that element's outputs are computed, a per-column one (the epilogue, an
/// optimizer's update of a bias fused into its gradient's reduction) in the
/// thread that finishes the column; the code generator stores after those
/// reads.
///
/// A row reduction (RowReductionFusion.cpp) may also feed such an input to
/// its `fuse.reduce`s (cross entropy's backward over the logits): every pass
/// over a row, the reductions' and the last one that stores the
/// full-size outputs, gives element `j` of the row to the same thread, so
/// a thread reads the elements of that input it then writes and no other
/// (a row longer than the registers hold is first copied whole into shared
/// memory, before a barrier); a per-row input is read where thread 0 stores
/// the per-row outputs. The template reads inputs planned under an output
/// without __restrict__ and computes each element's outputs before storing
/// them. A read at another element (gather, slice, transpose, a broadcast
/// of the input) still forbids it.
bool mayWriteInPlace(Operation *op) {
  if (auto fusion = dyn_cast<FusionOp>(op))
    return fusion.getKind() == FusionKind::Loop ||
           fusion.getKind() == FusionKind::ColumnReduction ||
           fusion.getKind() == FusionKind::RowReduction;
  return op->hasTrait<OpTrait::Elementwise>();
}

/// The memory plan of one function.
struct FunctionPlan {
  int64_t arenaSize = 0;
  int64_t lowerBound = 0;
  /// Every buffer's placement, in BlockLiveness::buffers order (an
  /// argument's is `argument = N`, which views of it carry).
  SmallVector<BufferAttr> placements;
};

class FunctionPlanner {
public:
  FunctionPlanner(func::FuncOp func, Block &block)
      : func(func), live(computeLiveness(block)),
        returned(live.buffers.size(), false),
        argumentOf(live.buffers.size(), -1),
        inPlaceOf(live.buffers.size(), -1),
        takenOver(live.buffers.size(), false),
        inArena(live.buffers.size(), false),
        fixedOffset(live.buffers.size(), -1),
        aliasOf(live.buffers.size(), -1),
        aliased(live.buffers.size(), false) {
    llvm::DenseMap<int64_t, unsigned> pinnedAt; // offset -> first argument's buffer
    for (BlockArgument argument : block.getArguments()) {
      unsigned buffer = live.bufferOf.lookup(argument);
      // An argument left in the arena by the caller is an arena buffer
      // from the start, at its offset, until its last read. Arguments at
      // one offset are one value passed several times (views of one saved
      // base): one block, read-only, live until the last read of any.
      if (auto offset = func.getArgAttrOfType<IntegerAttr>(
              argument.getArgNumber(), FuseDialect::kArenaOffsetAttr)) {
        inArena[buffer] = true;
        fixedOffset[buffer] = offset.getInt();
        auto [first, inserted] = pinnedAt.try_emplace(offset.getInt(), buffer);
        if (!inserted) {
          aliasOf[buffer] = first->second;
          aliased[first->second] = true;
        }
        continue;
      }
      argumentOf[buffer] = argument.getArgNumber();
    }
    for (auto [index, value] : llvm::enumerate(block.getTerminator()->getOperands()))
      if (auto buffer = live.bufferOf.find(value);
          buffer != live.bufferOf.end()) {
        returned[buffer->second] = true;
        if (auto name = func.getResultAttrOfType<StringAttr>(
                index, FuseDialect::kNameAttr)) {
          returnedAs[buffer->second] = name.getValue();
          returnedNames.insert(name.getValue());
        }
      }
  }

  /// Results the function leaves in the arena (`fuse.in_arena`,
  /// `fuse.arena_offset`): arena buffers live until the end, at the given
  /// offset if one is. A value returned again without either is copied out
  /// of the arena; one that is not a buffer the function computes (an
  /// argument, a constant) stays the caller's where the plan may choose
  /// (`fuse.in_arena`), and is an error where an offset was demanded.
  LogicalResult keepResultsInArena() {
    Operation *terminator = func.getBody().front().getTerminator();
    for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
      auto offset = func.getResultAttrOfType<IntegerAttr>(
          index, FuseDialect::kArenaOffsetAttr);
      if (!offset && !func.getResultAttr(index, FuseDialect::kInArenaAttr))
        continue;
      auto buffer = live.bufferOf.find(value);
      bool computed = buffer != live.bufferOf.end() &&
                      !isa<BlockArgument>(live.buffers[buffer->second].value);
      if (!computed) {
        if (!offset)
          continue;
        return func.emitError()
               << "fuse-plan-memory: result #" << index << " of @"
               << func.getSymName() << " is to be left at arena offset "
               << offset.getInt()
               << ", but it is not a value the function computes (an "
                  "argument or a constant)";
      }
      inArena[buffer->second] = true;
      if (offset) {
        int64_t &fixed = fixedOffset[buffer->second];
        if (fixed >= 0 && fixed != offset.getInt())
          return func.emitError()
                 << "fuse-plan-memory: result #" << index << " of @"
                 << func.getSymName() << " is at arena offset "
                 << offset.getInt() << " and at " << fixed;
        fixed = offset.getInt();
      }
    }
    return success();
  }

  FailureOr<FunctionPlan> plan(const ::fuse::PackingStrategy &strategy) {
    if (failed(keepResultsInArena()))
      return failure();
    for (auto [position, op] : llvm::enumerate(live.ops))
      if (mayWriteInPlace(op))
        pairInPlace(op, position);
    placeOverDeadDonatedArguments();

    // Buffers in a donated argument's memory (in-place chains from it) stay
    // there; the others that are not returned go to the arena.
    std::vector<::fuse::BufferInterval> intervals;
    SmallVector<int64_t> intervalOf(live.buffers.size(), -1);
    // An argument block spans the reads of all its aliases.
    SmallVector<int64_t> bytes, end;
    for (const BufferLiveness &buffer : live.buffers) {
      bytes.push_back(buffer.bytes);
      end.push_back(buffer.end);
    }
    for (auto [index, first] : llvm::enumerate(aliasOf))
      if (first >= 0) {
        bytes[first] = std::max(bytes[first], bytes[index]);
        end[first] = std::max(end[first], end[index]);
      }
    for (auto [index, buffer] : llvm::enumerate(live.buffers)) {
      if (argumentOf[index] >= 0 || isExternal(index) || aliasOf[index] >= 0)
        continue;
      intervalOf[index] = intervals.size();
      int64_t reuses = inPlaceOf[index] >= 0 ? intervalOf[inPlaceOf[index]]
                                             : -1;
      ::fuse::BufferInterval interval{bytes[index], buffer.start, end[index],
                                      reuses};
      interval.fixedOffset = fixedOffset[index];
      intervals.push_back(interval);
    }
    ::fuse::ArenaPlan packed = ::fuse::packArena(intervals, strategy);
    if (!packed.error.empty())
      return func.emitError() << "fuse-plan-memory: cannot pack @"
                              << func.getSymName() << ": " << packed.error;
    assert(::fuse::checkArenaPlan(intervals, packed).empty() &&
           "the packing strategy overlapped buffers");

    FunctionPlan result;
    result.arenaSize = packed.arenaSize;
    result.lowerBound = packed.lowerBound;
    MLIRContext *context = func.getContext();
    for (auto [index, buffer] : llvm::enumerate(live.buffers)) {
      std::optional<int64_t> offset, argument;
      if (intervalOf[index] >= 0)
        offset = packed.offsets[intervalOf[index]];
      else if (aliasOf[index] >= 0)
        offset = fixedOffset[index];
      else if (argumentOf[index] >= 0)
        argument = argumentOf[index];
      result.placements.push_back(BufferAttr::get(
          context, offset, argument, buffer.bytes, buffer.start, buffer.end));
    }
    return result;
  }

  const BlockLiveness &liveness() const { return live; }

private:
  /// Gives each result of `op` (at `position`) the buffer of an input that
  /// dies there, where that is safe: the first such input wins. A donated
  /// argument named like a returned value (an optimizer's `w`, whose update
  /// is returned as `w`) is not given to a value returned under another
  /// name, so that the caller can bind the update to the memory it came
  /// from.
  void pairInPlace(Operation *op, int64_t position) {
    for (Value result : op->getResults()) {
      unsigned target = live.bufferOf.lookup(result);
      auto ownName = returnedAs.find(target);
      for (Value input : op->getOperands()) {
        auto source = live.bufferOf.find(input);
        if (source == live.bufferOf.end() ||
            !canTakeOver(op, position, input, source->second, result, target))
          continue;
        StringRef argument = argumentName(argumentOf[source->second]);
        if (ownName != returnedAs.end() && ownName->second != argument &&
            returnedNames.contains(argument))
          continue;
        inPlaceOf[target] = source->second;
        takenOver[source->second] = true;
        // Over a donated argument, the chain stays in its memory.
        argumentOf[target] = argumentOf[source->second];
        break;
      }
    }
  }

  /// A result returned under the name of a donated argument that its
  /// writer does not read (a weight's 16-bit copy, written from the updated
  /// f32 weight) takes the argument's memory all the same when nothing
  /// reads the argument from the writer on (fuse-schedule runs the writer
  /// after the argument's readers), so that the caller's binding is in
  /// place too.
  void placeOverDeadDonatedArguments() {
    llvm::StringMap<unsigned> donatedBuffers;
    for (auto [index, argument] : llvm::enumerate(argumentOf))
      if (argument >= 0 && isa<BlockArgument>(live.buffers[index].value) &&
          func.getArgAttr(argument, FuseDialect::kDonatedAttr) &&
          !argumentName(argument).empty())
        donatedBuffers[argumentName(argument)] = index;
    for (auto [target, name] : returnedAs) {
      auto source = donatedBuffers.find(name);
      if (source == donatedBuffers.end() || argumentOf[target] >= 0 ||
          inPlaceOf[target] >= 0 || inArena[target] ||
          fixedOffset[target] >= 0)
        continue;
      unsigned from = source->second;
      if (takenOver[from] || returned[from] || aliased[from] ||
          live.buffers[from].end >= live.buffers[target].start ||
          !sameLayout(live.buffers[from].value, live.buffers[target].value))
        continue;
      inPlaceOf[target] = from;
      takenOver[from] = true;
      argumentOf[target] = argumentOf[from];
    }
  }

  bool canTakeOver(Operation *op, int64_t position, Value input,
                   unsigned source, Value result, unsigned target) {
    const BufferLiveness &from = live.buffers[source];
    // An argument passed several times is read through its other names.
    if (aliased[source] || aliasOf[source] >= 0)
      return false;
    if (takenOver[source] || source == target || from.end != position ||
        !sameLayout(input, result) || returned[source])
      return false;
    // The caller's memory: an argument only if donated, and never under a
    // result left in the arena; a returned value never. An arena input can
    // only pass to an arena result, and a chain has one offset.
    if (argumentOf[source] >= 0) {
      if (!func.getArgAttr(argumentOf[source], FuseDialect::kDonatedAttr) ||
          inArena[target])
        return false;
    } else if (isExternal(source) || isExternal(target)) {
      return false;
    }
    if (fixedOffset[source] >= 0 && fixedOffset[target] >= 0 &&
        fixedOffset[source] != fixedOffset[target])
      return false;
    auto fusion = dyn_cast<FusionOp>(op);
    if (!fusion)
      return true;
    // Every input of the fusion in this buffer (it may come twice, or as a
    // view) must be read element by element (or reduced, in a row).
    bool rowReduces = fusion.getKind() == FusionKind::RowReduction;
    for (auto [index, operand] : llvm::enumerate(fusion.getInputs())) {
      auto buffer = live.bufferOf.find(operand);
      if (buffer != live.bufferOf.end() && buffer->second == source &&
          !readOnlyIndexAligned(fusion.getBody().getArgument(index),
                                rowReduces))
        return false;
    }
    return true;
  }

  /// Whether buffer `index` is the caller's memory: an argument or a
  /// returned value, unless it is in the arena.
  bool isExternal(unsigned index) const {
    return live.buffers[index].external && !inArena[index];
  }

  /// The `fuse.name` of argument `index` ("" for none or -1).
  StringRef argumentName(int64_t index) {
    if (index < 0)
      return "";
    auto name = func.getArgAttrOfType<StringAttr>(index, FuseDialect::kNameAttr);
    return name ? name.getValue() : "";
  }

  func::FuncOp func;
  BlockLiveness live;
  SmallVector<bool> returned;
  /// The `fuse.name` a returned buffer goes by.
  llvm::DenseMap<unsigned, StringRef> returnedAs;
  /// Every `fuse.name` of a returned value.
  llvm::StringSet<> returnedNames;
  /// The argument whose memory holds each buffer, or -1.
  SmallVector<int64_t> argumentOf;
  /// The buffer each one takes over in place, or -1.
  SmallVector<int64_t> inPlaceOf;
  SmallVector<bool> takenOver;
  /// Buffers in the arena although an argument or a result refers to them
  /// (fuse.arena_offset, fuse.in_arena), and their fixed offsets (or -1).
  SmallVector<bool> inArena;
  SmallVector<int64_t> fixedOffset;
  /// For an argument found at the same arena offset as an earlier one,
  /// that one's buffer (else -1); and whether a buffer has such aliases.
  SmallVector<int64_t> aliasOf;
  SmallVector<bool> aliased;
};

/// Records on each result left in the arena the offset the plan gave it
/// (`fuse.arena_offset`, replacing `fuse.in_arena`).
void recordResultOffsets(func::FuncOp func, const BlockLiveness &live,
                         const FunctionPlan &plan) {
  Operation *terminator = func.getBody().front().getTerminator();
  MLIRContext *context = func.getContext();
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    if (!func.getResultAttr(index, FuseDialect::kInArenaAttr) &&
        !func.getResultAttr(index, FuseDialect::kArenaOffsetAttr))
      continue;
    func.removeResultAttr(index, StringAttr::get(context, FuseDialect::kInArenaAttr));
    // An argument or a constant returned: the caller's memory after all.
    auto buffer = live.bufferOf.find(value);
    std::optional<int64_t> offset;
    if (buffer != live.bufferOf.end())
      offset = plan.placements[buffer->second].getOffset();
    if (!offset)
      continue;
    func.setResultAttr(index, FuseDialect::kArenaOffsetAttr,
                       IntegerAttr::get(IntegerType::get(context, 64), *offset));
  }
}

IntegerAttr bytesAttr(MLIRContext *context, int64_t bytes) {
  return IntegerAttr::get(IntegerType::get(context, 64), bytes);
}

void setArenaAttrs(Operation *op, int64_t arenaSize, int64_t lowerBound) {
  MLIRContext *context = op->getContext();
  op->setAttr(FuseDialect::kArenaSizeAttr, bytesAttr(context, arenaSize));
  op->setAttr(FuseDialect::kArenaLowerBoundAttr,
              bytesAttr(context, lowerBound));
}

struct PlanMemoryPass
    : mlir::fuse::impl::FusePlanMemoryBase<PlanMemoryPass> {
  using Base::Base;

  LogicalResult initialize(MLIRContext *context) override {
    packer = ::fuse::findPackingStrategy(strategy);
    if (!packer)
      return emitError(UnknownLoc::get(context))
             << "fuse-plan-memory: unknown strategy '" << strategy
             << "'; valid names: "
             << llvm::join(::fuse::packingStrategyNames(), ", ");
    if (maxArenaBytes < 0)
      return emitError(UnknownLoc::get(context))
             << "fuse-plan-memory: max-arena-bytes must be 0 (no limit) or "
                "positive, got "
             << static_cast<int64_t>(maxArenaBytes);
    return success();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t moduleArena = 0, moduleBound = 0;
    bool tooLarge = false;
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.getBody().hasOneBlock()) {
        func.emitError() << "fuse-plan-memory: @" << func.getSymName()
                         << " has " << func.getBody().getBlocks().size()
                         << " blocks; a schedule is one block";
        return signalPassFailure();
      }
      FunctionPlanner planner(func, func.getBody().front());
      FailureOr<FunctionPlan> plan = planner.plan(*packer);
      if (failed(plan))
        return signalPassFailure();
      annotate(planner.liveness(), *plan);
      recordResultOffsets(func, planner.liveness(), *plan);
      setArenaAttrs(func.getOperation(), plan->arenaSize, plan->lowerBound);
      moduleArena = std::max(moduleArena, plan->arenaSize);
      moduleBound = std::max(moduleBound, plan->lowerBound);
      if (maxArenaBytes > 0 && plan->arenaSize > maxArenaBytes) {
        reportTooLarge(func, *plan);
        tooLarge = true;
      }
    }
    setArenaAttrs(module, moduleArena, moduleBound);
    if (tooLarge)
      signalPassFailure();
  }

private:
  /// `fuse.buffers` on every top-level op with a buffer: views repeat the
  /// placement of what they view; constants have none.
  static void annotate(const BlockLiveness &live, const FunctionPlan &plan) {
    for (Operation *op : live.ops) {
      if (isa<ConstantOp>(op) || op->getNumResults() == 0) {
        op->removeAttr(FuseDialect::kBuffersAttr);
        continue;
      }
      SmallVector<Attribute> buffers;
      for (Value result : op->getResults())
        buffers.push_back(plan.placements[live.bufferOf.lookup(result)]);
      op->setAttr(FuseDialect::kBuffersAttr,
                  ArrayAttr::get(op->getContext(), buffers));
    }
  }

  void reportTooLarge(func::FuncOp func, const FunctionPlan &plan) {
    auto bytes = [](int64_t value) {
      return std::to_string(value) + " bytes (" + ::fuse::humanBytes(value) +
             ")";
    };
    InFlightDiagnostic error = func.emitError();
    error << "fuse-plan-memory: the arena of @" << func.getSymName()
          << " needs " << bytes(plan.arenaSize)
          << ", more than max-arena-bytes = " << bytes(maxArenaBytes)
          << "; its lower bound is " << bytes(plan.lowerBound);
    if (plan.lowerBound > maxArenaBytes)
      error << ", above the limit too: no packing of this schedule fits "
               "(rematerialize, reschedule or shrink the batch)";
    else
      error << ", within the limit: another strategy or schedule may fit";
  }

  const ::fuse::PackingStrategy *packer = nullptr;
};

} // namespace
