#include "graphs/recompute.h"

#include <algorithm>

namespace pase {

std::vector<char> block_boundaries(const Graph& graph) {
  const size_t n = graph.vertices.size();
  // last_read[u]: the last vertex that reads an output of u (u itself: none).
  std::vector<size_t> last_read(n);
  for (size_t u = 0; u < n; ++u) last_read[u] = u;
  for (const TensorEdge& e : graph.edges)
    last_read[static_cast<size_t>(e.src)] = std::max(last_read[static_cast<size_t>(e.src)], static_cast<size_t>(e.dst));
  // Sweep in order: after vertex v, the activations alive are the outputs of
  // the vertices u <= v read after v. v is a boundary when it is the only such u
  // (or none is, after the last reader of everything).
  std::vector<char> boundary(n, 0);
  size_t furthest_before = 0;  // max last_read over u < v
  for (size_t v = 0; v < n; ++v) {
    const bool others_alive = v > 0 && furthest_before > v;
    boundary[v] = !others_alive;
    furthest_before = std::max(furthest_before, last_read[v]);
  }
  return boundary;
}

void set_full_recompute(Graph& graph, bool full) {
  const std::vector<char> boundary = block_boundaries(graph);
  for (size_t v = 0; v < graph.vertices.size(); ++v) graph.vertices[v].recompute = full && !boundary[v];
}

}  // namespace pase
