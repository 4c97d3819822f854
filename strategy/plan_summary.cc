#include "strategy/plan_summary.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <utility>

#include "graphs/layer_weights.h"
#include "plans/mesh_pricing.h"
#include "strategy/baselines.h"

namespace pase {
namespace {

// A layer's split as practitioners name it: the batch's ways (data) and the
// product of the others (tensor), each with its pieces inside one node (0:
// not placed).
struct Pattern {
  int64_t data = 1, tensor = 1;
  int64_t data_in_node = 0, tensor_in_node = 0;
  auto key() const { return std::make_tuple(tensor, data, tensor_in_node, data_in_node); }
  bool operator<(const Pattern& other) const { return key() < other.key(); }
};

Pattern pattern_of(const Vertex& vertex, const VertexModel& model, const int32_t* config, const PlannedLayer* placed,
                   const std::vector<int64_t>& per_node) {
  Pattern p;
  const int batch = batch_dimension(vertex, model);
  if (placed) p.data_in_node = p.tensor_in_node = 1;
  for (int d = 0; d < static_cast<int>(model.domain.size()); ++d) {
    const bool data = d == batch;
    (data ? p.data : p.tensor) *= config[d];
    if (placed)
      for (int axis : placed->mesh_axes[static_cast<size_t>(d)])
        (data ? p.data_in_node : p.tensor_in_node) *= per_node[static_cast<size_t>(axis)];
  }
  return p;
}

// "8 (inside nodes)", "8 (across nodes)", "8 (4 inside nodes x 2 across)", or "8" unplaced.
std::string ways(int64_t total, int64_t in_node) {
  std::string text = std::to_string(total);
  if (in_node == 0 || total == 1) return text;
  if (in_node == total) return text + " (inside nodes)";
  if (in_node == 1) return text + " (across nodes)";
  return text + " (" + std::to_string(in_node) + " inside nodes x " + std::to_string(total / in_node) + " across)";
}

std::string pattern_words(const Pattern& p) {
  if (p.tensor == 1 && p.data == 1) return "one device";
  if (p.tensor == 1) return "data " + ways(p.data, p.data_in_node);
  if (p.data == 1) return "tensor " + ways(p.tensor, p.tensor_in_node);
  return "tensor " + ways(p.tensor, p.tensor_in_node) + " x data " + ways(p.data, p.data_in_node);
}

// ", ZeRO-1, recompute full, 4 micro-batches": the techniques, each layer's
// counted under per-layer choices (only then: a fixed mode names itself).
std::string technique_words(const Graph& graph, const CostTables& tables, const TrainingSetup& setup) {
  std::string text;
  if (setup.zero == kZeroAuto) {
    std::array<size_t, kMaxZeroStage + 1> staged{};
    size_t with_weights = 0;
    for (size_t v = 0; v < graph.vertices.size(); ++v) {
      if (layer_weights(graph.vertices[v], tables.models[v]).empty()) continue;
      ++with_weights;
      ++staged[static_cast<size_t>(zero_stage_of(setup, graph.vertices[v].zero))];
    }
    for (int z = kMaxZeroStage; z >= 1; --z)
      if (staged[static_cast<size_t>(z)] > 0)
        text += ", ZeRO-" + std::to_string(z) + " on " + std::to_string(staged[static_cast<size_t>(z)]) + " of " +
                std::to_string(with_weights);
  } else if (setup.zero > 0) {
    text += ", ZeRO-" + std::to_string(setup.zero);
  }
  if (setup.recompute == Recompute::Full) {
    text += ", recompute full";
  } else if (setup.recompute == Recompute::Auto) {
    size_t recomputed = 0;
    for (const Vertex& v : graph.vertices) recomputed += v.recompute;
    if (recomputed > 0)
      text += ", recompute " + std::to_string(recomputed) + " of " + std::to_string(graph.vertices.size()) + " layers";
  }
  if (setup.micro_batches > 1) text += ", " + std::to_string(setup.micro_batches) + " micro-batches";
  return text;
}

}  // namespace

std::string plan_summary(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                         const TrainingSetup& setup, const Plan* plan) {
  // Nodes are worth naming only where the mesh spans several.
  const bool nodes = plan && plan->mesh.devices_per_node > 0 && plan->mesh.devices_per_node < plan->mesh.devices();
  const std::vector<int64_t> per_node = nodes ? axis_devices_per_node(plan->mesh) : std::vector<int64_t>{};
  std::map<Pattern, size_t> count;
  size_t with_weights = 0;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const VertexModel& model = tables.models[v];
    if (!model.work.weight_operand) continue;  // a GEMM's or a table's weight: what tensor parallelism splits
    ++with_weights;
    const PlannedLayer* placed = nodes ? &plan->layers[v] : nullptr;
    ++count[pattern_of(graph.vertices[v], model, tables.configs[v][static_cast<size_t>(choice[v])], placed, per_node)];
  }
  std::string text;
  if (count.size() == 1) {
    text = pattern_words(count.begin()->first);
  } else if (count.empty()) {
    text = "no weight GEMMs";
  } else {
    std::vector<std::pair<size_t, Pattern>> ranked;
    for (const auto& [pattern, n] : count) ranked.emplace_back(n, pattern);
    std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    text = "mixed: " + std::to_string(ranked.size()) + " patterns over " + std::to_string(with_weights) +
           " weight GEMMs (";
    for (size_t i = 0; i < ranked.size() && i < 4; ++i)
      text += (i ? "; " : "") + pattern_words(ranked[i].second) + " on " + std::to_string(ranked[i].first);
    text += ranked.size() > 4 ? "; ...)" : ")";
  }
  return text + technique_words(graph, tables, setup);
}

}  // namespace pase
