//===- ArenaPacking.h - Offsets of buffers in one arena ---------*- C++ -*-===//
//
// Places buffers with known sizes and live ranges at offsets in one arena
// so that no two buffers live at a common position overlap, and reports
// the arena's size and its lower bound, as XLA's heap simulator does.
// fuse-plan-memory packs each function's intermediates with it; the
// runtime can reuse it (plain C++: no MLIR).
//
// - A buffer occupies its size rounded up to kArenaAlignment (256) bytes,
//   from an offset that is a multiple of 256. The arena's size is the
//   largest offset + aligned size, so a multiple of 256 too.
// - Live ranges are inclusive intervals of schedule positions: two buffers
//   are live together when their intervals share a position.
// - In-place reuse: an interval may name another one whose storage it takes
//   over (`reuses`): the other must end at the position where this one
//   starts (the op that reads the one and writes the other), and each
//   interval is taken over at most once. Such a chain is one block in
//   time: it gets one offset, spans its members' live ranges, and occupies
//   its largest member's aligned size. The lower bound and every strategy
//   see the chain, never its members.
// - Fixed offsets: a caller may pin an interval at a byte offset
//   (`fixedOffset`), for a value an earlier call left in the arena or one
//   it must find at a known place. A chain with a fixed member is fixed
//   there as a whole; the fixed blocks must not overlap where they are
//   live together. Every strategy keeps them where they are and packs the
//   others around them, so the arena covers them and may exceed the lower
//   bound by more than it would without them.
// - The lower bound is the largest, over positions, of the sum of the
//   ALIGNED sizes of the blocks (chains counted once) live there. The
//   blocks live at that position are pairwise disjoint in any valid
//   packing, so no strategy can do better: arena size >= lower bound.
// - The strategy is swappable and looked up by name. "best-fit" (default)
//   places blocks largest first, each in the smallest gap left between the
//   blocks already placed that are live at the same time (TFLite's
//   greedy-by-size, XLA's GlobalDecreasingSizeBestFitHeap), trying a few
//   orders of the blocks and keeping the smallest arena. "linear" gives
//   each block its own slot, one after the other (no reuse): a baseline.
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_ARENAPACKING_H
#define FUSE_SUPPORT_ARENAPACKING_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fuse {

/// Every buffer's offset and occupied size are multiples of this.
constexpr int64_t kArenaAlignment = 256;

/// `bytes` rounded up to a multiple of kArenaAlignment.
constexpr int64_t alignToArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

/// A buffer to place: `size` bytes (not aligned), live from position
/// `start` to position `end`, both included.
struct BufferInterval {
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
  /// The index of the interval whose storage this one takes over in place
  /// (it ends at `start`), or -1.
  int64_t reuses = -1;
  /// The byte offset where this buffer already lives (a non-negative
  /// multiple of kArenaAlignment), or -1 for the strategy to choose.
  int64_t fixedOffset = -1;
};

/// A block as a strategy sees it: an in-place chain or a lone buffer, its
/// size already aligned.
struct PackingBlock {
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
  /// Where the block must go (one of its members is fixed there), or -1.
  int64_t fixedOffset = -1;
};

/// How blocks are placed. Implementations must return one offset per
/// block, each a non-negative multiple of kArenaAlignment, such that two
/// blocks whose live ranges share a position do not overlap
/// ([offset, offset + size) intervals are disjoint), and a fixed block's
/// offset its `fixedOffset` (the fixed blocks never overlap one another
/// where they are live together; packArena checks that they stay put).
class PackingStrategy {
public:
  virtual ~PackingStrategy() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<int64_t>
  place(const std::vector<PackingBlock> &blocks) const = 0;
};

/// The strategy registered under `name`, or null.
const PackingStrategy *findPackingStrategy(std::string_view name);

/// The names of the registered strategies, sorted.
std::vector<std::string> packingStrategyNames();

/// Adds a strategy (replacing one of the same name). Not thread-safe: call
/// it before any packing starts. "best-fit" and "linear" are built in.
void registerPackingStrategy(std::unique_ptr<PackingStrategy> strategy);

/// The name of the default strategy ("best-fit").
constexpr std::string_view kDefaultPackingStrategy = "best-fit";

/// Why `intervals` cannot be packed (a negative size, start > end, a
/// negative start, a reuse hint that names itself, no interval, one that
/// does not end where this one starts, or one already taken over; a fixed
/// offset below -1 or not a multiple of kArenaAlignment, members of one
/// chain fixed at different offsets, or two fixed blocks live together
/// whose aligned bytes overlap), or empty when they are fine.
std::string validateIntervals(const std::vector<BufferInterval> &intervals);

/// The largest sum of aligned sizes live at one position (chains counted
/// once). `intervals` must be valid.
int64_t arenaLowerBound(const std::vector<BufferInterval> &intervals);

struct ArenaPlan {
  /// One offset per interval; the members of an in-place chain share one.
  std::vector<int64_t> offsets;
  int64_t arenaSize = 0;
  int64_t lowerBound = 0;
  /// Why no plan was made (invalid intervals), empty on success.
  std::string error;
};

/// Packs `intervals` with `strategy`.
ArenaPlan packArena(const std::vector<BufferInterval> &intervals,
                    const PackingStrategy &strategy);

/// Whether two intervals of `plan` that are live together overlap, or an
/// offset is not aligned or not the interval's fixed offset, or a block
/// reaches past the arena: the first problem found, or empty. Members of
/// one in-place chain may share storage. O(n log n + overlapping pairs);
/// for tests and self-checks.
std::string checkArenaPlan(const std::vector<BufferInterval> &intervals,
                           const ArenaPlan &plan);

} // namespace fuse

#endif // FUSE_SUPPORT_ARENAPACKING_H
