#include "plans/mesh_search.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <utility>

#include "base/error.h"
#include "plans/mesh.h"
#include "plans/mesh_pricing.h"

namespace pase {
namespace {

std::string mesh_text(const Mesh& mesh) {
  std::string text;
  for (size_t j = 0; j < mesh.shape.size(); ++j) text += (j ? "," : "") + mesh.axes[j] + "=" + std::to_string(mesh.shape[j]);
  return text;
}

// One kind of vertex on the mesh: its layouts and their prices.
struct Layouts {
  ConfigSet configs, per_node;
  SharedArray<double> cost;
  std::shared_ptr<const std::vector<AxisAssignment>> assignments;
};

// A configuration's layouts on the mesh and each one's pieces inside a node,
// found once per configuration for every vertex that has it (the layouts
// depend on the splits alone, and most layers share their configurations).
struct ConfigLayouts {
  std::vector<AxisAssignment> list;
  std::vector<std::vector<int32_t>> in_node;
};
using LayoutCache = std::map<std::vector<int32_t>, ConfigLayouts>;

const ConfigLayouts& config_layouts(LayoutCache& cache, LayoutSpace space, const Mesh& mesh, const int32_t* config,
                                    int rank, size_t limit) {
  auto [it, fresh] = cache.try_emplace(std::vector<int32_t>(config, config + rank));
  if (fresh) {
    it->second.list = layouts_in(space, mesh, config, rank, limit).list;
    for (const AxisAssignment& assignment : it->second.list) it->second.in_node.push_back(node_splits(mesh, assignment));
  }
  return it->second;
}

Layouts layouts_of(const VertexModel& vertex, const ConfigSet& configs, const Mesh& mesh, const CostModel& model,
                   LayoutSpace space, size_t max_layouts, const std::string& name, LayoutCache& cache) {
  const int rank = configs.rank;
  std::vector<int32_t> splits, per_node;
  std::vector<double> cost;
  auto assignments = std::make_shared<std::vector<AxisAssignment>>();
  for (size_t s = 0; s < configs.size(); ++s) {
    const ConfigLayouts& found = config_layouts(cache, space, mesh, configs[s], rank, max_layouts + 1);
    for (size_t a = 0; a < found.list.size(); ++a) {
      if (assignments->size() == max_layouts)
        throw ResourceError("layer '" + name + "' has more than " + std::to_string(max_layouts) +
                            " layouts on mesh " + mesh_text(mesh) +
                            " (each split on every choice and order of axes): search the layouts on a mesh of fewer "
                            "axes (dp=16,tp=4)");
      const std::vector<int32_t>& in_node = found.in_node[a];
      splits.insert(splits.end(), configs[s], configs[s] + rank);
      per_node.insert(per_node.end(), in_node.begin(), in_node.end());
      cost.push_back(model.layer_on_nodes(vertex, configs[s], in_node.data()));
      assignments->push_back(found.list[a]);
    }
  }
  return {ConfigSet{rank, std::move(splits)}, ConfigSet{rank, std::move(per_node)}, std::move(cost),
          std::move(assignments)};
}

// Edge matrices over the layouts of their tensor at each end, each distinct
// one computed once.
class EdgePricing {
 public:
  EdgePricing(const Mesh& mesh, const CostModel& model)
      : mesh_(mesh), model_(model), coordinates_(mesh_coordinates(mesh)), per_node_(axis_devices_per_node(mesh)) {}

  // Classes of a vertex's layouts by the axes they give one of its tensors.
  static std::vector<AxisSpec> classify(const SplitMap& map, const std::vector<AxisAssignment>& assignments,
                                        std::vector<int32_t>& class_of) {
    std::map<AxisSpec, int32_t> index;
    std::vector<AxisSpec> specs;
    for (const AxisAssignment& assignment : assignments) {
      AxisSpec spec = tensor_spec(map, assignment);
      auto [it, inserted] = index.try_emplace(spec, static_cast<int32_t>(specs.size()));
      if (inserted) specs.push_back(std::move(spec));
      class_of.push_back(it->second);
    }
    return specs;
  }

  std::shared_ptr<const std::vector<double>> matrix(const Shape& tensor, const std::vector<AxisSpec>& held,
                                                    const std::vector<AxisSpec>& needed) {
    auto key = std::make_tuple(tensor, held, needed);
    if (auto cached = matrices_.find(key); cached != matrices_.end()) return cached->second;
    std::vector<std::vector<Block>> held_blocks;
    for (const AxisSpec& spec : held) held_blocks.push_back(device_blocks(tensor, spec, mesh_, coordinates_));
    auto cost = std::make_shared<std::vector<double>>(held.size() * needed.size());
    std::vector<Block> blocks;
    for (size_t j = 0; j < needed.size(); ++j) {
      device_blocks(tensor, needed[j], mesh_, coordinates_, blocks);
      for (size_t i = 0; i < held.size(); ++i)
        (*cost)[i * needed.size() + j] =
            edge_on_mesh(model_, realized_words(held_blocks[i], blocks, tensor.size()), held[i], needed[j], mesh_,
                         per_node_);
    }
    matrices_.emplace(std::move(key), cost);
    return cost;
  }

 private:
  const Mesh& mesh_;
  const CostModel& model_;
  std::vector<std::vector<int64_t>> coordinates_;
  std::vector<int64_t> per_node_;
  std::map<std::tuple<Shape, std::vector<AxisSpec>, std::vector<AxisSpec>>, std::shared_ptr<const std::vector<double>>>
      matrices_;
};

// An edge end's classes, once per kind of vertex and split map.
struct EndClasses {
  SharedArray<int32_t> class_of;
  std::vector<AxisSpec> specs;
};

}  // namespace

MeshTables price_on_mesh(const Graph& graph, const CostTables& configs, const Mesh& mesh, const CostModel& model,
                         LayoutSpace space, size_t max_layouts, bool with_edges) {
  MeshTables out;
  CostTables& tables = out.tables;
  tables.machine = configs.machine;
  tables.cost_model = configs.cost_model;
  tables.unit = configs.unit;
  tables.models = configs.models;
  const size_t n = graph.vertices.size();
  tables.configs.resize(n);
  tables.per_node.resize(n);
  tables.objective.vertex_cost.resize(n);
  out.assignments.resize(n);
  // Vertices alike (one model, one configuration list) share their layouts.
  std::map<std::pair<const void*, const void*>, size_t> first_alike;
  LayoutCache cache;
  for (size_t v = 0; v < n; ++v) {
    const auto key = std::make_pair(static_cast<const void*>(configs.models.shared(v).get()), configs.configs[v].splits.storage_id());
    auto [it, inserted] = first_alike.try_emplace(key, v);
    if (!inserted) {
      const size_t w = it->second;
      tables.configs[v] = tables.configs[w];
      tables.per_node[v] = tables.per_node[w];
      tables.objective.vertex_cost[v] = tables.objective.vertex_cost[w];
      out.assignments[v] = out.assignments[w];
      continue;
    }
    Layouts layouts = layouts_of(configs.models[v], configs.configs[v], mesh, model, space, max_layouts,
                                 graph.vertices[v].name, cache);
    tables.configs[v] = std::move(layouts.configs);
    tables.per_node[v] = std::move(layouts.per_node);
    tables.objective.vertex_cost[v] = std::move(layouts.cost);
    out.assignments[v] = std::move(layouts.assignments);
  }
  if (!with_edges) return out;
  EdgePricing pricing(mesh, model);
  std::map<std::tuple<const void*, const SplitMap*, bool>, EndClasses> ends;
  auto end_classes = [&](size_t v, const SplitMap& map, bool output) -> const EndClasses& {
    auto [it, inserted] = ends.try_emplace({out.assignments[v].get(), &map, output});
    if (inserted) {
      std::vector<int32_t> class_of;
      it->second.specs = EdgePricing::classify(map, *out.assignments[v], class_of);
      it->second.class_of = std::move(class_of);
    }
    return it->second;
  };
  for (const TensorEdge& edge : graph.edges) {
    const auto u = static_cast<size_t>(edge.src), v = static_cast<size_t>(edge.dst);
    const EndClasses& held = end_classes(u, tables.models[u].outputs[static_cast<size_t>(edge.src_port)], true);
    const EndClasses& needed = end_classes(v, tables.models[v].inputs[static_cast<size_t>(edge.dst_port)], false);
    PairCost pair;
    pair.u = edge.src;
    pair.v = edge.dst;
    pair.u_class = held.class_of;
    pair.v_class = needed.class_of;
    pair.u_classes = static_cast<int32_t>(held.specs.size());
    pair.v_classes = static_cast<int32_t>(needed.specs.size());
    pair.cost = pricing.matrix(graph.vertices[u].outputs[static_cast<size_t>(edge.src_port)], held.specs, needed.specs);
    tables.objective.pairs.push_back(std::move(pair));
  }
  return out;
}

PlanResult plan_from_layouts(const Graph& graph, const CostTables& tables,
                             const std::vector<std::shared_ptr<const std::vector<AxisAssignment>>>& assignments,
                             const std::vector<int32_t>& choice, const Mesh& mesh, const CostModel& model) {
  std::vector<AxisAssignment> chosen(graph.vertices.size());
  size_t largest = 0;
  for (size_t v = 0; v < chosen.size(); ++v) {
    chosen[v] = (*assignments[v])[static_cast<size_t>(choice[v])];
    largest = std::max(largest, assignments[v]->size());
  }
  PlanResult result;
  lay_out_plan(graph, tables, choice, mesh, model, chosen, /*on_nodes=*/true, result);
  result.exact = true;
  result.proof = PlanProof::Searched;
  result.largest_candidate_set = largest;
  result.edge_lower_bound = result.realized_edge_cost;
  Plan& plan = result.plan;
  plan.assignment_exact = true;
  plan.assignment_proof = proof_name(result.proof);
  plan.candidates_per_layer = largest;
  plan.realized_total_lower_bound = plan.realized_total_cost;
  return result;
}

}  // namespace pase
