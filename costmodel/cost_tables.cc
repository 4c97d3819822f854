#include "costmodel/cost_tables.h"

#include "base/check.h"

#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

#include "costmodel/cost_model.h"
#include "costmodel/costs.h"
#include "costmodel/model_key.h"
#include "base/error.h"
#include "graphs/layer_weights.h"

namespace pase {
namespace {

// Groups configurations by the split they give one tensor. Splits are packed
// into one integer (mixed radix, base devices + 1) when they fit, which avoids
// building a vector per configuration; otherwise whole tuples are compared.
void classify(const SplitMap& map, const ConfigSet& configs, int64_t devices, std::vector<int32_t>& class_of,
              std::vector<std::vector<int64_t>>& splits) {
  std::vector<int64_t> split(map.size());
  class_of.resize(configs.size());
  const double bits = static_cast<double>(map.size()) * std::log2(static_cast<double>(devices) + 1.0);
  if (bits < 62) {
    std::unordered_map<uint64_t, int32_t> index;
    const uint64_t base = static_cast<uint64_t>(devices) + 1;
    for (size_t s = 0; s < configs.size(); ++s) {
      tensor_split(map, configs[s], split.data());
      uint64_t key = 0;
      for (int64_t part : split) key = key * base + static_cast<uint64_t>(part);
      auto [it, inserted] = index.try_emplace(key, static_cast<int32_t>(splits.size()));
      if (inserted) splits.push_back(split);
      class_of[s] = it->second;
    }
    return;
  }
  std::map<std::vector<int64_t>, int32_t> index;
  for (size_t s = 0; s < configs.size(); ++s) {
    tensor_split(map, configs[s], split.data());
    auto [it, inserted] = index.try_emplace(split, static_cast<int32_t>(splits.size()));
    if (inserted) splits.push_back(split);
    class_of[s] = it->second;
  }
}

// A split map into a key, each dimension as its count of domain dimensions, then those.
void append_map(std::vector<int64_t>& key, const SplitMap& map) {
  key.push_back(static_cast<int64_t>(map.size()));
  for (const auto& dims : map) {
    key.push_back(static_cast<int64_t>(dims.size()));
    key.insert(key.end(), dims.begin(), dims.end());
  }
}

}  // namespace

CostTables build_cost_tables(const Graph& graph, const Machine& machine, size_t max_configs) {
  return build_cost_tables(graph, PaseCostModel(machine), max_configs);
}

namespace {

// The configurations `keep` accepts, in the same (lexicographic) order; the
// all-ones configuration is always kept, so no vertex is left without one.
ConfigSet kept(const VertexModel& model, const ConfigSet& all, const ConfigFilter& keep) {
  std::vector<int32_t> splits;
  for (size_t s = 0; s < all.size(); ++s)
    if (s == 0 || keep(model, all[s])) splits.insert(splits.end(), all[s], all[s] + all.rank);
  ConfigSet out;
  out.rank = all.rank;
  out.splits = std::move(splits);
  return out;
}

}  // namespace

namespace {

// How price_vertices tells the vertices' kinds apart: equal models (by
// model_key, field by field) and cutoffs are one kind, priced once.
struct VertexKinds {
  std::unordered_map<std::string, int> first_of_kind;
  std::unordered_map<std::string, int> first_of_model;
  std::set<std::string> updated_weights;  // weights a reader before already steps
  /// With base tables: (base's model, techniques, cutoff) to the first vertex of it.
  std::map<std::tuple<const void*, bool, int, bool, int64_t>, int> from_base;
  std::vector<int> kind;
};

// Vertex v's model built from the vertex, and its kind; whether it is the
// first of its kind.
bool built_model(const Vertex& vertex, size_t v, CostTables& tables, VertexKinds& kinds) {
  VertexModel built = build_vertex_model(vertex);
  // A weight several layers read (a tied embedding and output projection)
  // is one tensor, which the optimizer steps once: only its first reader
  // in file order counts its update (weight_operand; the `pase` model never
  // reads the flag).
  WorkParams& work = built.work;
  if (work.weight_operand) {
    const std::string name = !built.weights.empty() ? owned_weight_name(vertex, 0) : vertex.inputs[1].ref;
    if (!kinds.updated_weights.insert(name).second) work.weight_operand = false;
  }
  std::string key = model_key(built);
  // Equal keys: equal models, field by field (model_key.h): one copy.
  auto [same_model, new_model] = kinds.first_of_model.try_emplace(key, static_cast<int>(v));
  tables.models.set(v, new_model ? std::make_shared<const VertexModel>(std::move(built))
                                 : tables.models.shared(static_cast<size_t>(same_model->second)));
  key.append(reinterpret_cast<const char*>(&vertex.cutoff), sizeof(vertex.cutoff));
  auto [it, inserted] = kinds.first_of_kind.try_emplace(std::move(key), static_cast<int>(v));
  kinds.kind[v] = it->second;
  return inserted;
}

// With `base` (the same graph with other per-layer techniques): vertex v's
// model is base's with the techniques' fields set, as build_vertex_model sets
// them last from the vertex (base already knows which reader of a shared
// weight steps it); vertices of one base model with alike techniques are one
// kind. Rebuilding a thousand vertices' models for each variant was most of a
// search over techniques. Nothing where its sequence parallelism, which
// reshapes the model, is not base's.
std::optional<bool> model_from_base(const Vertex& vertex, const CostTables& base, size_t v, CostTables& tables,
                                    VertexKinds& kinds) {
  const VertexModel& base_model = base.models[v];
  if (base_model.sequence_parallel != vertex.sequence_parallel) return std::nullopt;
  const auto key = std::make_tuple(static_cast<const void*>(&base_model), vertex.recompute, vertex.zero,
                                   vertex.fused_scores, vertex.cutoff);
  const auto [first, fresh] = kinds.from_base.try_emplace(key, static_cast<int>(v));
  kinds.kind[v] = first->second;
  if (!fresh) {
    tables.models.set(v, tables.models.shared(static_cast<size_t>(first->second)));
    return false;
  }
  VertexModel model = base_model;
  model.recompute = vertex.recompute;
  model.zero = vertex.zero;
  model.fused_scores = vertex.fused_scores;
  tables.models.set(v, std::make_shared<const VertexModel>(std::move(model)));
  return true;
}

// Prices every vertex: its model, configurations and layer costs, once per
// kind (equal model and cutoff); returns each vertex's kind (the first vertex
// of it).
//
// Layers repeat (the Transformer's twelve encoder and decoder layers, the
// blocks of ResNet and Inception), and a vertex's prices depend only on its
// model and cutoff: those are priced once per distinct (model, cutoff) and
// copied. Copies share storage (SharedArray), so a deep model's repeated
// blocks hold one set of tables whatever the depth.
//
// With `base` (the same graph with other per-layer techniques), each vertex
// takes base's configurations instead of enumerating them, and its model.
std::vector<int> price_vertices(const Graph& graph, const CostModel& model, size_t max_configs, const ConfigFilter& keep,
                                CostTables& tables, const CostTables* base = nullptr) {
  const size_t n = graph.vertices.size();
  VertexKinds kinds;
  kinds.kind.resize(n);
  for (size_t v = 0; v < n; ++v) {
    const Vertex& vertex = graph.vertices[v];
    std::optional<bool> first = base ? model_from_base(vertex, *base, v, tables, kinds) : std::nullopt;
    if (!first) first = built_model(vertex, v, tables, kinds);
    const size_t k = static_cast<size_t>(kinds.kind[v]);
    if (!*first) {  // shares the first's arrays
      tables.configs[v] = tables.configs[k];
      if (!tables.per_node.empty()) tables.per_node[v] = tables.per_node[k];
      tables.objective.vertex_cost[v] = tables.objective.vertex_cost[k];
      continue;
    }
    if (base) {
      tables.configs[v] = base->configs[v];
      if (!tables.per_node.empty()) tables.per_node[v] = base->per_node[v];
    } else {
      tables.configs[v] = enumerate_configs(tables.models[v], vertex.cutoff, model.devices(), max_configs, vertex.name);
      if (keep) tables.configs[v] = kept(tables.models[v], tables.configs[v], keep);
    }
    const ConfigSet& configs = tables.configs[v];
    std::vector<double> cost(configs.size());
    if (tables.per_node.empty())
      for (size_t s = 0; s < configs.size(); ++s) cost[s] = model.layer(tables.models[v], configs[s]);
    else
      for (size_t s = 0; s < configs.size(); ++s)
        cost[s] = model.layer_on_nodes(tables.models[v], configs[s], tables.per_node[v][s]);
    tables.objective.vertex_cost[v] = std::move(cost);
  }
  return kinds.kind;
}

// Prices every edge: a matrix over its ends' classes of configurations, once
// per kind of edge (ends' kinds, tensor, split maps), shared by the others.
void price_edges(const Graph& graph, const CostModel& model, const std::vector<int>& kind, CostTables& tables) {
  tables.objective.pairs.resize(graph.edges.size());
  // An end's classes depend on its kind and the split map only: shared by
  // every edge at an end alike, whatever the other end.
  struct Classes {
    SharedArray<int32_t> of;
    std::vector<std::vector<int64_t>> splits;
  };
  std::map<std::vector<int64_t>, Classes> classes_of_end;
  auto end_classes = [&](int v, const SplitMap& map) -> const Classes& {
    std::vector<int64_t> key = {kind[static_cast<size_t>(v)]};
    append_map(key, map);
    auto [it, inserted] = classes_of_end.try_emplace(std::move(key));
    if (inserted) {
      std::vector<int32_t> class_of;
      classify(map, tables.configs[static_cast<size_t>(v)], model.devices(), class_of, it->second.splits);
      it->second.of = std::move(class_of);
    }
    return it->second;
  };
  std::map<std::vector<int64_t>, size_t> first_of_edge_kind;
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    const TensorEdge& edge = graph.edges[e];
    const Shape& tensor = graph.vertices[edge.src].outputs[edge.src_port];
    PairCost& pair = tables.objective.pairs[e];
    // The matrix depends on the ends' configurations (their kinds), the
    // tensor and how each end splits it: the split maps, not the port
    // numbers, so the inputs of one node that list a tensor many times (or
    // read alike tensors) share one matrix, priced once.
    std::vector<int64_t> key = {kind[edge.src], kind[edge.dst], static_cast<int64_t>(tensor.size())};
    key.insert(key.end(), tensor.begin(), tensor.end());
    append_map(key, tables.models[edge.src].outputs[edge.src_port]);
    append_map(key, tables.models[edge.dst].inputs[edge.dst_port]);
    auto [it, inserted] = first_of_edge_kind.try_emplace(std::move(key), e);
    if (!inserted) pair = tables.objective.pairs[it->second];  // shares its arrays; only its ends differ
    pair.u = edge.src;
    pair.v = edge.dst;
    if (!inserted) continue;
    const Classes& u = end_classes(edge.src, tables.models[edge.src].outputs[edge.src_port]);
    const Classes& v = end_classes(edge.dst, tables.models[edge.dst].inputs[edge.dst_port]);
    pair.u_class = u.of;
    pair.v_class = v.of;
    pair.u_classes = static_cast<int32_t>(u.splits.size());
    pair.v_classes = static_cast<int32_t>(v.splits.size());
    auto cost = std::make_shared<std::vector<double>>(u.splits.size() * v.splits.size());
    model.redistribution_matrix(tensor, u.splits, v.splits, cost->data());
    pair.cost = std::move(cost);
  }
}

}  // namespace

// One thread: in parallel pricing ran no faster (measured up to the
// Transformer at p = 64), its many small allocations and first-touch page
// faults being the cost, and it kept small solves from staying on one thread.
namespace {

// The tables' layers priced; the kind of each vertex for price_edges.
std::vector<int> priced_layers(const Graph& graph, const CostModel& model, size_t max_configs, const ConfigFilter& keep,
                               CostTables& tables) {
  tables.machine = model.machine();
  tables.cost_model = model.name();
  tables.unit = model.unit();
  const size_t n = graph.vertices.size();
  tables.models.resize(n);
  tables.configs.resize(n);
  tables.objective.vertex_cost.resize(n);
  return price_vertices(graph, model, max_configs, keep, tables);
}

}  // namespace

CostTables build_cost_tables(const Graph& graph, const CostModel& model, size_t max_configs, const ConfigFilter& keep) {
  CostTables tables;
  const std::vector<int> kind = priced_layers(graph, model, max_configs, keep, tables);
  price_edges(graph, model, kind, tables);
  return tables;
}

CostTables build_vertex_cost_tables(const Graph& graph, const CostModel& model, size_t max_configs,
                                    const ConfigFilter& keep) {
  CostTables tables;
  (void)priced_layers(graph, model, max_configs, keep, tables);
  return tables;
}

CostTables reprice_vertices(const Graph& graph, const CostModel& model, const CostTables& base) {
  CostTables tables;
  tables.machine = model.machine();
  tables.cost_model = model.name();
  tables.unit = model.unit();
  const size_t n = graph.vertices.size();
  if (base.configs.size() != n) throw std::logic_error("reprice_vertices: the base tables price another graph");
  tables.models.resize(n);
  tables.configs.resize(n);
  if (!base.per_node.empty()) tables.per_node.resize(n);
  tables.objective.vertex_cost.resize(n);
  price_vertices(graph, model, kDefaultMaxConfigs, {}, tables, &base);
  tables.objective.pairs = base.objective.pairs;  // the edges' matrices, shared
  return tables;
}

TableFootprint table_footprint(const CostTables& tables) {
  TableFootprint footprint;
  std::unordered_set<const void*> seen;
  auto add = [&](const void* storage, uint64_t bytes) {
    if (storage && seen.insert(storage).second) {
      footprint.bytes += bytes;
      ++footprint.arrays;
    }
  };
  for (const SharedArray<double>& cost : tables.objective.vertex_cost) add(cost.storage_id(), cost.bytes());
  for (const ConfigSet& configs : tables.configs) add(configs.splits.storage_id(), configs.splits.bytes());
  for (const PairCost& pair : tables.objective.pairs) {
    add(pair.u_class.storage_id(), pair.u_class.bytes());
    add(pair.v_class.storage_id(), pair.v_class.bytes());
    add(pair.cost.get(), pair.cost ? pair.cost->size() * sizeof(double) : 0);
  }
  return footprint;
}

CostTables slice_cost_tables(const CostTables& tables, const Graph& graph, int begin, int end) {
  return slice_cost_tables(tables, graph, {{begin, end}});
}

CostTables slice_cost_tables(const CostTables& tables, const Graph& graph, const std::vector<std::pair<int, int>>& ranges) {
  PASE_ASSERT(tables.objective.pairs.size() == graph.edges.size(), tables.objective.pairs.size(), graph.edges.size());
  CostTables slice;
  slice.machine = tables.machine;
  slice.cost_model = tables.cost_model;
  slice.unit = tables.unit;
  std::vector<int> position(graph.vertices.size(), -1);  // as stage_graph numbers the stage's vertices
  size_t count = 0;
  for (const auto& [begin, end] : ranges) count += static_cast<size_t>(end - begin);
  slice.models.resize(count);
  int next = 0;
  for (const auto& [begin, end] : ranges)
    for (int at = begin; at < end; ++at) {
      const size_t v = static_cast<size_t>(at);
      position[v] = next;
      slice.models.set(static_cast<size_t>(next++), tables.models.shared(v));
      slice.configs.push_back(tables.configs[v]);
      if (!tables.per_node.empty()) slice.per_node.push_back(tables.per_node[v]);
      slice.objective.vertex_cost.push_back(tables.objective.vertex_cost[v]);
    }
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    const TensorEdge& edge = graph.edges[e];
    const int u = position[static_cast<size_t>(edge.src)], v = position[static_cast<size_t>(edge.dst)];
    if (u < 0 || v < 0) continue;
    PairCost pair = tables.objective.pairs[e];
    pair.u = u;
    pair.v = v;
    slice.objective.pairs.push_back(std::move(pair));
  }
  return slice;
}

double evaluate_strategy_direct(const Graph& graph, const CostTables& tables, const CostModel& model,
                                const std::vector<int32_t>& choice) {
  double total = 0.0;
  for (size_t v = 0; v < graph.vertices.size(); ++v) total += model.layer(tables.models[v], tables.configs[v][choice[v]]);
  for (const TensorEdge& edge : graph.edges) {
    const SplitMap& out = tables.models[edge.src].outputs[edge.src_port];
    const SplitMap& in = tables.models[edge.dst].inputs[edge.dst_port];
    std::vector<int64_t> a(out.size()), b(in.size());
    tensor_split(out, tables.configs[edge.src][choice[edge.src]], a.data());
    tensor_split(in, tables.configs[edge.dst][choice[edge.dst]], b.data());
    total += model.redistribution(graph.vertices[edge.src].outputs[edge.src_port], a.data(), b.data());
  }
  return total;
}

}  // namespace pase
