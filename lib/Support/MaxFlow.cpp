//===- MaxFlow.cpp - Maximum flow and minimum cut (Dinic) -----------------===//

#include "fuse/Support/MaxFlow.h"

#include <algorithm>
#include <queue>

using namespace fuse;

int FlowNetwork::addNode() {
  adjacency.emplace_back();
  return numNodes() - 1;
}

void FlowNetwork::addEdge(int from, int to, int64_t capacity) {
  adjacency[from].push_back(static_cast<int>(edges.size()));
  edges.push_back({to, std::min(capacity, kInfinity)});
  adjacency[to].push_back(static_cast<int>(edges.size()));
  edges.push_back({from, 0});
}

/// Breadth-first levels from the source over edges with capacity left.
bool FlowNetwork::buildLevels(int source, int sink) {
  level.assign(adjacency.size(), -1);
  std::queue<int> queue;
  level[source] = 0;
  queue.push(source);
  while (!queue.empty()) {
    int node = queue.front();
    queue.pop();
    for (int index : adjacency[node]) {
      const Edge &edge = edges[index];
      if (edge.capacity > 0 && level[edge.to] < 0) {
        level[edge.to] = level[node] + 1;
        queue.push(edge.to);
      }
    }
  }
  return level[sink] >= 0;
}

/// Pushes up to `limit` along level-increasing paths (a blocking flow, one
/// path at a time; nextEdge skips edges already saturated in this phase).
/// Iterative, so that long paths (a chain of thousands of ops) cannot
/// overflow the stack.
int64_t FlowNetwork::push(int source, int sink, int64_t limit) {
  std::vector<int> path; // edge indices from the source
  int node = source;
  while (true) {
    if (node == sink) {
      int64_t amount = limit;
      for (int index : path)
        amount = std::min(amount, edges[index].capacity);
      for (int index : path) {
        edges[index].capacity -= amount;
        edges[index ^ 1].capacity += amount;
      }
      return amount;
    }
    bool advanced = false;
    for (int &i = nextEdge[node]; i < static_cast<int>(adjacency[node].size());
         ++i) {
      int index = adjacency[node][i];
      const Edge &edge = edges[index];
      if (edge.capacity > 0 && level[edge.to] == level[node] + 1) {
        path.push_back(index);
        node = edge.to;
        advanced = true;
        break;
      }
    }
    if (advanced)
      continue;
    // Dead end: retreat and never try this node again in this phase.
    level[node] = -1;
    if (path.empty())
      return 0;
    int back = path.back();
    path.pop_back();
    node = edges[back ^ 1].to;
    ++nextEdge[node];
  }
}

int64_t FlowNetwork::maxFlow(int source, int sink) {
  int64_t total = 0;
  while (buildLevels(source, sink)) {
    nextEdge.assign(adjacency.size(), 0);
    while (int64_t pushed = push(source, sink, kInfinity)) {
      total += pushed;
      if (total >= kInfinity)
        break;
    }
    if (total >= kInfinity)
      break;
  }
  // The source side: what the source still reaches.
  sourceSide.assign(adjacency.size(), false);
  std::vector<int> stack = {source};
  sourceSide[source] = true;
  while (!stack.empty()) {
    int node = stack.back();
    stack.pop_back();
    for (int index : adjacency[node]) {
      const Edge &edge = edges[index];
      if (edge.capacity > 0 && !sourceSide[edge.to]) {
        sourceSide[edge.to] = true;
        stack.push_back(edge.to);
      }
    }
  }
  return total;
}
