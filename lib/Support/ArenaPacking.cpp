//===- ArenaPacking.cpp - Offsets of buffers in one arena -----------------===//

#include "fuse/Support/ArenaPacking.h"
#include "fuse/Support/CheckedMath.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <utility>

namespace fuse {

namespace {

bool liveTogether(const PackingBlock &a, const PackingBlock &b) {
  return a.start <= b.end && b.start <= a.end;
}

/// Puts the fixed blocks at their offsets in `offsets`; returns them
/// sorted by offset.
std::vector<size_t> placeFixed(const std::vector<PackingBlock> &blocks,
                               std::vector<int64_t> &offsets) {
  std::vector<size_t> fixed;
  for (size_t index = 0; index < blocks.size(); ++index)
    if (blocks[index].fixedOffset >= 0) {
      offsets[index] = blocks[index].fixedOffset;
      fixed.push_back(index);
    }
  std::sort(fixed.begin(), fixed.end(),
            [&](size_t a, size_t b) { return offsets[a] < offsets[b]; });
  return fixed;
}

/// The fixed blocks at their offsets, then the others in `order`, each
/// placed at the lowest-waste gap among the blocks already placed (fixed
/// ones included) that are live at the same time, or above them all when
/// no gap is large enough. Returns the offsets and the arena size.
std::pair<std::vector<int64_t>, int64_t>
placeBestFit(const std::vector<PackingBlock> &blocks,
             const std::vector<size_t> &order) {
  std::vector<int64_t> offsets(blocks.size(), 0);
  // The blocks placed so far, sorted by offset: one scan finds the gaps.
  // The fixed ones come first: the others must fit around them whatever
  // the order.
  std::vector<size_t> placed = placeFixed(blocks, offsets);
  placed.reserve(blocks.size());
  int64_t arenaSize = 0;
  for (size_t index : placed)
    arenaSize = std::max(arenaSize, offsets[index] + blocks[index].size);
  for (size_t index : order) {
    const PackingBlock &block = blocks[index];
    if (block.fixedOffset >= 0)
      continue;
    int64_t cursor = 0;
    int64_t bestOffset = -1;
    int64_t bestGap = std::numeric_limits<int64_t>::max();
    for (size_t other : placed) {
      const PackingBlock &neighbour = blocks[other];
      if (!liveTogether(block, neighbour) || neighbour.size == 0)
        continue;
      int64_t gap = offsets[other] - cursor;
      if (gap >= block.size && gap < bestGap) {
        bestGap = gap;
        bestOffset = cursor;
      }
      cursor = std::max(cursor, offsets[other] + neighbour.size);
    }
    offsets[index] = bestOffset >= 0 ? bestOffset : cursor;
    arenaSize = std::max(arenaSize, offsets[index] + block.size);
    auto at = std::upper_bound(
        placed.begin(), placed.end(), offsets[index],
        [&](int64_t offset, size_t other) { return offset < offsets[other]; });
    placed.insert(at, index);
  }
  return {std::move(offsets), arenaSize};
}

/// Greedy by size with best fit, over a few orders of the blocks; the
/// smallest arena wins (the first order on a tie). Every order puts large
/// or long-lived blocks first, in different proportions: none is best on
/// every graph.
class BestFitStrategy final : public PackingStrategy {
public:
  std::string_view name() const override { return "best-fit"; }

  std::vector<int64_t>
  place(const std::vector<PackingBlock> &blocks) const override {
    using Key = std::function<bool(const PackingBlock &, const PackingBlock &)>;
    auto length = [](const PackingBlock &b) { return b.end - b.start + 1; };
    const Key keys[] = {
        // TFLite's greedy by size: largest first, earlier first.
        [](const PackingBlock &a, const PackingBlock &b) {
          if (a.size != b.size)
            return a.size > b.size;
          return a.start < b.start;
        },
        // Largest first, longest-lived first.
        [&](const PackingBlock &a, const PackingBlock &b) {
          if (a.size != b.size)
            return a.size > b.size;
          return length(a) > length(b);
        },
        // Largest area (bytes × positions) first.
        [&](const PackingBlock &a, const PackingBlock &b) {
          return static_cast<double>(a.size) * length(a) >
                 static_cast<double>(b.size) * length(b);
        },
        // Longest-lived first (XLA's temporal order), then largest.
        [&](const PackingBlock &a, const PackingBlock &b) {
          if (length(a) != length(b))
            return length(a) > length(b);
          return a.size > b.size;
        },
        // In schedule order, as an allocator would see them.
        [](const PackingBlock &a, const PackingBlock &b) {
          if (a.start != b.start)
            return a.start < b.start;
          return a.size > b.size;
        },
    };
    std::vector<int64_t> best;
    int64_t bestSize = std::numeric_limits<int64_t>::max();
    for (const Key &key : keys) {
      std::vector<size_t> order(blocks.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return key(blocks[a], blocks[b]);
      });
      auto [offsets, size] = placeBestFit(blocks, order);
      if (size < bestSize) {
        bestSize = size;
        best = std::move(offsets);
      }
    }
    return best;
  }
};

/// Every block in its own slot, one after the other: no reuse at all. The
/// fixed blocks stay where they are and the others start past the highest
/// of them, so no free block meets a fixed one either.
class LinearStrategy final : public PackingStrategy {
public:
  std::string_view name() const override { return "linear"; }

  std::vector<int64_t>
  place(const std::vector<PackingBlock> &blocks) const override {
    int64_t next = 0;
    for (const PackingBlock &block : blocks)
      if (block.fixedOffset >= 0)
        next = std::max(next, block.fixedOffset + block.size);
    std::vector<int64_t> offsets;
    offsets.reserve(blocks.size());
    for (const PackingBlock &block : blocks) {
      if (block.fixedOffset >= 0) {
        offsets.push_back(block.fixedOffset);
        continue;
      }
      offsets.push_back(next);
      next += block.size;
    }
    return offsets;
  }
};

std::vector<std::unique_ptr<PackingStrategy>> &registry() {
  static std::vector<std::unique_ptr<PackingStrategy>> strategies = [] {
    std::vector<std::unique_ptr<PackingStrategy>> builtIn;
    builtIn.push_back(std::make_unique<BestFitStrategy>());
    builtIn.push_back(std::make_unique<LinearStrategy>());
    return builtIn;
  }();
  return strategies;
}

/// The first interval of each one's in-place chain (itself when it takes
/// over nothing). `intervals` must be valid, hence acyclic.
std::vector<size_t> chainRoots(const std::vector<BufferInterval> &intervals) {
  std::vector<size_t> roots(intervals.size());
  std::vector<bool> done(intervals.size(), false);
  for (size_t i = 0; i < intervals.size(); ++i) {
    std::vector<size_t> path;
    size_t at = i;
    while (!done[at] && intervals[at].reuses >= 0) {
      path.push_back(at);
      at = static_cast<size_t>(intervals[at].reuses);
    }
    size_t root = done[at] ? roots[at] : at;
    roots[at] = root;
    done[at] = true;
    for (size_t member : path) {
      roots[member] = root;
      done[member] = true;
    }
  }
  return roots;
}

/// The chains as blocks, and the block of every interval. A chain is fixed
/// where any of its members is (validation made them agree).
std::pair<std::vector<PackingBlock>, std::vector<size_t>>
chainBlocks(const std::vector<BufferInterval> &intervals) {
  std::vector<size_t> roots = chainRoots(intervals);
  std::vector<size_t> blockOf(intervals.size());
  std::vector<size_t> blockOfRoot(intervals.size(), SIZE_MAX);
  std::vector<PackingBlock> blocks;
  for (size_t i = 0; i < intervals.size(); ++i) {
    size_t &block = blockOfRoot[roots[i]];
    const BufferInterval &interval = intervals[i];
    if (block == SIZE_MAX) {
      block = blocks.size();
      blocks.push_back({alignToArena(interval.size), interval.start,
                        interval.end, interval.fixedOffset});
    } else {
      PackingBlock &chain = blocks[block];
      chain.size = std::max(chain.size, alignToArena(interval.size));
      chain.start = std::min(chain.start, interval.start);
      chain.end = std::max(chain.end, interval.end);
      if (interval.fixedOffset >= 0)
        chain.fixedOffset = interval.fixedOffset;
    }
    blockOf[i] = block;
  }
  return {std::move(blocks), std::move(blockOf)};
}

int64_t blocksLowerBound(const std::vector<PackingBlock> &blocks) {
  // Each block adds its size at `start` and removes it after `end`.
  std::vector<std::pair<int64_t, int64_t>> events;
  events.reserve(2 * blocks.size());
  for (const PackingBlock &block : blocks) {
    events.emplace_back(block.start, block.size);
    events.emplace_back(block.end + 1, -block.size);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (size_t i = 0; i < events.size(); ++i) {
    live += events[i].second;
    bool lastAtPosition =
        i + 1 == events.size() || events[i + 1].first != events[i].first;
    if (lastAtPosition)
      peak = std::max(peak, live);
  }
  return peak;
}

/// Two members of one in-place chain fixed at different offsets (the chain
/// has one), or empty. `intervals` must be acyclic.
std::string conflictingChainOffsets(
    const std::vector<BufferInterval> &intervals) {
  std::vector<size_t> roots = chainRoots(intervals);
  // The first fixed member of each chain, by its root.
  std::vector<int64_t> fixedMember(intervals.size(), -1);
  for (size_t i = 0; i < intervals.size(); ++i) {
    if (intervals[i].fixedOffset < 0)
      continue;
    int64_t &first = fixedMember[roots[i]];
    if (first < 0) {
      first = static_cast<int64_t>(i);
      continue;
    }
    if (intervals[first].fixedOffset != intervals[i].fixedOffset)
      return "interval " + std::to_string(i) + " is fixed at offset " +
             std::to_string(intervals[i].fixedOffset) + ", but interval " +
             std::to_string(first) + " of its in-place chain at " +
             std::to_string(intervals[first].fixedOffset);
  }
  return "";
}

/// Two fixed blocks live together whose bytes overlap: no strategy could
/// keep both. Named by their first fixed members; a chain's bytes are its
/// largest member's. `intervals` must be acyclic, their chains agreeing.
std::string overlappingFixedBlocks(
    const std::vector<BufferInterval> &intervals) {
  auto [blocks, blockOf] = chainBlocks(intervals);
  std::vector<int64_t> nameOf(blocks.size(), -1);
  for (size_t i = 0; i < intervals.size(); ++i)
    if (intervals[i].fixedOffset >= 0 && nameOf[blockOf[i]] < 0)
      nameOf[blockOf[i]] = static_cast<int64_t>(i);
  std::vector<size_t> fixed;
  for (size_t b = 0; b < blocks.size(); ++b)
    if (blocks[b].fixedOffset >= 0)
      fixed.push_back(b);
  std::stable_sort(fixed.begin(), fixed.end(), [&](size_t a, size_t b) {
    return blocks[a].start < blocks[b].start;
  });
  auto bytes = [&](size_t b) {
    return "interval " + std::to_string(nameOf[b]) + " [" +
           std::to_string(blocks[b].fixedOffset) + ", " +
           std::to_string(blocks[b].fixedOffset + blocks[b].size) + ")";
  };
  for (size_t i = 0; i < fixed.size(); ++i) {
    const PackingBlock &a = blocks[fixed[i]];
    for (size_t j = i + 1; j < fixed.size(); ++j) {
      const PackingBlock &b = blocks[fixed[j]];
      if (b.start > a.end)
        break;
      if (a.fixedOffset < b.fixedOffset + b.size &&
          b.fixedOffset < a.fixedOffset + a.size)
        return bytes(fixed[i]) + " and " + bytes(fixed[j]) +
               ", both fixed, overlap while both are live";
    }
  }
  return "";
}

/// An interval that `strategy` did not put at its fixed offset, or empty.
std::string movedFixedInterval(const std::vector<BufferInterval> &intervals,
                               const std::vector<size_t> &blockOf,
                               const std::vector<int64_t> &blockOffsets,
                               std::string_view strategy) {
  for (size_t i = 0; i < intervals.size(); ++i) {
    int64_t fixed = intervals[i].fixedOffset;
    int64_t offset = blockOffsets[blockOf[i]];
    if (fixed >= 0 && offset != fixed)
      return "strategy '" + std::string(strategy) + "' placed interval " +
             std::to_string(i) + " at offset " + std::to_string(offset) +
             ", not at its fixed offset " + std::to_string(fixed);
  }
  return "";
}

} // namespace

const PackingStrategy *findPackingStrategy(std::string_view name) {
  for (const std::unique_ptr<PackingStrategy> &strategy : registry())
    if (strategy->name() == name)
      return strategy.get();
  return nullptr;
}

std::vector<std::string> packingStrategyNames() {
  std::vector<std::string> names;
  for (const std::unique_ptr<PackingStrategy> &strategy : registry())
    names.emplace_back(strategy->name());
  std::sort(names.begin(), names.end());
  return names;
}

void registerPackingStrategy(std::unique_ptr<PackingStrategy> strategy) {
  for (std::unique_ptr<PackingStrategy> &existing : registry())
    if (existing->name() == strategy->name()) {
      existing = std::move(strategy);
      return;
    }
  registry().push_back(std::move(strategy));
}

std::string validateIntervals(const std::vector<BufferInterval> &intervals) {
  const int64_t count = static_cast<int64_t>(intervals.size());
  std::vector<bool> takenOver(intervals.size(), false);
  // No placement puts a block past the end of the highest fixed block plus
  // the sum of every aligned size (the linear strategy comes close), so if
  // that fits in int64, so do every offset, the arena and the lower bound.
  // Each tensor is at most kMaxTensorBytes; only tens of thousands of such
  // buffers exceed it.
  int64_t total = 0;
  int64_t fixedEnd = 0, highestFixed = -1;
  for (int64_t i = 0; i < count; ++i) {
    const BufferInterval &interval = intervals[i];
    std::string which = "interval " + std::to_string(i);
    if (interval.size < 0)
      return which + " has a negative size";
    std::optional<int64_t> aligned =
        checkedAdd(interval.size, kArenaAlignment - 1);
    std::optional<int64_t> sum =
        aligned ? checkedAdd(total, *aligned / kArenaAlignment * kArenaAlignment)
                : std::nullopt;
    if (!sum)
      return "the buffers up to interval " + std::to_string(i) +
             " take more than 2^63 bytes together";
    total = *sum;
    if (interval.start < 0 || interval.start > interval.end)
      return which + " has an empty or negative live range [" +
             std::to_string(interval.start) + ", " +
             std::to_string(interval.end) + "]";
    if (interval.fixedOffset < -1 ||
        (interval.fixedOffset >= 0 &&
         interval.fixedOffset % kArenaAlignment != 0))
      return which + " is fixed at offset " +
             std::to_string(interval.fixedOffset) +
             ", neither -1 (free) nor a non-negative multiple of " +
             std::to_string(kArenaAlignment);
    if (interval.fixedOffset >= 0) {
      std::optional<int64_t> end = checkedAdd(
          interval.fixedOffset, *aligned / kArenaAlignment * kArenaAlignment);
      if (!end)
        return which + ", fixed at offset " +
               std::to_string(interval.fixedOffset) + ", ends past 2^63";
      if (*end > fixedEnd) {
        fixedEnd = *end;
        highestFixed = i;
      }
    }
    if (interval.reuses < 0)
      continue;
    if (interval.reuses >= count || interval.reuses == i)
      return which + " reuses " + std::to_string(interval.reuses) +
             ", which is not another interval";
    const BufferInterval &target = intervals[interval.reuses];
    if (target.end != interval.start)
      return which + " reuses interval " + std::to_string(interval.reuses) +
             ", which ends at " + std::to_string(target.end) +
             ", not where it starts (" + std::to_string(interval.start) + ")";
    if (takenOver[interval.reuses])
      return which + " reuses interval " + std::to_string(interval.reuses) +
             ", which another interval already took over";
    takenOver[interval.reuses] = true;
  }
  // A cycle is possible only among one-position intervals at one position.
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = i;
    for (int64_t steps = 0; at >= 0; ++steps) {
      if (steps > count)
        return "interval " + std::to_string(i) + " is on a cycle of reuses";
      at = intervals[at].reuses;
    }
  }
  if (!checkedAdd(fixedEnd, total))
    return "the buffers above interval " + std::to_string(highestFixed) +
           " (fixed, ending at byte " + std::to_string(fixedEnd) +
           ") take more than 2^63 bytes together";
  if (std::string error = conflictingChainOffsets(intervals); !error.empty())
    return error;
  return overlappingFixedBlocks(intervals);
}

int64_t arenaLowerBound(const std::vector<BufferInterval> &intervals) {
  return blocksLowerBound(chainBlocks(intervals).first);
}

ArenaPlan packArena(const std::vector<BufferInterval> &intervals,
                    const PackingStrategy &strategy) {
  ArenaPlan plan;
  plan.error = validateIntervals(intervals);
  if (!plan.error.empty())
    return plan;
  auto [blocks, blockOf] = chainBlocks(intervals);
  plan.lowerBound = blocksLowerBound(blocks);
  std::vector<int64_t> blockOffsets = strategy.place(blocks);
  if (blockOffsets.size() != blocks.size()) {
    plan.error = "strategy '" + std::string(strategy.name()) + "' placed " +
                 std::to_string(blockOffsets.size()) + " of " +
                 std::to_string(blocks.size()) + " blocks";
    return plan;
  }
  plan.error =
      movedFixedInterval(intervals, blockOf, blockOffsets, strategy.name());
  if (!plan.error.empty())
    return plan;
  for (size_t b = 0; b < blocks.size(); ++b)
    plan.arenaSize =
        std::max(plan.arenaSize, blockOffsets[b] + blocks[b].size);
  plan.offsets.reserve(intervals.size());
  for (size_t block : blockOf)
    plan.offsets.push_back(blockOffsets[block]);
  return plan;
}

std::string checkArenaPlan(const std::vector<BufferInterval> &intervals,
                           const ArenaPlan &plan) {
  if (std::string error = validateIntervals(intervals); !error.empty())
    return error;
  if (plan.offsets.size() != intervals.size())
    return "the plan has " + std::to_string(plan.offsets.size()) +
           " offsets for " + std::to_string(intervals.size()) + " intervals";
  if (plan.arenaSize < plan.lowerBound)
    return "the arena (" + std::to_string(plan.arenaSize) +
           ") is below the lower bound (" + std::to_string(plan.lowerBound) +
           ")";
  std::vector<size_t> roots = chainRoots(intervals);
  std::vector<size_t> byStart(intervals.size());
  std::iota(byStart.begin(), byStart.end(), 0);
  std::sort(byStart.begin(), byStart.end(), [&](size_t a, size_t b) {
    return intervals[a].start < intervals[b].start;
  });
  for (size_t i = 0; i < byStart.size(); ++i) {
    size_t a = byStart[i];
    int64_t offsetA = plan.offsets[a];
    int64_t endA = offsetA + alignToArena(intervals[a].size);
    std::string which = "interval " + std::to_string(a);
    int64_t fixedA = intervals[a].fixedOffset;
    if (fixedA >= 0 && offsetA != fixedA)
      return which + " is at offset " + std::to_string(offsetA) +
             ", not at its fixed offset " + std::to_string(fixedA);
    if (offsetA < 0 || offsetA % kArenaAlignment != 0)
      return which + " is at offset " + std::to_string(offsetA) +
             ", not a non-negative multiple of " +
             std::to_string(kArenaAlignment);
    if (endA > plan.arenaSize)
      return which + " ends at byte " + std::to_string(endA) +
             ", past the arena (" + std::to_string(plan.arenaSize) + ")";
    for (size_t j = i + 1; j < byStart.size(); ++j) {
      size_t b = byStart[j];
      if (intervals[b].start > intervals[a].end)
        break;
      if (roots[a] == roots[b])
        continue;
      int64_t offsetB = plan.offsets[b];
      int64_t endB = offsetB + alignToArena(intervals[b].size);
      if (offsetA < endB && offsetB < endA)
        return which + " [" + std::to_string(offsetA) + ", " +
               std::to_string(endA) + ") and interval " + std::to_string(b) +
               " [" + std::to_string(offsetB) + ", " + std::to_string(endB) +
               ") overlap while both are live";
    }
  }
  return "";
}

} // namespace fuse
