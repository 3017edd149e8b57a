//===- MaxFlow.h - Maximum flow and minimum cut ----------------*- C++ -*-===//
//
// Dinic's algorithm on a directed network with 64-bit capacities. After
// maxFlow(), the nodes reachable from the source in the residual network
// are the source side of a minimum cut: fuse-rematerialize partitions a
// training step's forward values into kept and recomputed this way, as
// AOTAutograd's min-cut partitioner does. Plain C++ (no MLIR).
//
//===----------------------------------------------------------------------===//

#ifndef FUSE_SUPPORT_MAXFLOW_H
#define FUSE_SUPPORT_MAXFLOW_H

#include <cstdint>
#include <limits>
#include <vector>

namespace fuse {

class FlowNetwork {
public:
  /// A capacity no finite cut can afford: an edge that must not be cut.
  static constexpr int64_t kInfinity = std::numeric_limits<int64_t>::max() / 4;

  explicit FlowNetwork(int nodes = 0) : adjacency(nodes) {}

  int addNode();
  int numNodes() const { return static_cast<int>(adjacency.size()); }
  void addEdge(int from, int to, int64_t capacity);

  /// The maximum flow from `source` to `sink` (at least kInfinity when no
  /// finite cut separates them). Call once.
  int64_t maxFlow(int source, int sink);

  /// After maxFlow: whether `node` is on the source side of the minimum cut
  /// (reachable from the source through edges with capacity left).
  bool onSourceSide(int node) const { return sourceSide[node]; }

private:
  struct Edge {
    int to;
    int64_t capacity; // left in the residual network
  };
  bool buildLevels(int source, int sink);
  int64_t push(int node, int sink, int64_t limit);

  std::vector<Edge> edges; // edge i and i ^ 1 are each other's reverse
  std::vector<std::vector<int>> adjacency;
  std::vector<int> level, nextEdge;
  std::vector<bool> sourceSide;
};

} // namespace fuse

#endif // FUSE_SUPPORT_MAXFLOW_H
