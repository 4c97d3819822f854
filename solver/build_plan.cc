#include "solver/build_plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <utility>

#include "graphs/check.h"
#include "graphs/error.h"
#include "graphs/layer_weights.h"
#include "graphs/redistribution_words.h"
#include "solver/dp.h"
#include "solver/mesh.h"
#include "solver/ordering.h"
#include "solver/realized_words.h"

namespace pase {
namespace {

using Assignment = std::vector<std::vector<int>>;  // per domain dim, its mesh axes

// A tensor's axes: each dimension runs over the axes of the letters it follows, in order.
AxisSpec spec_of(const SplitMap& map, const Assignment& assignment) {
  AxisSpec spec(map.size());
  for (size_t t = 0; t < map.size(); ++t)
    for (int d : map[t]) spec[t].insert(spec[t].end(), assignment[d].begin(), assignment[d].end());
  return spec;
}

std::vector<int64_t> split_of(const SplitMap& map, const int32_t* config) {
  std::vector<int64_t> split(map.size());
  tensor_split(map, config, split.data());
  return split;
}

double devices_of(const AxisSpec& spec, const Mesh& mesh) {
  double product = 1;
  for (const auto& axes : spec)
    for (int axis : axes) product *= static_cast<double>(mesh.shape[axis]);
  return product;
}

std::string config_text(const int32_t* config, size_t rank) {
  std::string text = "(";
  for (size_t d = 0; d < rank; ++d) text += (d ? "," : "") + std::to_string(config[d]);
  return text + ")";
}

std::string mesh_text(const Mesh& mesh) {
  std::string text = "[";
  for (size_t j = 0; j < mesh.shape.size(); ++j) text += (j ? "," : "") + std::to_string(mesh.shape[j]);
  return text + "]";
}

// The second DP: states are each vertex's axis assignments (all of them up
// to `limit`), vertex costs are 0, and each edge costs what its realized
// redistribution costs. Edge matrices are over classes of assignments that
// give the tensor the same axes, as in the first DP.
class AssignmentProblem {
 public:
  AssignmentProblem(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice, const Mesh& mesh,
                    const CostModel& model)
      : graph_(graph), tables_(tables), choice_(choice), mesh_(mesh), model_(model), coordinates_(mesh_coordinates(mesh)) {}

  // Returns the chosen assignment of every vertex; `exact` says whether
  // every vertex's candidates were complete.
  std::vector<Assignment> solve(size_t limit, const DpOptions& dp, bool& exact, size_t& largest) {
    const size_t n = graph_.vertices.size();
    candidates_.assign(n, {});
    exact = true;
    largest = 0;
    Objective objective;
    objective.vertex_cost.resize(n);
    for (size_t v = 0; v < n; ++v) {
      const int rank = static_cast<int>(tables_.models[v].domain.size());
      AxisAssignments found = axis_assignments(mesh_, config(v), rank, limit);
      PASE_ASSERT(!found.list.empty(), graph_.vertices[v].name, config_text(config(v), rank));
      exact = exact && found.complete;
      candidates_[v] = std::move(found.list);
      largest = std::max(largest, candidates_[v].size());
      objective.vertex_cost[v].assign(candidates_[v].size(), 0.0);
    }
    matrices_.clear();
    for (const TensorEdge& edge : graph_.edges) objective.pairs.push_back(edge_cost(edge));
    std::vector<std::string> names;
    for (const Vertex& vertex : graph_.vertices) names.push_back(vertex.name);
    EliminationPlan order = make_plan(undirected_neighbours(objective), OrderKind::MinDegree, objective.config_counts());
    DpResult result = solve_dp(objective, order, names, dp);
    std::vector<Assignment> chosen(n);
    for (size_t v = 0; v < n; ++v) chosen[v] = candidates_[v][static_cast<size_t>(result.choice[v])];
    return chosen;
  }

 private:
  const int32_t* config(size_t v) const { return tables_.configs[v][static_cast<size_t>(choice_[v])]; }

  // Classes of a vertex's candidates by the axes they give one of its tensors.
  std::vector<AxisSpec> classify(const SplitMap& map, size_t v, std::vector<int32_t>& class_of) const {
    std::map<AxisSpec, int32_t> index;
    std::vector<AxisSpec> specs;
    for (const Assignment& assignment : candidates_[v]) {
      AxisSpec spec = spec_of(map, assignment);
      auto [it, inserted] = index.try_emplace(spec, static_cast<int32_t>(specs.size()));
      if (inserted) specs.push_back(std::move(spec));
      class_of.push_back(it->second);
    }
    return specs;
  }

  // Edges that carry the same tensor between the same classes of axes (a
  // repeated block's) share one matrix, computed once.
  PairCost edge_cost(const TensorEdge& edge) {
    PairCost pair;
    pair.u = edge.src;
    pair.v = edge.dst;
    const Shape& tensor = graph_.vertices[edge.src].outputs[edge.src_port];
    std::vector<AxisSpec> held = classify(tables_.models[edge.src].outputs[edge.src_port], edge.src, pair.u_class);
    std::vector<AxisSpec> needed = classify(tables_.models[edge.dst].inputs[edge.dst_port], edge.dst, pair.v_class);
    pair.u_classes = static_cast<int32_t>(held.size());
    pair.v_classes = static_cast<int32_t>(needed.size());
    auto key = std::make_tuple(tensor, held, needed);
    auto cached = matrices_.find(key);
    if (cached != matrices_.end()) {
      pair.cost = cached->second;
      return pair;
    }
    // Each class's blocks once, so a pair of classes costs p·rank comparisons.
    std::vector<std::vector<Block>> held_blocks, needed_blocks;
    std::vector<double> held_devices, needed_devices;
    for (const AxisSpec& spec : held) {
      held_blocks.push_back(device_blocks(tensor, spec, mesh_, coordinates_));
      held_devices.push_back(devices_of(spec, mesh_));
    }
    for (const AxisSpec& spec : needed) {
      needed_blocks.push_back(device_blocks(tensor, spec, mesh_, coordinates_));
      needed_devices.push_back(devices_of(spec, mesh_));
    }
    auto cost = std::make_shared<std::vector<double>>(held.size() * needed.size());
    for (size_t i = 0; i < held.size(); ++i)
      for (size_t j = 0; j < needed.size(); ++j) {
        double words = realized_words(held_blocks[i], needed_blocks[j], tensor.size());
        (*cost)[i * needed.size() + j] = model_.fetch_cost(words, std::max(held_devices[i], needed_devices[j]));
      }
    matrices_.emplace(std::move(key), cost);
    pair.cost = std::move(cost);
    return pair;
  }

  const Graph& graph_;
  const CostTables& tables_;
  const std::vector<int32_t>& choice_;
  const Mesh& mesh_;
  const CostModel& model_;
  std::vector<std::vector<int64_t>> coordinates_;
  std::vector<std::vector<Assignment>> candidates_;
  std::map<std::tuple<Shape, std::vector<AxisSpec>, std::vector<AxisSpec>>, std::shared_ptr<const std::vector<double>>>
      matrices_;
};

PlannedTensor lay_out(std::string name, const Shape& shape, const SplitMap& map, const VertexModel& model,
                      const int32_t* config, const Assignment& assignment) {
  PlannedTensor tensor;
  tensor.name = std::move(name);
  tensor.shape = shape;
  tensor.split = split_of(map, config);
  tensor.dims = split_letters(map, model.letters);
  tensor.spec = spec_of(map, assignment);
  return tensor;
}

// The axes the layer uses under letters the weight does not follow, in mesh order.
std::vector<int> gradient_axes(const SplitMap& weight_map, const Assignment& assignment) {
  std::vector<int> axes;
  for (size_t d = 0; d < assignment.size(); ++d) {
    bool followed = false;
    for (const auto& dims : weight_map) followed = followed || std::find(dims.begin(), dims.end(), static_cast<int>(d)) != dims.end();
    if (!followed) axes.insert(axes.end(), assignment[d].begin(), assignment[d].end());
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

}  // namespace

std::string unrealizable_reason(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                                const Mesh& mesh) {
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const int32_t* config = tables.configs[v][static_cast<size_t>(choice[v])];
    const size_t rank = tables.models[v].domain.size();
    if (!realizable(mesh, config, static_cast<int>(rank)))
      return "layer '" + graph.vertices[v].name + "' splits " + config_text(config, rank) + ", which mesh " +
             mesh_text(mesh) + " cannot realize";
  }
  return "";
}

PlanResult build_plan(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                      const Mesh& mesh, const CostModel& model, const PlanOptions& options) {
  PlanResult result;
  AssignmentProblem problem(graph, tables, choice, mesh, model);
  DpOptions dp;
  dp.max_table_bytes = options.max_table_bytes;
  dp.threads = options.threads;
  std::vector<Assignment> chosen;
  // Fewer candidates per layer until the DP fits; the plan then says it is not exact.
  for (size_t limit = options.max_assignments;; limit = std::max<size_t>(1, limit / 6)) {
    try {
      chosen = problem.solve(limit, dp, result.exact, result.largest_candidate_set);
      if (limit < options.max_assignments) result.exact = false;
      break;
    } catch (const ResourceError&) {
      if (limit == 1) throw;
    }
  }
  Plan& plan = result.plan;
  plan.mesh = mesh;
  const std::vector<std::vector<int64_t>> coordinates = mesh_coordinates(mesh);
  double layer_total = 0;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const Vertex& vertex = graph.vertices[v];
    const VertexModel& vm = tables.models[v];
    const int32_t* config = tables.configs[v][static_cast<size_t>(choice[v])];
    layer_total += tables.objective.vertex_cost[v][static_cast<size_t>(choice[v])];
    PlannedLayer layer;
    layer.name = vertex.name;
    layer.op = vertex.op;
    layer.dims = vm.letters;
    layer.config.assign(config, config + vm.domain.size());
    layer.mesh_axes = chosen[v];
    for (size_t j = 0; j < vertex.inputs.size() && j < vm.inputs.size(); ++j)
      layer.inputs.push_back(lay_out(vertex.inputs[j].ref, vertex.inputs[j].shape, vm.inputs[j], vm, config, chosen[v]));
    for (size_t k = 0; k < vertex.outputs.size(); ++k)
      layer.outputs.push_back(lay_out("", vertex.outputs[k], vm.outputs[k], vm, config, chosen[v]));
    for (const LayerWeight& weight : layer_weights(vertex, vm)) {
      layer.weights.push_back(lay_out(weight.name, weight.shape, weight.split, vm, config, chosen[v]));
      layer.weights.back().grad_allreduce_axes = gradient_axes(weight.split, chosen[v]);
    }
    plan.layers.push_back(std::move(layer));
  }
  for (const TensorEdge& edge : graph.edges) {
    const PlannedTensor& held = plan.layers[static_cast<size_t>(edge.src)].outputs[static_cast<size_t>(edge.src_port)];
    PlannedTensor& needed = plan.layers[static_cast<size_t>(edge.dst)].inputs[static_cast<size_t>(edge.dst_port)];
    needed.model_words = redistribution_words(needed.shape, held.split.data(), needed.split.data());
    needed.realized_words = realized_words(needed.shape, held.spec, needed.spec, mesh, coordinates);
    double parts_held = 1, parts_needed = 1;
    for (int64_t s : held.split) parts_held *= static_cast<double>(s);
    for (int64_t s : needed.split) parts_needed *= static_cast<double>(s);
    result.model_edge_cost += model.fetch_cost(*needed.model_words, std::max(parts_held, parts_needed));
    result.realized_edge_cost += model.fetch_cost(
        *needed.realized_words, std::max(devices_of(held.spec, mesh), devices_of(needed.spec, mesh)));
  }
  plan.realized_total_cost = layer_total + result.realized_edge_cost;
  plan.assignment_exact = result.exact;
  return result;
}

}  // namespace pase
