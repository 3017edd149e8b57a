//===- ArenaPackingTest.cpp - Arena packing: hand cases and properties ----===//

#include "fuse/Support/ArenaPacking.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

using fuse::ArenaPlan;
using fuse::BufferInterval;
using fuse::PackingBlock;

namespace {

const fuse::PackingStrategy &strategy(const char *name) {
  const fuse::PackingStrategy *found = fuse::findPackingStrategy(name);
  EXPECT_NE(found, nullptr) << name;
  return *found;
}

ArenaPlan pack(const std::vector<BufferInterval> &intervals,
               const char *name = "best-fit") {
  ArenaPlan plan = fuse::packArena(intervals, strategy(name));
  EXPECT_EQ(plan.error, "");
  EXPECT_EQ(fuse::checkArenaPlan(intervals, plan), "");
  return plan;
}

TEST(ArenaPacking, Alignment) {
  EXPECT_EQ(fuse::alignToArena(0), 0);
  EXPECT_EQ(fuse::alignToArena(1), 256);
  EXPECT_EQ(fuse::alignToArena(256), 256);
  EXPECT_EQ(fuse::alignToArena(257), 512);
}

TEST(ArenaPacking, Empty) {
  ArenaPlan plan = pack({});
  EXPECT_EQ(plan.arenaSize, 0);
  EXPECT_EQ(plan.lowerBound, 0);
  EXPECT_TRUE(plan.offsets.empty());
}

TEST(ArenaPacking, OneBufferTakesItsAlignedSize) {
  ArenaPlan plan = pack({{/*size=*/1, /*start=*/0, /*end=*/0}});
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0}));
  EXPECT_EQ(plan.arenaSize, 256);
  EXPECT_EQ(plan.lowerBound, 256);
}

TEST(ArenaPacking, DisjointLifetimesShareStorage) {
  // [0, 1] and [2, 3] never meet: both at 0.
  ArenaPlan plan = pack({{1000, 0, 1}, {700, 2, 3}});
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 0}));
  EXPECT_EQ(plan.arenaSize, 1024);
  EXPECT_EQ(plan.lowerBound, 1024);
}

TEST(ArenaPacking, TouchingLifetimesDoNot) {
  // Live ranges are inclusive: [0, 2] and [2, 3] meet at 2 (an op reading
  // one and writing the other).
  ArenaPlan plan = pack({{1024, 0, 2}, {512, 2, 3}});
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 1024}));
  EXPECT_EQ(plan.arenaSize, 1536);
  EXPECT_EQ(plan.lowerBound, 1536);
}

TEST(ArenaPacking, GreedyBySizeFillsTheFreedSlot) {
  // A and C (1024) never meet and take offset 0; B, live with both, goes
  // above them.
  ArenaPlan plan = pack({{1024, 0, 1}, {512, 0, 3}, {1024, 2, 3}});
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 1024, 0}));
  EXPECT_EQ(plan.arenaSize, 1536);
  EXPECT_EQ(plan.lowerBound, 1536);
}

TEST(ArenaPacking, BestFitTakesTheSmallestGap) {
  // At position 0: A [0, 1024), B [1024, 2048), C [2048, 2560),
  // D [2560, 3072). From position 1 only B and D remain, leaving the gaps
  // [0, 1024) and [2048, 2560): E (256) takes the smaller one, where a
  // first fit would take offset 0.
  ArenaPlan plan = pack(
      {{1024, 0, 0}, {1024, 0, 5}, {512, 0, 0}, {512, 0, 5}, {256, 1, 5}});
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 1024, 2048, 2560, 2048}));
  EXPECT_EQ(plan.arenaSize, 3072);
  EXPECT_EQ(plan.lowerBound, 3072);
}

TEST(ArenaPacking, LinearGivesEveryBufferItsOwnSlot) {
  ArenaPlan plan = pack({{1000, 0, 1}, {10, 2, 3}, {256, 4, 4}}, "linear");
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({0, 1024, 1280}));
  EXPECT_EQ(plan.arenaSize, 1536);
  // The bound does not depend on the strategy.
  EXPECT_EQ(plan.lowerBound, 1024);
}

TEST(ArenaPacking, InPlaceChainIsOneBlock) {
  // x [0, 2] is read at 2 by the op that writes y in place; z lives
  // throughout. Without the hint x and y are live together at 2.
  std::vector<BufferInterval> intervals = {
      {1024, 0, 2}, {1024, 2, 4, /*reuses=*/0}, {512, 0, 4}};
  ArenaPlan plan = pack(intervals);
  EXPECT_EQ(plan.offsets[0], plan.offsets[1]);
  EXPECT_EQ(plan.lowerBound, 1536);
  EXPECT_EQ(plan.arenaSize, 1536);

  intervals[1].reuses = -1;
  ArenaPlan separate = pack(intervals);
  EXPECT_NE(separate.offsets[0], separate.offsets[1]);
  EXPECT_EQ(separate.lowerBound, 2560);
  EXPECT_EQ(separate.arenaSize, 2560);
}

TEST(ArenaPacking, InPlaceChainTakesItsLargestMember) {
  // a -> b -> c in place, b larger than the others; d lives beside the
  // chain's end. Linear too keeps a chain together.
  std::vector<BufferInterval> intervals = {
      {256, 0, 1}, {600, 1, 3, 0}, {100, 3, 5, 1}, {256, 5, 6}};
  for (const char *name : {"best-fit", "linear"}) {
    ArenaPlan plan = pack(intervals, name);
    EXPECT_EQ(plan.offsets[0], plan.offsets[1]) << name;
    EXPECT_EQ(plan.offsets[1], plan.offsets[2]) << name;
    EXPECT_EQ(plan.lowerBound, 768 + 256) << name;
    EXPECT_EQ(plan.arenaSize, 768 + 256) << name;
  }
}

TEST(ArenaPacking, ZeroSizedBuffersTakeNoSpace) {
  ArenaPlan plan = pack({{0, 0, 3}, {256, 0, 3}, {0, 1, 1}});
  EXPECT_EQ(plan.arenaSize, 256);
  EXPECT_EQ(plan.lowerBound, 256);
}

TEST(ArenaPacking, InvalidIntervals) {
  auto error = [](std::vector<BufferInterval> intervals) {
    ArenaPlan plan = fuse::packArena(intervals, strategy("best-fit"));
    EXPECT_EQ(plan.error, fuse::validateIntervals(intervals));
    return plan.error;
  };
  EXPECT_EQ(error({{-1, 0, 0}}), "interval 0 has a negative size");
  EXPECT_EQ(error({{8, 3, 2}}),
            "interval 0 has an empty or negative live range [3, 2]");
  EXPECT_EQ(error({{8, -1, 2}}),
            "interval 0 has an empty or negative live range [-1, 2]");
  EXPECT_EQ(error({{8, 0, 2, 0}}),
            "interval 0 reuses 0, which is not another interval");
  EXPECT_EQ(error({{8, 0, 2, 5}}),
            "interval 0 reuses 5, which is not another interval");
  EXPECT_EQ(error({{8, 0, 2}, {8, 3, 4, 0}}),
            "interval 1 reuses interval 0, which ends at 2, not where it "
            "starts (3)");
  EXPECT_EQ(error({{8, 0, 2}, {8, 2, 4, 0}, {8, 2, 3, 0}}),
            "interval 2 reuses interval 0, which another interval already "
            "took over");
  EXPECT_EQ(error({{8, 3, 3, 1}, {8, 3, 3, 0}}),
            "interval 0 is on a cycle of reuses");
}

// Sizes whose sum (or one size rounded up to 256) passes int64: offsets and
// the arena would wrap, so packing refuses them instead.
TEST(ArenaPacking, SizesBeyondInt64AreRefused) {
  auto error = [](std::vector<BufferInterval> intervals) {
    return fuse::packArena(intervals, strategy("best-fit")).error;
  };
  const int64_t half = int64_t(1) << 62;
  EXPECT_EQ(error({{half, 0, 1}, {half - 256, 0, 1}}), "");
  EXPECT_EQ(error({{half, 0, 1}, {half, 2, 3}}),
            "the buffers up to interval 1 take more than 2^63 bytes together");
  EXPECT_EQ(error({{INT64_MAX, 0, 0}}),
            "the buffers up to interval 0 take more than 2^63 bytes together");
}

TEST(ArenaPacking, Registry) {
  std::vector<std::string> names = fuse::packingStrategyNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "best-fit"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "linear"), names.end());
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(fuse::findPackingStrategy("first-fit"), nullptr);
  EXPECT_EQ(fuse::findPackingStrategy(fuse::kDefaultPackingStrategy)->name(),
            "best-fit");
}

/// A third strategy, registered by the test: the swap needs no change to
/// the driver.
class TopDownStrategy final : public fuse::PackingStrategy {
public:
  std::string_view name() const override { return "test-top-down"; }
  std::vector<int64_t>
  place(const std::vector<PackingBlock> &blocks) const override {
    std::vector<int64_t> offsets(blocks.size());
    int64_t next = 0;
    for (size_t i = blocks.size(); i-- > 0;) {
      offsets[i] = next;
      next += blocks[i].size;
    }
    return offsets;
  }
};

TEST(ArenaPacking, RegisteredStrategyIsUsedByName) {
  fuse::registerPackingStrategy(std::make_unique<TopDownStrategy>());
  ArenaPlan plan = pack({{256, 0, 0}, {512, 0, 0}}, "test-top-down");
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({512, 0}));
}

//===----------------------------------------------------------------------===//
// Fixed offsets.
//===----------------------------------------------------------------------===//

/// An interval pinned at `offset`.
BufferInterval fixedAt(int64_t offset, int64_t size, int64_t start,
                       int64_t end, int64_t reuses = -1) {
  return {size, start, end, reuses, offset};
}

TEST(ArenaPacking, FreeBlocksPackAroundAFixedOne) {
  // F is fixed at [512, 1024) over [0, 2]. A, live with it, must not
  // overlap it; B, live only later, may take its bytes.
  std::vector<BufferInterval> intervals = {
      fixedAt(512, 512, 0, 2), {1024, 1, 2}, {1024, 3, 4}};
  ArenaPlan bestFit = pack(intervals);
  EXPECT_EQ(bestFit.offsets[0], 512);
  // A does not fit below F's [512, 1024): it goes above it.
  EXPECT_EQ(bestFit.offsets[1], 1024);
  EXPECT_EQ(bestFit.offsets[2], 0);
  EXPECT_EQ(bestFit.arenaSize, 2048);
  EXPECT_EQ(bestFit.lowerBound, 1536);

  ArenaPlan linear = pack(intervals, "linear");
  EXPECT_EQ(linear.offsets, std::vector<int64_t>({512, 1024, 2048}));
  EXPECT_EQ(linear.arenaSize, 3072);
}

TEST(ArenaPacking, BestFitUsesTheGapBelowAFixedBlock) {
  // F fixed at [1024, 1280) leaves [0, 1024) free below it; A fits there,
  // B (live with A and F) goes above F.
  std::vector<BufferInterval> intervals = {
      fixedAt(1024, 256, 0, 3), {1000, 0, 3}, {512, 1, 2}};
  ArenaPlan plan = pack(intervals);
  EXPECT_EQ(plan.offsets, std::vector<int64_t>({1024, 0, 1280}));
  EXPECT_EQ(plan.arenaSize, 1792);
  EXPECT_EQ(plan.lowerBound, 1792);
}

TEST(ArenaPacking, FixedMemberFixesItsChain) {
  // a -> b -> c in place, only b fixed: the whole chain is at 768, and d,
  // live beside it, is not.
  std::vector<BufferInterval> intervals = {
      {256, 0, 1}, fixedAt(768, 600, 1, 3, 0), {100, 3, 5, 1}, {256, 0, 5}};
  for (const char *name : {"best-fit", "linear"}) {
    ArenaPlan plan = pack(intervals, name);
    EXPECT_EQ(plan.offsets[0], 768) << name;
    EXPECT_EQ(plan.offsets[1], 768) << name;
    EXPECT_EQ(plan.offsets[2], 768) << name;
    EXPECT_TRUE(plan.offsets[3] + 256 <= 768 || plan.offsets[3] >= 1536)
        << name;
  }
  // Two members fixed at the same offset agree.
  intervals[2].fixedOffset = 768;
  EXPECT_EQ(pack(intervals).offsets[2], 768);
}

TEST(ArenaPacking, HighFixedOffsetSetsTheArena) {
  std::vector<BufferInterval> intervals = {fixedAt(1 << 20, 300, 2, 3),
                                           {256, 0, 4}};
  for (const char *name : {"best-fit", "linear"}) {
    ArenaPlan plan = pack(intervals, name);
    EXPECT_EQ(plan.offsets[0], 1 << 20) << name;
    EXPECT_GE(plan.arenaSize, (1 << 20) + 512) << name;
    // The bound ignores where fixed blocks are.
    EXPECT_EQ(plan.lowerBound, 768) << name;
  }
  EXPECT_EQ(pack(intervals).arenaSize, (1 << 20) + 512);
}

TEST(ArenaPacking, InvalidFixedOffsets) {
  auto error = [](std::vector<BufferInterval> intervals) {
    ArenaPlan plan = fuse::packArena(intervals, strategy("best-fit"));
    EXPECT_EQ(plan.error, fuse::validateIntervals(intervals));
    return plan.error;
  };
  EXPECT_EQ(error({{8, 0, 0}, fixedAt(100, 8, 0, 0)}),
            "interval 1 is fixed at offset 100, neither -1 (free) nor a "
            "non-negative multiple of 256");
  EXPECT_EQ(error({fixedAt(-256, 8, 0, 0)}),
            "interval 0 is fixed at offset -256, neither -1 (free) nor a "
            "non-negative multiple of 256");
  EXPECT_EQ(error({fixedAt(0, 1024, 0, 2), fixedAt(768, 256, 2, 3)}),
            "interval 0 [0, 1024) and interval 1 [768, 1024), both fixed, "
            "overlap while both are live");
  // Aligned sizes count: 257 bytes take [0, 512).
  EXPECT_EQ(error({fixedAt(0, 257, 0, 0), fixedAt(256, 1, 0, 0)}),
            "interval 0 [0, 512) and interval 1 [256, 512), both fixed, "
            "overlap while both are live");
  // The same bytes at different times, or side by side, are fine.
  EXPECT_EQ(error({fixedAt(0, 1024, 0, 1), fixedAt(0, 1024, 2, 3)}), "");
  EXPECT_EQ(error({fixedAt(0, 256, 0, 1), fixedAt(256, 256, 0, 1)}), "");
  EXPECT_EQ(error({fixedAt(0, 8, 0, 2), fixedAt(256, 8, 2, 4, 0)}),
            "interval 1 is fixed at offset 256, but interval 0 of its "
            "in-place chain at 0");
  // A chain spans its members and takes its largest one's bytes: c, fixed
  // at 512, meets the chain a -> b (fixed at 0 by a, 1024 bytes from b).
  EXPECT_EQ(error({fixedAt(0, 8, 0, 2), {1024, 2, 4, 0},
                   fixedAt(512, 8, 4, 4)}),
            "interval 0 [0, 1024) and interval 2 [512, 768), both fixed, "
            "overlap while both are live");
  EXPECT_EQ(error({fixedAt(INT64_MAX / 256 * 256, 512, 0, 0)}),
            "interval 0, fixed at offset " +
                std::to_string(INT64_MAX / 256 * 256) + ", ends past 2^63");
  const int64_t high = int64_t(1) << 62;
  EXPECT_EQ(error({fixedAt(high, 256, 0, 0), {high, 1, 1}}),
            "the buffers above interval 0 (fixed, ending at byte " +
                std::to_string(high + 256) +
                ") take more than 2^63 bytes together");
}

/// A strategy that ignores fixed offsets: packArena must refuse its plan.
class IgnoresFixedStrategy final : public fuse::PackingStrategy {
public:
  std::string_view name() const override { return "test-ignores-fixed"; }
  std::vector<int64_t>
  place(const std::vector<PackingBlock> &blocks) const override {
    return std::vector<int64_t>(blocks.size(), 0);
  }
};

TEST(ArenaPacking, StrategyMustKeepFixedOffsets) {
  IgnoresFixedStrategy ignores;
  ArenaPlan plan = fuse::packArena({{256, 0, 0}, fixedAt(512, 8, 1, 1)},
                                   ignores);
  EXPECT_EQ(plan.error, "strategy 'test-ignores-fixed' placed interval 1 at "
                        "offset 0, not at its fixed offset 512");
}

TEST(ArenaPacking, CheckerCatchesAMovedFixedInterval) {
  std::vector<BufferInterval> intervals = {{256, 0, 0}, fixedAt(512, 8, 1, 1)};
  ArenaPlan plan;
  plan.offsets = {0, 0};
  plan.arenaSize = 768;
  plan.lowerBound = 256;
  EXPECT_EQ(fuse::checkArenaPlan(intervals, plan),
            "interval 1 is at offset 0, not at its fixed offset 512");
  plan.offsets = {0, 512};
  EXPECT_EQ(fuse::checkArenaPlan(intervals, plan), "");
}

//===----------------------------------------------------------------------===//
// Properties over random interval sets.
//===----------------------------------------------------------------------===//

/// `count` buffers over `positions` positions: sizes log-uniform from 1 B to
/// 64 MB, lifetimes mostly short with a few long ones (as a training step's
/// activations), and a fifth of them taking over a buffer that ends where
/// they start when one is free (in-place chains).
std::vector<BufferInterval> randomIntervals(std::mt19937 &rng, int count,
                                            int positions) {
  std::uniform_real_distribution<double> logSize(0.0, std::log(64.0e6));
  std::uniform_int_distribution<int> position(0, positions - 1);
  std::geometric_distribution<int> shortLife(0.3);
  std::bernoulli_distribution longLived(0.15), inPlace(0.2);
  std::vector<BufferInterval> intervals;
  std::vector<bool> takenOver;
  for (int i = 0; i < count; ++i) {
    BufferInterval interval;
    interval.size = static_cast<int64_t>(std::exp(logSize(rng)));
    interval.start = position(rng);
    int life = longLived(rng) ? position(rng) : shortLife(rng);
    interval.end = std::min<int64_t>(positions - 1, interval.start + life);
    if (inPlace(rng))
      for (size_t j = 0; j < intervals.size(); ++j)
        if (!takenOver[j] && intervals[j].end == interval.start) {
          interval.reuses = static_cast<int64_t>(j);
          takenOver[j] = true;
          break;
        }
    intervals.push_back(interval);
    takenOver.push_back(false);
  }
  return intervals;
}

/// The lower bound by brute force: aligned bytes live at every position,
/// each in-place chain counted once, over its whole span, at its largest
/// member's size (it has one offset, so it holds that much throughout).
int64_t bruteForceLowerBound(const std::vector<BufferInterval> &intervals,
                             int positions) {
  std::vector<size_t> root(intervals.size());
  std::vector<BufferInterval> chains(intervals.size(), {0, positions, -1});
  for (size_t i = 0; i < intervals.size(); ++i) {
    root[i] = intervals[i].reuses >= 0 ? root[intervals[i].reuses] : i;
    BufferInterval &chain = chains[root[i]];
    chain.size = std::max(chain.size, fuse::alignToArena(intervals[i].size));
    chain.start = std::min(chain.start, intervals[i].start);
    chain.end = std::max(chain.end, intervals[i].end);
  }
  int64_t peak = 0;
  for (int at = 0; at < positions; ++at) {
    int64_t live = 0;
    for (const BufferInterval &chain : chains)
      if (chain.start <= at && at <= chain.end)
        live += chain.size;
    peak = std::max(peak, live);
  }
  return peak;
}

TEST(ArenaPackingProperties, NoOverlapAlignedAndAboveTheBound) {
  for (const char *name : {"best-fit", "linear"}) {
    for (unsigned seed = 0; seed < 300; ++seed) {
      std::mt19937 rng(seed);
      int count = std::uniform_int_distribution<int>(1, 150)(rng);
      int positions = std::uniform_int_distribution<int>(1, 100)(rng);
      std::vector<BufferInterval> intervals =
          randomIntervals(rng, count, positions);
      ASSERT_EQ(fuse::validateIntervals(intervals), "") << "seed " << seed;
      ArenaPlan plan = fuse::packArena(intervals, strategy(name));
      ASSERT_EQ(plan.error, "") << name << " seed " << seed;
      // checkArenaPlan: every offset 256-aligned, no two buffers live
      // together overlap (chain members excepted), all inside the arena,
      // and the arena at least the lower bound.
      EXPECT_EQ(fuse::checkArenaPlan(intervals, plan), "")
          << name << " seed " << seed;
      for (int64_t offset : plan.offsets)
        EXPECT_EQ(offset % fuse::kArenaAlignment, 0);
      EXPECT_GE(plan.arenaSize, plan.lowerBound) << name << " seed " << seed;
      EXPECT_EQ(plan.arenaSize % fuse::kArenaAlignment, 0);
      EXPECT_EQ(plan.lowerBound, bruteForceLowerBound(intervals, positions))
          << name << " seed " << seed;
      for (size_t i = 0; i < intervals.size(); ++i) {
        if (intervals[i].reuses >= 0) {
          EXPECT_EQ(plan.offsets[i], plan.offsets[intervals[i].reuses]);
        }
      }
    }
  }
}

TEST(ArenaPackingProperties, FixedOffsetsAreKept) {
  // Fixing some intervals where a first packing put them is valid by
  // construction (that packing kept its blocks apart); every strategy must
  // keep them there and pack the rest around them.
  for (const char *first : {"best-fit", "linear"}) {
    for (const char *name : {"best-fit", "linear"}) {
      for (unsigned seed = 0; seed < 150; ++seed) {
        std::mt19937 rng(seed);
        int count = std::uniform_int_distribution<int>(1, 150)(rng);
        int positions = std::uniform_int_distribution<int>(1, 100)(rng);
        std::vector<BufferInterval> intervals =
            randomIntervals(rng, count, positions);
        ArenaPlan firstPlan = pack(intervals, first);
        const double fractions[] = {0.05, 0.3, 1.0};
        double fraction = fractions[seed % 3];
        std::bernoulli_distribution fix(fraction);
        for (size_t i = 0; i < intervals.size(); ++i)
          if (fix(rng))
            intervals[i].fixedOffset = firstPlan.offsets[i];
        ASSERT_EQ(fuse::validateIntervals(intervals), "")
            << first << " then " << name << " seed " << seed;
        ArenaPlan plan = fuse::packArena(intervals, strategy(name));
        ASSERT_EQ(plan.error, "") << first << " then " << name << " seed "
                                  << seed;
        // checkArenaPlan also checks every fixed offset was kept.
        EXPECT_EQ(fuse::checkArenaPlan(intervals, plan), "")
            << first << " then " << name << " seed " << seed;
        EXPECT_EQ(plan.lowerBound, firstPlan.lowerBound);
        if (fraction == 1.0) {
          EXPECT_EQ(plan.offsets, firstPlan.offsets);
          EXPECT_EQ(plan.arenaSize, firstPlan.arenaSize);
        }
      }
    }
  }
}

TEST(ArenaPackingProperties, CheckerCatchesOverlaps) {
  // The checker the properties rely on does reject a bad plan.
  std::vector<BufferInterval> intervals = {{512, 0, 2}, {256, 1, 3}};
  ArenaPlan plan;
  plan.offsets = {0, 256};
  plan.arenaSize = 768;
  plan.lowerBound = 768;
  EXPECT_EQ(fuse::checkArenaPlan(intervals, plan),
            "interval 0 [0, 512) and interval 1 [256, 512) overlap while "
            "both are live");
  plan.offsets = {0, 612};
  plan.arenaSize = 1024;
  EXPECT_EQ(fuse::checkArenaPlan(intervals, plan),
            "interval 1 is at offset 612, not a non-negative multiple of 256");
  plan.offsets = {0, 512};
  plan.arenaSize = 512;
  EXPECT_EQ(fuse::checkArenaPlan(intervals, plan),
            "the arena (512) is below the lower bound (768)");
}

TEST(ArenaPackingProperties, BestFitIsCloseToTheBound) {
  // Best fit against the lower bound on random sets: the mean and the
  // worst ratio are printed, and bounded so a regression shows.
  double sum = 0, worst = 1;
  const int sets = 200;
  for (unsigned seed = 0; seed < sets; ++seed) {
    std::mt19937 rng(1000 + seed);
    std::vector<BufferInterval> intervals = randomIntervals(rng, 300, 200);
    ArenaPlan plan = pack(intervals);
    double ratio = static_cast<double>(plan.arenaSize) / plan.lowerBound;
    sum += ratio;
    worst = std::max(worst, ratio);
  }
  double mean = sum / sets;
  std::printf("best-fit arena / lower bound over %d random sets: mean %.4f, "
              "worst %.4f\n",
              sets, mean, worst);
  EXPECT_LE(mean, 1.10);
  EXPECT_LE(worst, 1.25);
}

} // namespace
