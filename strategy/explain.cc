#include "strategy/explain.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "base/check.h"
#include "base/duration_text.h"
#include "costmodel/table_terms.h"
#include "graphs/op_registry.h"
#include "strategy/baselines.h"
#include "strategy/config_lookup.h"

namespace pase {
namespace {

// The graph edges (= objective pairs, index for index) into and out of each vertex.
struct Incidence {
  std::vector<std::vector<int>> in, out;
};

Incidence index_edges(const Graph& graph) {
  Incidence at;
  at.in.resize(graph.vertices.size());
  at.out.resize(graph.vertices.size());
  for (size_t e = 0; e < graph.edges.size(); ++e) {
    at.in[static_cast<size_t>(graph.edges[e].dst)].push_back(static_cast<int>(e));
    at.out[static_cast<size_t>(graph.edges[e].src)].push_back(static_cast<int>(e));
  }
  return at;
}

// The objective's cost of `vertex` in configuration `s` with the others as in
// `choice`: the only terms of the total that depend on the vertex's choice.
double local_cost(const Objective& objective, const Incidence& at, const std::vector<int32_t>& choice, size_t vertex,
                  int32_t s) {
  double cost = objective.vertex_cost[vertex][static_cast<size_t>(s)];
  for (int e : at.in[vertex]) {
    const PairCost& pair = objective.pairs[static_cast<size_t>(e)];
    cost += pair.at(static_cast<size_t>(choice[static_cast<size_t>(pair.u)]), static_cast<size_t>(s));
  }
  for (int e : at.out[vertex]) {
    const PairCost& pair = objective.pairs[static_cast<size_t>(e)];
    cost += pair.at(static_cast<size_t>(s), static_cast<size_t>(choice[static_cast<size_t>(pair.v)]));
  }
  return cost;
}

// The GEMM's third all-reduce sums the gradient of its second operand: a
// weight's for fc, conv and embedding, and for an einsum whose second operand
// is a parameter; for an einsum of two activations (attention), that tensor's.
std::string term_name(const Vertex& vertex, const VertexModel& model, const std::string& what) {
  if (what != "weight-gradient all-reduce" || !model.weights.empty() || vertex.inputs.size() < 2) return what;
  const VertexInput& second = vertex.inputs[1];
  if (second.parameter || second.source.vertex < 0) return what;
  return "'" + second.ref + "' gradient all-reduce";
}

ExplainTermKind term_kind(CostTermKind kind) {
  switch (kind) {
    case CostTermKind::Compute: return ExplainTermKind::Compute;
    case CostTermKind::AllReduce: return ExplainTermKind::AllReduce;
    case CostTermKind::ReduceScatter: return ExplainTermKind::ReduceScatter;
    case CostTermKind::AllGather: return ExplainTermKind::AllGather;
    case CostTermKind::Halo: return ExplainTermKind::Halo;
    case CostTermKind::Transfer: return ExplainTermKind::Transfer;
  }
  return ExplainTermKind::Compute;
}

ExplainedConfig priced(const Graph& graph, const CostTables& tables, const CostModel& model, const Incidence& at,
                       const std::vector<int32_t>& choice, size_t v, int32_t s, double chosen_local) {
  const Objective& objective = tables.objective;
  const VertexModel& vertex_model = tables.models[v];
  const int32_t* config = tables.configs[v][static_cast<size_t>(s)];
  ExplainedConfig out;
  out.index = s;
  out.config.assign(config, config + tables.configs[v].rank);
  for (int32_t split : out.config) out.devices_used *= split;
  out.layer_cost = objective.vertex_cost[v][static_cast<size_t>(s)];
  // On a mesh's layouts, each collective over the links its axes cross.
  const CostTerms terms = table_terms(tables, model, v, static_cast<size_t>(s));
  for (const CostTerm& term : terms)
    out.terms.push_back({term_kind(term.kind), term_name(graph.vertices[v], vertex_model, term.what), term.cost, -1, -1});
  for (int e : at.in[v]) {
    const PairCost& pair = objective.pairs[static_cast<size_t>(e)];
    const TensorEdge& edge = graph.edges[static_cast<size_t>(e)];
    double cost = pair.at(static_cast<size_t>(choice[static_cast<size_t>(pair.u)]), static_cast<size_t>(s));
    out.edge_cost += cost;
    const std::string& ref = graph.vertices[v].inputs[static_cast<size_t>(edge.dst_port)].ref;
    out.terms.push_back({ExplainTermKind::InEdge, "redistribution of input '" + ref + "'", cost, e, pair.u});
  }
  for (int e : at.out[v]) {
    const PairCost& pair = objective.pairs[static_cast<size_t>(e)];
    const TensorEdge& edge = graph.edges[static_cast<size_t>(e)];
    double cost = pair.at(static_cast<size_t>(s), static_cast<size_t>(choice[static_cast<size_t>(pair.v)]));
    out.edge_cost += cost;
    const Vertex& consumer = graph.vertices[static_cast<size_t>(edge.dst)];
    std::string what = "redistribution to '" + consumer.name + "'";
    if (consumer.inputs.size() > 1) what += " (its input " + std::to_string(edge.dst_port) + ")";
    out.terms.push_back({ExplainTermKind::OutEdge, what, cost, e, pair.v});
  }
  out.local_cost = local_cost(objective, at, choice, v, s);
  out.delta = out.local_cost - chosen_local;
  return out;
}

// ---- The one sentence -------------------------------------------------------

// "splitting the batch 'b' 2 ways and 'k' 4 ways", "keeping it on one device".
std::string split_words(const Graph& graph, const CostTables& tables, int vertex, const int32_t* config) {
  const Vertex& v = graph.vertices[static_cast<size_t>(vertex)];
  const VertexModel& model = tables.models[static_cast<size_t>(vertex)];
  const int batch = batch_dimension(v, model);
  std::vector<std::string> parts;
  for (size_t d = 0; d < model.domain.size(); ++d) {
    if (config[d] == 1) continue;
    std::string letter = d < model.letters.size() ? "'" + std::string(1, model.letters[d]) + "'" : "dimension " + std::to_string(d);
    parts.push_back((static_cast<int>(d) == batch ? "the batch " : "") + letter + " " + std::to_string(config[d]) + " ways");
  }
  if (parts.empty()) return "keeping it on one device";
  std::string text = "splitting ";
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  return text;
}

// " on 4 of the 8 devices" when a configuration leaves devices idle, else "".
std::string devices_words(const CostTables& tables, int64_t used) {
  if (used <= 1 || used >= tables.machine.devices) return "";
  return " on " + std::to_string(used) + " of the " + std::to_string(tables.machine.devices) + " devices";
}

bool is_communication(ExplainTermKind kind) { return kind != ExplainTermKind::Compute; }

// How much each term changes from `from` to `to`, matched by edge, else by name.
struct Change {
  std::string what;
  double change = 0;
  bool communication = false;
};

std::vector<Change> changes(const ExplainedConfig& from, const ExplainedConfig& to) {
  std::vector<Change> out;
  auto same = [](const ExplainTerm& a, const ExplainTerm& b) { return a.edge >= 0 ? a.edge == b.edge : b.edge < 0 && a.what == b.what; };
  for (const ExplainTerm& t : to.terms) {
    double before = 0;
    for (const ExplainTerm& f : from.terms)
      if (same(f, t)) before += f.cost;
    out.push_back({t.what, t.cost - before, is_communication(t.kind)});
  }
  for (const ExplainTerm& f : from.terms) {
    bool matched = false;
    for (const ExplainTerm& t : to.terms) matched = matched || same(f, t);
    if (!matched) out.push_back({f.what, -f.cost, is_communication(f.kind)});
  }
  return out;
}

std::string capitalised(std::string text) {
  if (!text.empty()) text[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(text[0])));
  return text;
}

// "3.1 ms of compute and 1.2 ms of output all-reduce at 16 GB/s": the two
// largest, then the rest together. The `pase` model prices every word at one
// bandwidth: the first communication named says which (once a sentence).
std::string list(const CostTables& tables, std::vector<Change> items, bool& bandwidth_said) {
  std::stable_sort(items.begin(), items.end(), [](const Change& a, const Change& b) { return std::fabs(a.change) > std::fabs(b.change); });
  std::string text;
  double rest = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i >= 2) {
      rest += std::fabs(items[i].change);
      continue;
    }
    text += (i ? " and " : "") + format_duration(cost_seconds(tables, std::fabs(items[i].change))) + " of " + items[i].what;
    if (items[i].communication && !bandwidth_said && tables.unit == "flop") {
      char gbps[48];
      std::snprintf(gbps, sizeof gbps, " at %g GB/s", tables.machine.bandwidth_gbps);
      text += gbps;
      bandwidth_said = true;
    }
  }
  if (rest > 0) text += " (and " + format_duration(cost_seconds(tables, rest)) + " elsewhere)";
  return text;
}

// "would save A but add B": what going from `from` to `to` saves and adds.
std::string trade(const CostTables& tables, const ExplainedConfig& from, const ExplainedConfig& to) {
  std::vector<Change> all = changes(from, to);
  double largest = 0;
  for (const Change& c : all) largest = std::max(largest, std::fabs(c.change));
  std::vector<Change> saved, added;
  for (const Change& c : all) {
    if (std::fabs(c.change) <= 1e-9 * largest) continue;  // rounding, not a difference
    (c.change < 0 ? saved : added).push_back(c);
  }
  bool bandwidth_said = false;
  const std::string save = list(tables, saved, bandwidth_said);
  const std::string add = list(tables, added, bandwidth_said);
  if (!saved.empty() && !added.empty()) return "would save " + save + " but add " + add;
  if (!added.empty()) return "would save nothing and add " + add;
  if (!saved.empty()) return "would save " + save;
  return "would change nothing";
}

// "splitting the batch 'b' 4 ways (b4) on 4 of the 8 devices".
std::string named(const Graph& graph, const CostTables& tables, int vertex, const ExplainedConfig& c) {
  const std::string letters = config_letters(tables.models[static_cast<size_t>(vertex)].letters, c.config);
  return split_words(graph, tables, vertex, c.config.data()) + (letters == "-" ? "" : " (" + letters + ")") +
         devices_words(tables, c.devices_used);
}

std::string reason(const Graph& graph, const CostTables& tables, int vertex, const Explanation& x,
                   const ExplainedConfig* data_parallel, double tolerance) {
  const ExplainedConfig& chosen = x.chosen;
  if (x.alternatives.empty())
    return capitalised(named(graph, tables, vertex, chosen)) + " is its only configuration on " +
           std::to_string(tables.machine.devices) + (tables.machine.devices == 1 ? " device" : " devices") +
           ": no dimension can be split (unsplittable, not a divisor, or below the cutoff).";
  if (x.cheaper > 0) {
    const ExplainedConfig& best = x.alternatives.front();
    return capitalised(named(graph, tables, vertex, best)) + " instead " + trade(tables, chosen, best) + ", " +
           format_duration(cost_seconds(tables, -best.delta)) +
           " less a step: this strategy is not the best choice for this layer given its neighbours.";
  }
  // At a local optimum: against data parallelism when that is not the
  // choice (what a user would have done), else against the next best.
  const bool against_dp = data_parallel != nullptr;
  const ExplainedConfig& other = against_dp ? *data_parallel : x.alternatives.front();
  const std::string other_words = (against_dp ? "data parallelism, " : "the next best, ") + named(graph, tables, vertex, other) + ",";
  std::string head = capitalised(named(graph, tables, vertex, chosen));
  if (other.delta <= tolerance)
    return head + " ties with " + other_words.substr(0, other_words.size() - 1) +
           " here (the solver keeps the first in configuration order).";
  return head + " is cheapest given its neighbours: " + other_words + " " + trade(tables, chosen, other) + ", " +
         format_duration(cost_seconds(tables, other.delta)) + " more a step.";
}

// On a mesh's layouts a configuration is listed once per way its splits run
// on the axes: the `top` cheapest of `others` whose configurations differ
// from the chosen one's and from each other (each at its best layout).
template <typename Order>
std::vector<int32_t> best_layout_of_each(const ConfigSet& configs, std::vector<int32_t> others, int32_t chosen,
                                         size_t top, Order cheaper_first) {
  std::sort(others.begin(), others.end(), cheaper_first);
  const auto same = [&](int32_t a, int32_t b) {
    return std::equal(configs[static_cast<size_t>(a)], configs[static_cast<size_t>(a)] + configs.rank,
                      configs[static_cast<size_t>(b)]);
  };
  std::vector<int32_t> kept;
  for (int32_t s : others) {
    if (kept.size() == top) break;
    if (same(s, chosen) || std::any_of(kept.begin(), kept.end(), [&](int32_t k) { return same(s, k); })) continue;
    kept.push_back(s);
  }
  return kept;
}

Explanation explain_one(const Graph& graph, const CostTables& tables, const CostModel& model, const Incidence& at,
                        const std::vector<int32_t>& choice, int vertex, size_t top, double total) {
  PASE_ASSERT(vertex >= 0 && static_cast<size_t>(vertex) < graph.vertices.size(), vertex, graph.vertices.size());
  PASE_ASSERT(choice.size() == graph.vertices.size(), choice.size(), graph.vertices.size());
  const size_t v = static_cast<size_t>(vertex);
  const Objective& objective = tables.objective;
  const size_t count = objective.config_count(v);
  const int32_t chosen = choice[v];
  PASE_ASSERT(chosen >= 0 && static_cast<size_t>(chosen) < count, chosen, count);

  std::vector<double> local(count);
  for (size_t s = 0; s < count; ++s) local[s] = local_cost(objective, at, choice, v, static_cast<int32_t>(s));
  // Two configurations whose costs differ by rounding alone are a tie.
  const double tolerance = 1e-12 * std::max(std::fabs(total), std::fabs(local[static_cast<size_t>(chosen)]));

  Explanation x;
  x.vertex = vertex;
  x.configurations = count;
  x.chosen = priced(graph, tables, model, at, choice, v, chosen, local[static_cast<size_t>(chosen)]);
  std::vector<int32_t> others;
  others.reserve(count);
  for (size_t s = 0; s < count; ++s) {
    if (static_cast<int32_t>(s) == chosen) continue;
    others.push_back(static_cast<int32_t>(s));
    if (local[s] < local[static_cast<size_t>(chosen)] - tolerance) ++x.cheaper;
  }
  const auto cheaper_first = [&](int32_t a, int32_t b) {
    return local[static_cast<size_t>(a)] != local[static_cast<size_t>(b)] ? local[static_cast<size_t>(a)] < local[static_cast<size_t>(b)]
                                                                          : a < b;
  };
  if (tables.per_node.empty()) {
    const size_t shown = std::min(top, others.size());
    std::partial_sort(others.begin(), others.begin() + static_cast<std::ptrdiff_t>(shown), others.end(), cheaper_first);
    others.resize(shown);
  } else {
    others = best_layout_of_each(tables.configs[v], others, chosen, top, cheaper_first);
  }
  for (int32_t other : others)
    x.alternatives.push_back(priced(graph, tables, model, at, choice, v, other, local[static_cast<size_t>(chosen)]));

  x.data_parallel_index = data_parallel_config(graph, tables, vertex);
  const ExplainedConfig* data_parallel = nullptr;
  if (x.data_parallel_index != chosen) {
    for (const ExplainedConfig& alternative : x.alternatives)
      if (alternative.index == x.data_parallel_index) data_parallel = &alternative;
    if (!data_parallel) {
      x.data_parallel = priced(graph, tables, model, at, choice, v, x.data_parallel_index, local[static_cast<size_t>(chosen)]);
      data_parallel = &*x.data_parallel;
    }
  }
  x.reason = reason(graph, tables, vertex, x, data_parallel, tolerance);
  return x;
}

}  // namespace

double cost_seconds(const CostTables& tables, double cost) {
  return tables.unit == "flop" ? cost / (tables.machine.flops_tflops * 1e12) : cost;
}

std::string config_words(const Graph& graph, const CostTables& tables, int vertex, const int32_t* config) {
  return split_words(graph, tables, vertex, config) +
         devices_words(tables, devices_used(config, tables.configs[static_cast<size_t>(vertex)].rank));
}

Explanation explain_vertex(const Graph& graph, const CostTables& tables, const CostModel& model,
                           const std::vector<int32_t>& choice, int vertex, size_t top) {
  return explain_one(graph, tables, model, index_edges(graph), choice, vertex, top, tables.objective.evaluate(choice));
}

std::vector<Explanation> explain_all(const Graph& graph, const CostTables& tables, const CostModel& model,
                                     const std::vector<int32_t>& choice, size_t top) {
  const Incidence at = index_edges(graph);
  const double total = tables.objective.evaluate(choice);
  std::vector<Explanation> out;
  out.reserve(graph.vertices.size());
  for (size_t v = 0; v < graph.vertices.size(); ++v) out.push_back(explain_one(graph, tables, model, at, choice, static_cast<int>(v), top, total));
  return out;
}

}  // namespace pase
