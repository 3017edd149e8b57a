//===- Schedule.cpp - fuse-schedule ---------------------------------------===//
//
// Memory-aware list scheduling of a function's top-level ops. The block's
// ops form a dependence graph; an op is ready once every op whose value it
// reads has run. Three priorities each give an order: the given one, the
// given one but with every op that lowers the live bytes run as soon as it
// is ready (freeing first), and the classic greedy (always the ready op
// that lowers them most: the arena buffers it is the last reader of,
// through any view, less the buffers it writes). Sources (ops that read
// only arguments and constants) run right before their first reader in all
// three. The live bytes are counted exactly as Liveness counts them (an
// op's outputs and its dying inputs are live together; views share their
// operand's buffer; arguments, returned values and constants are not in
// the arena), so each order's peak is known before anything moves, and the
// block is reordered only when the best one's peak is lower than the given
// order's. A result returned under a donated argument's name is written
// after the argument's other readers, so that it can take the argument's
// memory.
//
//===----------------------------------------------------------------------===//

#include "Schedule.h"

#include "fuse/Analysis/Liveness.h"
#include "fuse/Dialect/Fuse/IR/FuseDialect.h"
#include "fuse/Dialect/Fuse/IR/FuseOps.h"
#include "fuse/Dialect/Fuse/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"

#include <set>

#define DEBUG_TYPE "fuse-schedule"

namespace mlir::fuse {
#define GEN_PASS_DEF_FUSESCHEDULE
#include "fuse/Dialect/Fuse/Transforms/Passes.h.inc"
} // namespace mlir::fuse

using namespace mlir;
using namespace mlir::fuse;

namespace {

/// The block's top-level ops (the terminator aside), numbered by their
/// position in the given order, with what the scheduler needs of them.
struct ScheduleGraph {
  SmallVector<Operation *> ops;
  /// Constants have no buffer and no operands: they are hoisted, not
  /// scheduled.
  SmallVector<bool> isConstant;
  /// The ops that must run after each op (its values' readers).
  SmallVector<SmallVector<unsigned, 4>> successors;
  /// Sources: ops with no effects that read only arguments and constants
  /// and whose values some op reads.
  SmallVector<bool> isSource;
  /// Per op, the sources it reads, and how many other ops must run first.
  SmallVector<SmallVector<unsigned, 2>> sourcePredecessors;
  SmallVector<unsigned> predecessorCount;
  /// Arena buffers (Liveness's non-external ones): their bytes, the ops
  /// that read them (through any view), and per op those it reads and
  /// those it writes.
  SmallVector<int64_t> bytes;
  SmallVector<SmallVector<unsigned, 4>> readers;
  SmallVector<SmallVector<unsigned, 4>> reads;
  SmallVector<SmallVector<unsigned, 2>> writes;
};

void sortUnique(SmallVectorImpl<unsigned> &list) {
  llvm::sort(list);
  list.erase(std::unique(list.begin(), list.end()), list.end());
}

/// A result returned under the `fuse.name` of a donated argument (an
/// optimizer's updated weight, the weight's 16-bit copy) may be written into
/// the argument's memory (fuse-plan-memory), but only once nothing reads
/// the argument any more: the op that writes it runs after every other
/// reader of the argument. Only readers before the writer in the given
/// order get the edge; a reader after it depends on it already or could
/// not (the given order is a topological one), and such a result is simply
/// not placed there.
void addWritesAfterReads(Block &block, ScheduleGraph &graph,
                         const llvm::DenseMap<Operation *, unsigned> &position) {
  auto func = dyn_cast<func::FuncOp>(block.getParentOp());
  if (!func || !block.mightHaveTerminator())
    return;
  Operation *terminator = block.getTerminator();
  llvm::StringMap<BlockArgument> donated;
  for (BlockArgument argument : func.getArguments())
    if (auto name = func.getArgAttrOfType<StringAttr>(argument.getArgNumber(),
                                                      FuseDialect::kNameAttr);
        name && func.getArgAttr(argument.getArgNumber(), FuseDialect::kDonatedAttr))
      donated[name.getValue()] = argument;
  for (unsigned i = 0, e = func.getNumResults(); i < e; ++i) {
    auto name = func.getResultAttrOfType<StringAttr>(i, FuseDialect::kNameAttr);
    auto argument = name ? donated.find(name.getValue()) : donated.end();
    Operation *writer = terminator->getOperand(i).getDefiningOp();
    if (argument == donated.end() || !writer || writer->getBlock() != &block)
      continue;
    unsigned writerAt = position.lookup(writer);
    for (Operation *user : argument->second.getUsers()) {
      Operation *reader = block.findAncestorOpInBlock(*user);
      if (!reader || reader == terminator || reader == writer)
        continue;
      if (unsigned readerAt = position.lookup(reader); readerAt < writerAt)
        graph.successors[readerAt].push_back(writerAt);
    }
  }
}

ScheduleGraph buildGraph(Block &block, const BlockLiveness &liveness) {
  ScheduleGraph graph;
  graph.ops = liveness.ops;
  size_t n = graph.ops.size();
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [at, op] : llvm::enumerate(graph.ops))
    position[op] = at;
  graph.isConstant.resize(n);
  graph.successors.resize(n);
  graph.isSource.resize(n);
  graph.sourcePredecessors.resize(n);
  graph.predecessorCount.assign(n, 0);
  graph.reads.resize(n);
  graph.writes.resize(n);

  // Buffers are numbered as Liveness numbers them; external ones cost 0 and
  // are never recorded as read or written.
  graph.bytes.resize(liveness.buffers.size());
  graph.readers.resize(liveness.buffers.size());
  for (auto [index, buffer] : llvm::enumerate(liveness.buffers))
    graph.bytes[index] = buffer.external ? 0 : buffer.bytes;
  auto arenaBuffer = [&](Value value) -> std::optional<unsigned> {
    auto it = liveness.bufferOf.find(value);
    if (it == liveness.bufferOf.end() || liveness.buffers[it->second].external)
      return std::nullopt;
    return it->second;
  };

  Operation *terminator =
      block.mightHaveTerminator() ? block.getTerminator() : nullptr;
  // Ops with memory effects (none in the dialect today: every fuse op is
  // pure and a fusion's effects are its pure body's) keep their relative
  // order: each one follows the previous one.
  std::optional<unsigned> lastEffect;
  for (auto [at, op] : llvm::enumerate(graph.ops)) {
    graph.isConstant[at] = isa<ConstantOp>(op);
    if (!isMemoryEffectFree(op)) {
      if (lastEffect)
        graph.successors[*lastEffect].push_back(at);
      lastEffect = at;
    }
    for (Value result : op->getResults()) {
      std::optional<unsigned> buffer = arenaBuffer(result);
      if (buffer && liveness.buffers[*buffer].value == result)
        graph.writes[at].push_back(*buffer);
      for (Operation *user : result.getUsers()) {
        Operation *top = block.findAncestorOpInBlock(*user);
        if (!top || top == terminator || top == op)
          continue;
        unsigned reader = position.lookup(top);
        if (!graph.isConstant[at])
          graph.successors[at].push_back(reader);
        if (buffer)
          graph.readers[*buffer].push_back(reader);
      }
    }
  }
  addWritesAfterReads(block, graph, position);
  for (auto &successors : graph.successors) {
    sortUnique(successors);
    for (unsigned successor : successors)
      ++graph.predecessorCount[successor];
  }
  for (auto [at, op] : llvm::enumerate(graph.ops))
    graph.isSource[at] =
        !graph.isConstant[at] && graph.predecessorCount[at] == 0 &&
        !graph.successors[at].empty() && isMemoryEffectFree(op);
  for (auto [at, successors] : llvm::enumerate(graph.successors))
    if (graph.isSource[at])
      for (unsigned successor : successors) {
        graph.sourcePredecessors[successor].push_back(at);
        --graph.predecessorCount[successor];
      }
  for (auto [buffer, readers] : llvm::enumerate(graph.readers)) {
    sortUnique(readers);
    for (unsigned reader : readers)
      graph.reads[reader].push_back(buffer);
  }
  return graph;
}

/// How many ops read each buffer.
SmallVector<unsigned> readerCounts(const ScheduleGraph &graph) {
  SmallVector<unsigned> counts;
  for (const auto &readers : graph.readers)
    counts.push_back(readers.size());
  return counts;
}

/// The peak live bytes of running the graph's non-constant ops in `order`,
/// as computeLiveness would count them over the reordered block.
int64_t peakOf(const ScheduleGraph &graph, ArrayRef<unsigned> order) {
  SmallVector<unsigned> remaining = readerCounts(graph);
  int64_t live = 0, peak = 0;
  for (unsigned op : order) {
    for (unsigned buffer : graph.writes[op])
      live += graph.bytes[buffer];
    peak = std::max(peak, live);
    for (unsigned buffer : graph.reads[op])
      if (--remaining[buffer] == 0)
        live -= graph.bytes[buffer];
    for (unsigned buffer : graph.writes[op])
      if (graph.readers[buffer].empty())
        live -= graph.bytes[buffer];
  }
  return peak;
}

/// How the list scheduler picks among ready ops.
enum class Priority {
  /// The earliest in the given order: the given order with its sources
  /// moved down to their first readers.
  Given,
  /// The largest drop in live bytes where an op lowers them, else the
  /// earliest in the given order.
  Freeing,
  /// The largest drop in live bytes, then the earliest in the given order.
  Memory,
};

/// List scheduling of a ScheduleGraph. Sources (ops that read only
/// arguments and constants, such as a weight's cast to bf16) are not
/// scheduled on their own: each runs right before the first op that reads
/// it, so that its value is not held before it is needed.
class ListScheduler {
public:
  ListScheduler(const ScheduleGraph &graph, Priority priority)
      : graph(graph), priority(priority), readersLeft(readerCounts(graph)),
        predecessorsLeft(graph.predecessorCount),
        isReady(graph.ops.size(), false), isDone(graph.ops.size(), false),
        gain(graph.ops.size(), 0) {}

  SmallVector<unsigned> run() {
    for (unsigned op = 0; op < graph.ops.size(); ++op)
      if (!graph.isConstant[op] && !graph.isSource[op] &&
          predecessorsLeft[op] == 0)
        makeReady(op);
    while (!ready.empty()) {
      unsigned op = ready.begin()->second;
      ready.erase(ready.begin());
      isReady[op] = false;
      for (unsigned source : graph.sourcePredecessors[op])
        if (!isDone[source])
          emit(source);
      emit(op);
    }
    return std::move(order);
  }

private:
  /// Bytes an op allocates that outlive it (a buffer nobody reads dies
  /// where it is written).
  int64_t persistentBytes(unsigned op) const {
    int64_t bytes = 0;
    for (unsigned buffer : graph.writes[op])
      if (!graph.readers[buffer].empty())
        bytes += graph.bytes[buffer];
    return bytes;
  }

  /// The drop in live bytes from running `op` now, with the sources it
  /// pulls in: the buffers it reads last, less those it and they write.
  void makeReady(unsigned op) {
    int64_t bytes = -persistentBytes(op);
    for (unsigned buffer : graph.reads[op])
      if (readersLeft[buffer] == 1)
        bytes += graph.bytes[buffer];
    for (unsigned source : graph.sourcePredecessors[op])
      if (!isDone[source])
        bytes -= persistentBytes(source);
    gain[op] = bytes;
    isReady[op] = true;
    ready.insert(key(op));
  }

  /// Ops not ready yet count `bytes` when they become ready.
  void addGain(unsigned op, int64_t bytes) {
    if (!isReady[op] || priority == Priority::Given)
      return;
    ready.erase(key(op));
    gain[op] += bytes;
    ready.insert(key(op));
  }

  std::pair<int64_t, unsigned> key(unsigned op) const {
    switch (priority) {
    case Priority::Given:
      return {0, op};
    case Priority::Memory:
      return {-gain[op], op};
    case Priority::Freeing:
      return {std::min<int64_t>(-gain[op], 0), op};
    }
    llvm_unreachable("unknown priority");
  }

  void emit(unsigned op) {
    isDone[op] = true;
    order.push_back(op);
    if (graph.isSource[op])
      // Its other readers no longer pull it in.
      for (unsigned reader : graph.successors[op])
        addGain(reader, persistentBytes(op));
    for (unsigned buffer : graph.reads[op])
      // The one reader left frees the buffer when it runs.
      if (--readersLeft[buffer] == 1)
        for (unsigned reader : graph.readers[buffer])
          addGain(reader, graph.bytes[buffer]);
    for (unsigned successor : graph.successors[op])
      if (!graph.isSource[op] && --predecessorsLeft[successor] == 0)
        makeReady(successor);
  }

  const ScheduleGraph &graph;
  Priority priority;
  SmallVector<unsigned> readersLeft, predecessorsLeft;
  SmallVector<bool> isReady, isDone;
  SmallVector<int64_t> gain;
  /// Best first: the smallest key().
  std::set<std::pair<int64_t, unsigned>> ready;
  SmallVector<unsigned> order;
};

/// Where new ops go: before the terminator.
Block::iterator blockEnd(Block &block) {
  return block.mightHaveTerminator() ? block.getTerminator()->getIterator()
                                     : block.end();
}

/// Moves the block's ops into `order` (indices into graph.ops), constants
/// first.
void reorder(Block &block, const ScheduleGraph &graph,
             ArrayRef<unsigned> order) {
  Block::iterator end = blockEnd(block);
  for (auto [op, constant] : llvm::zip(graph.ops, graph.isConstant))
    if (constant)
      op->moveBefore(&block, end);
  for (unsigned op : order)
    graph.ops[op]->moveBefore(&block, end);
}

/// Puts the block's ops back in their given order.
void restore(Block &block, ArrayRef<Operation *> ops) {
  Block::iterator end = blockEnd(block);
  for (Operation *op : ops)
    op->moveBefore(&block, end);
}

/// The fewest ops that must move to turn `before` into `after` (the ops
/// outside a longest subsequence the two orders share).
size_t countMoved(ArrayRef<Operation *> before, ArrayRef<Operation *> after) {
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [at, op] : llvm::enumerate(before))
    position[op] = at;
  // Patience sorting: tails[k] is the smallest last position of an
  // increasing run of length k + 1.
  SmallVector<unsigned> tails;
  for (Operation *op : after) {
    unsigned at = position.lookup(op);
    auto *slot = llvm::lower_bound(tails, at);
    if (slot == tails.end())
      tails.push_back(at);
    else
      *slot = at;
  }
  return after.size() - tails.size();
}

void printReport(func::FuncOp func, const BlockLiveness &before,
                 const BlockLiveness &after) {
  raw_ostream &os = llvm::outs();
  os << "schedule of @" << func.getSymName() << "\n";
  os << "peak before: " << before.peakBytes << " bytes at "
     << before.peakPosition << "\n";
  os << "peak after: " << after.peakBytes << " bytes at " << after.peakPosition
     << "\n";
  os << "ops moved: " << countMoved(before.ops, after.ops) << " of "
     << before.ops.size() << "\n";
}

} // namespace

std::pair<BlockLiveness, BlockLiveness>
mlir::fuse::scheduleForPeak(Block &block) {
  BlockLiveness before = computeLiveness(block);
  ScheduleGraph graph = buildGraph(block, before);

  // Every strategy's order, by its peak; the first lowest wins, and only
  // if it is lower than the given order's.
  SmallVector<unsigned> best;
  int64_t bestPeak = before.peakBytes;
  for (Priority priority :
       {Priority::Given, Priority::Freeing, Priority::Memory}) {
    SmallVector<unsigned> order = ListScheduler(graph, priority).run();
    int64_t peak = peakOf(graph, order);
    LLVM_DEBUG(llvm::dbgs() << "strategy "
                            << static_cast<int>(priority) << ": peak " << peak
                            << " bytes, given " << before.peakBytes << "\n");
    if (peak < bestPeak) {
      bestPeak = peak;
      best = std::move(order);
    }
  }

  BlockLiveness after = before;
  if (!best.empty()) {
    reorder(block, graph, best);
    after = computeLiveness(block);
    assert(after.peakBytes == bestPeak &&
           "the scheduler counts live bytes as Liveness does");
    // Never worse, whatever the bookkeeping says.
    if (after.peakBytes >= before.peakBytes) {
      restore(block, before.ops);
      after = before;
    }
  }
  return {std::move(before), std::move(after)};
}

namespace {

struct SchedulePass : mlir::fuse::impl::FuseScheduleBase<SchedulePass> {
  using Base::Base;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (func.getBody().hasOneBlock())
        schedule(func, func.getBody().front());
    if (report)
      llvm::outs().flush();
  }

  void schedule(func::FuncOp func, Block &block) {
    auto [before, after] = scheduleForPeak(block);
    if (report)
      printReport(func, before, after);
  }
};

} // namespace
