//===- MaxFlowTest.cpp - Dinic's max flow against hand cuts and brute force ===//

#include "fuse/Support/MaxFlow.h"

#include <gtest/gtest.h>

#include <random>
#include <tuple>
#include <vector>

using fuse::FlowNetwork;

namespace {

TEST(MaxFlow, TextbookNetwork) {
  // CLRS figure 26.1: maximum flow 23.
  FlowNetwork network(6);
  const int s = 0, v1 = 1, v2 = 2, v3 = 3, v4 = 4, t = 5;
  network.addEdge(s, v1, 16);
  network.addEdge(s, v2, 13);
  network.addEdge(v2, v1, 4);
  network.addEdge(v1, v3, 12);
  network.addEdge(v3, v2, 9);
  network.addEdge(v2, v4, 14);
  network.addEdge(v4, v3, 7);
  network.addEdge(v3, t, 20);
  network.addEdge(v4, t, 4);
  EXPECT_EQ(network.maxFlow(s, t), 23);
  // The minimum cut {s, v1, v2, v4} | {v3, t}: 12 + 7 + 4 = 23.
  EXPECT_TRUE(network.onSourceSide(s));
  EXPECT_TRUE(network.onSourceSide(v1));
  EXPECT_TRUE(network.onSourceSide(v2));
  EXPECT_TRUE(network.onSourceSide(v4));
  EXPECT_FALSE(network.onSourceSide(v3));
  EXPECT_FALSE(network.onSourceSide(t));
}

TEST(MaxFlow, InfiniteEdgesAreNeverCut) {
  // s -inf-> a -5-> b -inf-> t, and a -inf-> c -3-> t: the cut takes the
  // finite edges only.
  FlowNetwork network(5);
  network.addEdge(0, 1, FlowNetwork::kInfinity);
  network.addEdge(1, 2, 5);
  network.addEdge(2, 4, FlowNetwork::kInfinity);
  network.addEdge(1, 3, FlowNetwork::kInfinity);
  network.addEdge(3, 4, 3);
  EXPECT_EQ(network.maxFlow(0, 4), 8);
  EXPECT_TRUE(network.onSourceSide(3));
  EXPECT_FALSE(network.onSourceSide(2));
}

TEST(MaxFlow, NoFiniteCut) {
  FlowNetwork network(2);
  network.addEdge(0, 1, FlowNetwork::kInfinity);
  EXPECT_GE(network.maxFlow(0, 1), FlowNetwork::kInfinity);
}

TEST(MaxFlow, LongChainDoesNotRecurse) {
  const int length = 200000;
  FlowNetwork network(length);
  for (int i = 0; i + 1 < length; ++i)
    network.addEdge(i, i + 1, i == length / 2 ? 7 : 100);
  EXPECT_EQ(network.maxFlow(0, length - 1), 7);
  EXPECT_TRUE(network.onSourceSide(length / 2));
  EXPECT_FALSE(network.onSourceSide(length / 2 + 1));
}

/// On random small networks the flow equals the cheapest of all cuts, and
/// the reported source side is such a cut.
TEST(MaxFlow, MatchesBruteForceMinimumCut) {
  std::mt19937 random(12345);
  for (int trial = 0; trial < 300; ++trial) {
    const int nodes = 2 + static_cast<int>(random() % 8);
    const int source = 0, sink = nodes - 1;
    std::vector<std::tuple<int, int, int64_t>> edgeList;
    FlowNetwork network(nodes);
    int edgesWanted = static_cast<int>(random() % (nodes * 3));
    for (int e = 0; e < edgesWanted; ++e) {
      int from = static_cast<int>(random() % nodes);
      int to = static_cast<int>(random() % nodes);
      if (from == to)
        continue;
      int64_t capacity = random() % 5 == 0
                             ? FlowNetwork::kInfinity
                             : static_cast<int64_t>(random() % 20);
      edgeList.emplace_back(from, to, capacity);
      network.addEdge(from, to, capacity);
    }
    auto cutCost = [&](auto onSource) {
      int64_t cost = 0;
      for (auto [from, to, capacity] : edgeList)
        if (onSource(from) && !onSource(to))
          cost = std::min(FlowNetwork::kInfinity, cost + capacity);
      return cost;
    };
    int64_t best = FlowNetwork::kInfinity;
    for (unsigned mask = 0; mask < (1u << nodes); ++mask) {
      if (!(mask & 1u) || (mask & (1u << sink)))
        continue;
      best = std::min(best, cutCost([&](int n) { return (mask >> n) & 1u; }));
    }
    int64_t flow =
        std::min(network.maxFlow(source, sink), FlowNetwork::kInfinity);
    ASSERT_EQ(flow, best) << "trial " << trial;
    if (best < FlowNetwork::kInfinity) {
      EXPECT_EQ(cutCost([&](int n) { return network.onSourceSide(n); }), best)
          << "trial " << trial;
    }
  }
}

} // namespace
