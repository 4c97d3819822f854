#include "strategy/baselines.h"

#include <algorithm>
#include <chrono>

#include "base/error.h"
#include "graphs/megatron_layout.h"
#include "graphs/op_registry.h"
#include "strategy/config_lookup.h"
#include "base/closest_name.h"

namespace pase {
namespace {

/// "Split domain dimension `dim` `ways` ways, as far as allowed."
struct Wish {
  int dim = 0;
  int64_t ways = 1;
};

// The configuration index closest to the wishes: each wished dim gets the
// largest allowed split dividing its wish. Wishes multiply to at most p, so the
// tuple is within the device count; the all-ones configuration (index 0, first
// in lexicographic order) is the fallback for a contiguity clash.
int32_t realize(const Vertex& vertex, const VertexModel& model, const ConfigSet& configs, int64_t devices,
                const std::vector<Wish>& wishes) {
  std::vector<int32_t> tuple(model.domain.size(), 1);
  for (const Wish& wish : wishes) {
    if (wish.dim < 0 || wish.dim >= static_cast<int>(tuple.size())) continue;
    int32_t chosen = 1;
    for (int32_t split : allowed_splits(model.domain[wish.dim], vertex.cutoff, devices, model.splittable[wish.dim]))
      if (wish.ways % split == 0) chosen = split;
    tuple[wish.dim] = chosen;
  }
  int32_t index = find_config(configs, tuple.data());
  return index >= 0 ? index : 0;
}

std::vector<int64_t> divisors(int64_t p) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= p; ++d)
    if (p % d == 0) out.push_back(d);
  return out;
}

// Data parallelism uses all p devices only where the batch splits p ways
// (it divides and leaves `cutoff` per device): say so when it does not.
std::string data_parallel_note(const CostTables& tables, const std::vector<int32_t>& choice) {
  const int64_t p = tables.machine.devices;
  int64_t most = 1;
  size_t fewer = 0;
  for (size_t v = 0; v < choice.size(); ++v) {
    const ConfigSet& configs = tables.configs[v];
    const int64_t used = devices_used(configs[static_cast<size_t>(choice[v])], configs.rank);
    most = std::max(most, used);
    fewer += used < p;
  }
  if (fewer == 0) return "";
  if (most < p)
    return "the batch splits at most " + std::to_string(most) + " ways: uses " + std::to_string(most) + " of the " +
           std::to_string(p) + " devices";
  return std::to_string(fewer) + " of " + std::to_string(choice.size()) + " layers use fewer than the " + std::to_string(p) +
         " devices (their batch does not split " + std::to_string(p) + " ways)";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int32_t data_parallel_config(const Graph& graph, const CostTables& tables, int vertex) {
  const int64_t p = tables.machine.devices;
  const Vertex& v = graph.vertices[static_cast<size_t>(vertex)];
  const VertexModel& model = tables.models[static_cast<size_t>(vertex)];
  return realize(v, model, tables.configs[static_cast<size_t>(vertex)], p, {{batch_dimension(v, model), p}});
}

std::vector<int32_t> data_parallel_choice(const Graph& graph, const CostTables& tables) {
  std::vector<int32_t> choice(graph.vertices.size());
  for (size_t v = 0; v < graph.vertices.size(); ++v) choice[v] = data_parallel_config(graph, tables, static_cast<int>(v));
  return choice;
}

std::vector<int32_t> owt_choice(const Graph& graph, const CostTables& tables) {
  const int64_t p = tables.machine.devices;
  std::vector<int32_t> choice = data_parallel_choice(graph, tables);
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    RoleDim role = op_definition(graph.vertices[v].kind).roles.owt_dim;
    if (!role) continue;
    const VertexModel& model = tables.models[v];
    choice[v] = realize(graph.vertices[v], model, tables.configs[v], p, {{role(graph.vertices[v], model), p}});
  }
  return choice;
}

bool is_transformer_like(const Graph& graph) {
  for (const Vertex& vertex : graph.vertices) {
    RoleDim role = op_definition(vertex.kind).roles.tensor_parallel_dim;
    if (!role) continue;
    VertexModel model = build_vertex_model(vertex);
    int dim = role(vertex, model);
    if (dim >= 0 && model.letters[static_cast<size_t>(dim)] == 'h') return true;
  }
  return false;
}

std::vector<int32_t> megatron_choice(const Graph& graph, const CostTables& tables, int64_t batch_ways,
                                     int64_t model_ways) {
  const int64_t p = tables.machine.devices;
  std::vector<int32_t> choice(graph.vertices.size(), 0);
  std::vector<int64_t> split;
  for (size_t v = 0; v < graph.vertices.size(); ++v) {
    const Vertex& vertex = graph.vertices[v];
    const VertexModel& model = tables.models[v];
    std::vector<Wish> wishes = {{batch_dimension(vertex, model), batch_ways}};
    // -1 for an op with a role: this vertex has no model-parallel dimension.
    const int dim = megatron_tensor_dimension(graph, static_cast<int>(v), model);
    if (dim >= 0) {
      wishes.push_back({dim, model_ways});
    } else if (!op_definition(vertex.kind).roles.tensor_parallel_dim && !vertex.inputs.empty() && vertex.inputs[0].source.vertex >= 0 && !model.inputs.empty()) {
      // Everything else keeps the layout its first input arrives in (softmax over
      // split heads stays split, a norm after a row-parallel projection is data parallel).
      const TensorSource& source = vertex.inputs[0].source;
      const int32_t* producer = tables.configs[source.vertex][choice[source.vertex]];
      const SplitMap& out = tables.models[source.vertex].outputs[source.port];
      split.assign(out.size(), 1);
      tensor_split(out, producer, split.data());
      const SplitMap& in = model.inputs[0];
      bool direct = in.size() == split.size();
      for (const auto& dims : in) direct = direct && dims.size() == 1;
      if (direct) {
        wishes.clear();
        for (size_t i = 0; i < in.size(); ++i)
          if (split[i] > 1) wishes.push_back({in[i][0], split[i]});
      }
    }
    choice[v] = realize(vertex, model, tables.configs[v], p, wishes);
  }
  return choice;
}

const std::vector<std::string>& baseline_names() {
  static const std::vector<std::string> names = {"data-parallel", "owt", "megatron", "mcmc"};
  return names;
}

// Megatron-LM's layout at the best m * n = p, or at n = tensor_parallel as asked.
// "m = 8, n = 8": its note, and whether its norms run sequence parallel
// (the graph's GEMMs carry the roles and there are ways to split over).
std::string megatron_note(const Graph& graph, int64_t m, int64_t n) {
  const bool roles = std::any_of(graph.vertices.begin(), graph.vertices.end(),
                                 [](const Vertex& v) { return v.sequence_parallel != SequenceParallel::None; });
  return "m = " + std::to_string(m) + ", n = " + std::to_string(n) + (roles && n > 1 ? ", sequence parallel" : "");
}

void megatron_baseline(BaselineResult& result, const Graph& graph, const CostTables& tables, int64_t tensor_parallel) {
  const int64_t p = tables.machine.devices;
  if (tensor_parallel > 0) {
    if (p % tensor_parallel != 0)
      throw OptionError({"tensor_parallel", "tensor_parallel", "",
                         ": expected a divisor of the " + std::to_string(p) + " devices, got " +
                             std::to_string(tensor_parallel)});
    result.choice = megatron_choice(graph, tables, p / tensor_parallel, tensor_parallel);
    result.note = megatron_note(graph, p / tensor_parallel, tensor_parallel) + " (as asked)";
    return;
  }
  // Try every m * n = p; ties go to the larger m (closer to data parallelism).
  std::vector<int64_t> ms = divisors(p);
  double best = 0.0;
  for (auto it = ms.rbegin(); it != ms.rend(); ++it) {
    std::vector<int32_t> choice = megatron_choice(graph, tables, *it, p / *it);
    double cost = tables.objective.evaluate(choice);
    if (result.choice.empty() || cost < best) {
      best = cost;
      result.choice = std::move(choice);
      result.note = megatron_note(graph, *it, p / *it);
    }
  }
}

BaselineResult run_baseline(const std::string& name, const Graph& graph, const CostTables& tables,
                            const McmcOptions& mcmc, int64_t tensor_parallel) {
  auto start = std::chrono::steady_clock::now();
  BaselineResult result;
  result.name = name;
  const Objective& objective = tables.objective;
  if (name == "data-parallel") {
    result.choice = data_parallel_choice(graph, tables);
    result.note = data_parallel_note(tables, result.choice);
  } else if (name == "owt") {
    bool has_fc = false;
    for (const Vertex& vertex : graph.vertices) has_fc = has_fc || op_definition(vertex.kind).roles.owt_dim != nullptr;
    if (!has_fc) {
      result.applicable = false;
      result.note = "no fc layer, owt would equal data-parallel";
      return result;
    }
    result.choice = owt_choice(graph, tables);
  } else if (name == "megatron") {
    if (!is_transformer_like(graph)) {
      result.applicable = false;
      result.note = "not transformer-like (no einsum with a head letter 'h')";
      return result;
    }
    megatron_baseline(result, graph, tables, tensor_parallel);
  } else if (name == "fsdp") {
    result.choice = data_parallel_choice(graph, tables);
    const std::string note = data_parallel_note(tables, result.choice);
    result.note = "data parallel, ZeRO-3" + (note.empty() ? "" : "; " + note);
  } else if (name == "mcmc") {
    McmcResult run = mcmc_search(objective, data_parallel_choice(graph, tables), mcmc);
    result.choice = std::move(run.choice);
    result.note = "seed " + std::to_string(mcmc.seed) + ", " + std::to_string(run.iterations) + " iterations, " +
                  std::to_string(run.accepted) + " accepted, stopped by " + mcmc_stop_name(run.stop);
  } else {
    std::vector<std::string> names = baseline_names();
    names.push_back("fsdp");
    std::string hint = closest_name(name, names);
    throw InputError("unknown strategy '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                     "; choose data-parallel, owt, megatron, fsdp or mcmc");
  }
  result.cost = objective.evaluate(result.choice);
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace pase
