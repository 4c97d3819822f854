#include "strategy/plan_summary.h"

#include <algorithm>
#include <array>
#include <map>
#include <tuple>
#include <utility>

#include "graphs/layer_weights.h"
#include "plans/mesh_pricing.h"
#include "graphs/op_registry.h"
#include "strategy/baselines.h"

namespace pase {
namespace {

// A layer's split as practitioners name it: the batch's ways (data), the
// product of the splits of the weight's dimensions (tensor: heads, hidden,
// vocabulary, a contraction), and of the activation's other dimensions, which
// leave the weight whole (rows: the sequence; a per-pixel layer's image, as
// conv2d's own image is never split), each with its pieces inside one node
// (0: not placed).
struct Pattern {
  int64_t data = 1, tensor = 1, rows = 1;
  int64_t data_in_node = 0, tensor_in_node = 0, rows_in_node = 0;
  auto key() const {
    return std::make_tuple(tensor, rows, data, tensor_in_node, rows_in_node, data_in_node);
  }
  bool operator<(const Pattern& other) const { return key() < other.key(); }
};

enum class Role { Data, Tensor, Rows };

// Per domain dimension of a weight layer, which of the three its split is.
std::vector<Role> dimension_roles(const Vertex& vertex, const VertexModel& model) {
  std::vector<Role> roles(model.domain.size(), Role::Rows);
  for (const LayerWeight& weight : layer_weights(vertex, model))
    for (const std::vector<int>& dims : weight.split)
      for (int d : dims) roles[static_cast<size_t>(d)] = Role::Tensor;
  if (const int batch = batch_dimension(vertex, model); batch >= 0) roles[static_cast<size_t>(batch)] = Role::Data;
  return roles;
}

Pattern pattern_of(const Vertex& vertex, const VertexModel& model, const int32_t* config, const PlannedLayer* placed,
                   const std::vector<int64_t>& per_node) {
  Pattern p;
  if (placed) p.data_in_node = p.tensor_in_node = p.rows_in_node = 1;
  const std::vector<Role> roles = dimension_roles(vertex, model);
  for (size_t d = 0; d < roles.size(); ++d) {
    int64_t& ways = roles[d] == Role::Data ? p.data : roles[d] == Role::Tensor ? p.tensor : p.rows;
    int64_t& in_node = roles[d] == Role::Data ? p.data_in_node : roles[d] == Role::Tensor ? p.tensor_in_node : p.rows_in_node;
    ways *= config[d];
    if (placed)
      for (int axis : placed->mesh_axes[d]) in_node *= per_node[static_cast<size_t>(axis)];
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

// "tensor 4 (inside nodes) x sequence 2 x data 8 (across nodes)": the split parts, tensor first.
std::string pattern_words(const Pattern& p) {
  std::string text;
  auto part = [&](const char* name, int64_t total, int64_t in_node) {
    if (total == 1) return;
    text += (text.empty() ? "" : " x ") + std::string(name) + " " + ways(total, in_node);
  };
  part("tensor", p.tensor, p.tensor_in_node);
  part("sequence", p.rows, p.rows_in_node);
  part("data", p.data, p.data_in_node);
  return text.empty() ? "one device" : text;
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
