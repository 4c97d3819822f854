#pragma once
// When two ranges of a graph's vertices are the same stage (docs/pipeline.md):
// equal keys mean equal vertex models and cutoffs in the same order, the same
// edges inside, the same tensors read from before, the same weights read twice.
// A deep model's identical blocks make every stage of k blocks one key, so
// the pipeline search solves each once per device count.
#include <cstdint>
#include <utility>
#include <vector>

#include "graphs/graph.h"

namespace pase {

class StageKeys {
 public:
  explicit StageKeys(const Graph& graph);
  /// The key of the vertices [begin, end).
  [[nodiscard]] std::vector<int64_t> key(int begin, int end) const;
  /// Weights read again by a vertex after an earlier reader: (reader, the
  /// reader before it), in vertex order (tied weights, shared parameters).
  [[nodiscard]] std::vector<std::pair<int, int>> repeated_reads() const;

 private:
  const Graph& graph_;
  std::vector<int64_t> kind_;  ///< per vertex: its model and cutoff, interned
  /// per vertex, per weight it reads: the last earlier vertex that reads the same weight, else -1
  std::vector<std::vector<int>> weight_before_;
};

}  // namespace pase
