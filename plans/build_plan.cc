#include "plans/build_plan.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <tuple>
#include <utility>

#include "base/check.h"
#include "base/error.h"
#include "graphs/checkpoint_shapes.h"
#include "graphs/layer_weights.h"
#include "plans/checkpoint_layout.h"
#include "graphs/redistribution_words.h"
#include "plans/assignment_bound.h"
#include "dp/dp.h"
#include "plans/mesh.h"
#include "plans/mesh_pricing.h"
#include "dp/ordering.h"
#include "plans/realized_words.h"

namespace pase {
namespace {

using Assignment = AxisAssignment;

// The per-edge bound compares each canonical producer layout with every
// consumer layout, device by device; layers with more assignments than this
// many comparisons allow get no bound (5040, every order of 7 binary axes, at
// 128 devices).
constexpr size_t kBoundComparisons = size_t{5040} * 128;

std::vector<int64_t> split_of(const SplitMap& map, const int32_t* config) {
  std::vector<int64_t> split(map.size());
  tensor_split(map, config, split.data());
  return split;
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

  // Takes each layer's first `limit` assignments as its candidates and
  // orders the DP over them; returns whether they are all of them.
  bool gather(size_t limit) {
    const size_t n = graph_.vertices.size();
    candidates_.assign(n, {});
    bool complete = true;
    largest_ = 0;
    objective_ = Objective{};
    objective_.vertex_cost.resize(n);
    for (size_t v = 0; v < n; ++v) {
      const int rank = static_cast<int>(tables_.models[v].domain.size());
      AxisAssignments found = axis_assignments(mesh_, config(v), rank, limit);
      PASE_ASSERT(!found.list.empty(), graph_.vertices[v].name, config_text(config(v), rank));
      complete = complete && found.complete;
      candidates_[v] = std::move(found.list);
      largest_ = std::max(largest_, candidates_[v].size());
      objective_.vertex_cost[v] = std::vector<double>(candidates_[v].size(), 0.0);
    }
    keys_.assign(graph_.edges.size(), {});
    for (size_t e = 0; e < graph_.edges.size(); ++e) objective_.pairs.push_back(classify_edge(graph_.edges[e], keys_[e]));
    order_ = make_plan(undirected_neighbours(objective_), OrderKind::MinDegree, objective_.config_counts());
    return complete;
  }

  // Steps to place the gathered candidates: the DP's (entry, candidate)
  // steps, and a device-and-dimension comparison per pair of classes of
  // each edge matrix not yet computed.
  [[nodiscard]] double work() const {
    const std::vector<size_t> counts = objective_.config_counts();
    double total = 0;
    for (int v : order_.order) {
      double steps = static_cast<double>(counts[static_cast<size_t>(v)]);
      for (int w : order_.dependent[static_cast<size_t>(v)]) steps *= static_cast<double>(counts[static_cast<size_t>(w)]);
      total += steps;
    }
    std::set<const MatrixKey*, KeyLess> pending;
    for (const MatrixKey& key : keys_)
      if (!matrices_.count(key) && pending.insert(&key).second)
        total += static_cast<double>(std::get<1>(key).size() * std::get<2>(key).size() * std::get<0>(key).size()) *
                 static_cast<double>(coordinates_.size());
    return total;
  }

  // The best assignment among the gathered candidates, and what each edge costs under it.
  std::vector<Assignment> solve(const DpOptions& dp, std::vector<double>& edge_costs) {
    for (size_t e = 0; e < keys_.size(); ++e) objective_.pairs[e].cost = matrix(keys_[e]);
    std::vector<std::string> names;
    for (const Vertex& vertex : graph_.vertices) names.push_back(vertex.name);
    DpResult result = solve_dp(objective_, order_, names, dp);
    std::vector<Assignment> chosen(candidates_.size());
    for (size_t v = 0; v < chosen.size(); ++v) chosen[v] = candidates_[v][static_cast<size_t>(result.choice[v])];
    edge_costs.clear();
    for (const PairCost& pair : objective_.pairs)
      edge_costs.push_back(pair.at(static_cast<size_t>(result.choice[static_cast<size_t>(pair.u)]),
                                   static_cast<size_t>(result.choice[static_cast<size_t>(pair.v)])));
    return chosen;
  }

  [[nodiscard]] size_t largest_candidate_set() const { return largest_; }

 private:
  const int32_t* config(size_t v) const { return tables_.configs[v][static_cast<size_t>(choice_[v])]; }

  // Classes of a vertex's candidates by the axes they give one of its tensors.
  std::vector<AxisSpec> classify(const SplitMap& map, size_t v, std::vector<int32_t>& class_of) const {
    std::map<AxisSpec, int32_t> index;
    std::vector<AxisSpec> specs;
    for (const Assignment& assignment : candidates_[v]) {
      AxisSpec spec = tensor_spec(map, assignment);
      auto [it, inserted] = index.try_emplace(spec, static_cast<int32_t>(specs.size()));
      if (inserted) specs.push_back(std::move(spec));
      class_of.push_back(it->second);
    }
    return specs;
  }

  using MatrixKey = std::tuple<Shape, std::vector<AxisSpec>, std::vector<AxisSpec>>;

  // The edge's classes of candidates on both ends, and the key of its matrix.
  PairCost classify_edge(const TensorEdge& edge, MatrixKey& key) const {
    PairCost pair;
    pair.u = edge.src;
    pair.v = edge.dst;
    const Shape& tensor = graph_.vertices[edge.src].outputs[edge.src_port];
    std::vector<int32_t> u_class, v_class;
    std::vector<AxisSpec> held = classify(tables_.models[edge.src].outputs[edge.src_port], edge.src, u_class);
    std::vector<AxisSpec> needed = classify(tables_.models[edge.dst].inputs[edge.dst_port], edge.dst, v_class);
    pair.u_class = std::move(u_class);
    pair.v_class = std::move(v_class);
    pair.u_classes = static_cast<int32_t>(held.size());
    pair.v_classes = static_cast<int32_t>(needed.size());
    key = std::make_tuple(tensor, std::move(held), std::move(needed));
    return pair;
  }

  // Edges that carry the same tensor between the same classes of axes (a
  // repeated block's) share one matrix, computed once.
  std::shared_ptr<const std::vector<double>> matrix(const MatrixKey& key) {
    auto cached = matrices_.find(key);
    if (cached != matrices_.end()) return cached->second;
    const auto& [tensor, held, needed] = key;
    // Each class's blocks once, so a pair of classes costs p·rank comparisons.
    std::vector<std::vector<Block>> held_blocks, needed_blocks;
    std::vector<double> held_devices, needed_devices;
    for (const AxisSpec& spec : held) {
      held_blocks.push_back(device_blocks(tensor, spec, mesh_, coordinates_));
      held_devices.push_back(spec_devices(spec, mesh_));
    }
    for (const AxisSpec& spec : needed) {
      needed_blocks.push_back(device_blocks(tensor, spec, mesh_, coordinates_));
      needed_devices.push_back(spec_devices(spec, mesh_));
    }
    auto cost = std::make_shared<std::vector<double>>(held.size() * needed.size());
    for (size_t i = 0; i < held.size(); ++i)
      for (size_t j = 0; j < needed.size(); ++j) {
        double words = realized_words(held_blocks[i], needed_blocks[j], tensor.size());
        (*cost)[i * needed.size() + j] = model_.fetch_cost(words, std::max(held_devices[i], needed_devices[j]));
      }
    matrices_.emplace(key, cost);
    return cost;
  }

  const Graph& graph_;
  const CostTables& tables_;
  const std::vector<int32_t>& choice_;
  const Mesh& mesh_;
  const CostModel& model_;
  std::vector<std::vector<int64_t>> coordinates_;
  std::vector<std::vector<Assignment>> candidates_;
  size_t largest_ = 0;
  Objective objective_;
  EliminationPlan order_;
  std::vector<MatrixKey> keys_;  ///< per edge
  struct KeyLess {
    bool operator()(const MatrixKey* a, const MatrixKey* b) const { return *a < *b; }
  };
  std::map<MatrixKey, std::shared_ptr<const std::vector<double>>> matrices_;
};

PlannedTensor lay_out(std::string name, const Shape& shape, const SplitMap& map, const VertexModel& model,
                      const int32_t* config, const Assignment& assignment) {
  PlannedTensor tensor;
  tensor.name = std::move(name);
  tensor.shape = shape;
  tensor.split = split_of(map, config);
  tensor.dims = split_letters(map, model.letters);
  tensor.spec = tensor_spec(map, assignment);
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

// The least realized cost of each edge over all assignments of its two
// layers, computed when first asked for (most edges are never asked: one
// that moves nothing is at its least already).
class EdgeBounds {
 public:
  EdgeBounds(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice, const Mesh& mesh,
             const CostModel& model)
      : graph_(graph), tables_(tables), choice_(choice),
        bound_(mesh, model, kBoundComparisons / static_cast<size_t>(mesh.devices())), least_(graph.edges.size()),
        known_(graph.edges.size(), 0) {}

  std::optional<double> least(size_t e) {
    if (!known_[e]) {
      const TensorEdge& edge = graph_.edges[e];
      const VertexModel& src = tables_.models[edge.src];
      const VertexModel& dst = tables_.models[edge.dst];
      const int32_t* src_config = tables_.configs[edge.src][static_cast<size_t>(choice_[edge.src])];
      const int32_t* dst_config = tables_.configs[edge.dst][static_cast<size_t>(choice_[edge.dst])];
      least_[e] = bound_.least_edge_cost(graph_.vertices[edge.src].outputs[edge.src_port], src.outputs[edge.src_port],
                                         {src_config, src_config + src.domain.size()}, dst.inputs[edge.dst_port],
                                         {dst_config, dst_config + dst.domain.size()});
      known_[e] = 1;
    }
    return least_[e];
  }

  // Whether every edge costs the least it could (costs are never negative).
  bool all_at_least(const std::vector<double>& edge_costs) {
    for (size_t e = 0; e < edge_costs.size(); ++e) {
      if (edge_costs[e] <= 0) continue;
      std::optional<double> bound = least(e);
      if (!bound || edge_costs[e] > *bound) return false;
    }
    return true;
  }

  // The sum of every edge's least cost (0 for an edge without a bound).
  double total() {
    double sum = 0;
    for (size_t e = 0; e < least_.size(); ++e)
      if (std::optional<double> bound = least(e)) sum += *bound;
    return sum;
  }

 private:
  const Graph& graph_;
  const CostTables& tables_;
  const std::vector<int32_t>& choice_;
  AssignmentBound bound_;
  std::vector<std::optional<double>> least_;
  std::vector<char> known_;
};

// The tied weights' reshards, priced as the edges are: a fetch is the words
// in (forward) and back (the gradient, backward), once per micro-batch.
void price_weight_reshards(const CostModel& model, bool on_nodes, PlanResult& result) {
  const Plan& plan = result.plan;
  result.weight_reshards = weight_reshards(plan);
  result.weight_reshard_cost = 0;
  for (const WeightReshard& r : result.weight_reshards) {
    if (r.reshaped) continue;
    const AxisSpec& held = plan.layers[r.holder].weights[r.holder_weight].spec;
    const AxisSpec& read = plan.layers[r.reader].weights[r.reader_weight].spec;
    result.weight_reshard_cost +=
        on_nodes ? edge_on_mesh(model, r.realized_words, held, read, plan.mesh)
                 : model.fetch_cost(r.realized_words,
                                    std::max(spec_devices(held, plan.mesh), spec_devices(read, plan.mesh)));
  }
}

}  // namespace

std::string proof_name(PlanProof proof) {
  switch (proof) {
    case PlanProof::AllAssignments: return "all_assignments";
    case PlanProof::LowerBound: return "lower_bound";
    case PlanProof::Searched: return "searched";
    case PlanProof::None: break;
  }
  return "none";
}

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

void lay_out_plan(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice, const Mesh& mesh,
                  const CostModel& model, const std::vector<AxisAssignment>& chosen, bool on_nodes, PlanResult& result) {
  Plan& plan = result.plan;
  plan.mesh = mesh;
  const std::vector<std::vector<int64_t>> coordinates = mesh_coordinates(mesh);
  double layer_total = 0;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const Vertex& vertex = graph.vertices[v];
    const VertexModel& vm = tables.models[v];
    const int32_t* config = tables.configs[v][static_cast<size_t>(choice[v])];
    // Over the links: the layer's collectives on the axes it was given (a
    // searched plan's table already holds that price).
    layer_total += on_nodes ? layer_on_mesh(model, vm, config, mesh, chosen[v])
                            : tables.objective.vertex_cost[v][static_cast<size_t>(choice[v])];
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
      if (auto held = graph.checkpoint_shapes.find(weight.name); held != graph.checkpoint_shapes.end())
        if (auto merges = checkpoint_merges(weight.shape, held->second))  // build_graph checked it
          layer.weights.back().checkpoint = checkpoint_view(layer.weights.back(), held->second, *merges);
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
    result.realized_edge_cost +=
        on_nodes ? edge_on_mesh(model, *needed.realized_words, held.spec, needed.spec, mesh)
                 : model.fetch_cost(*needed.realized_words,
                                    std::max(spec_devices(held.spec, mesh), spec_devices(needed.spec, mesh)));
  }
  result.layer_cost = layer_total;
  plan.realized_total_cost = layer_total + result.realized_edge_cost;
  price_weight_reshards(model, on_nodes, result);
}

PlanResult build_plan(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                      const Mesh& mesh, const CostModel& model, const PlanOptions& options) {
  PlanResult result;
  AssignmentProblem problem(graph, tables, choice, mesh, model);
  DpOptions dp;
  dp.max_table_bytes = options.max_table_bytes;
  dp.max_work = options.max_work;
  dp.threads = options.threads;
  EdgeBounds bounds(graph, tables, choice, mesh, model);
  std::vector<Assignment> chosen;
  // More candidates per layer until every assignment was seen, the answer
  // reaches the bound on every edge, or the next round would not fit.
  std::vector<double> edge_costs;
  for (size_t limit = 1;; limit = std::min(limit * 6, options.max_assignments)) {
    const bool complete = problem.gather(limit);
    if (!chosen.empty() && problem.work() > static_cast<double>(options.max_work)) break;  // keep the last round's
    try {
      chosen = problem.solve(dp, edge_costs);
    } catch (const ResourceError&) {
      if (chosen.empty()) throw;
      break;
    }
    result.largest_candidate_set = problem.largest_candidate_set();
    result.proof = complete ? PlanProof::AllAssignments : PlanProof::None;
    if (complete) break;
    if (options.stop_at_bound && bounds.all_at_least(edge_costs)) {
      result.proof = PlanProof::LowerBound;
      break;
    }
    if (limit >= options.max_assignments) break;
  }
  result.exact = result.proof != PlanProof::None;
  // A model that knows the links prices the plan over them (the DP above
  // chose the axes by its device-order-free prices).
  lay_out_plan(graph, tables, choice, mesh, model, chosen, /*on_nodes=*/prices_links(model), result);
  Plan& plan = result.plan;
  plan.assignment_exact = result.exact;
  plan.assignment_proof = proof_name(result.proof);
  plan.candidates_per_layer = result.largest_candidate_set;
  result.edge_lower_bound = result.exact ? result.realized_edge_cost : bounds.total();
  plan.realized_total_lower_bound = result.layer_cost + result.edge_lower_bound;
  return result;
}

}  // namespace pase
