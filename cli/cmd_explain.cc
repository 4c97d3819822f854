// `pase explain GRAPH --devices N (--layer NAME | --all) [--strategy FILE]`:
// why a layer of the optimum (or of a given strategy) has its configuration,
// against its best alternatives with every other layer held fixed
// (strategy/explain.h does the work; this file parses and prints).
#include <algorithm>
#include <cmath>
#include <iostream>
#include <sstream>
#include <optional>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/explain_boundary.h"
#include "cli/graph_input.h"
#include "cli/mesh_choice.h"
#include "cli/memory_options.h"
#include "cli/file_model.h"
#include "cli/model_options.h"
#include "cli/text_output.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "strategy/config_lookup.h"
#include "base/duration_text.h"
#include "strategy/explain.h"
#include "plans/mesh.h"
#include "plans/mesh_pricing.h"
#include "solve/solve_request.h"
#include "strategy/strategy_reader.h"
#include "base/closest_name.h"

namespace pase {
namespace {

struct ExplainCliOptions {
  std::string graph;
  int64_t devices = 0;  // 0: the strategy file's
  std::string layer;
  bool all = false;
  int boundary = 0;  // 0: none
  std::string strategy;
  int64_t top = 5;
  bool json = false;
  CostModelOptions model;
  bool model_given = false;  // --cost-model, --machine, --flops or --bandwidth: else a strategy file's own model
  MemoryCliOptions memory;
};

const char* kind_name(ExplainTermKind kind) {
  switch (kind) {
    case ExplainTermKind::Compute: return "compute";
    case ExplainTermKind::AllReduce: return "all-reduce";
    case ExplainTermKind::ReduceScatter: return "reduce-scatter";
    case ExplainTermKind::AllGather: return "all-gather";
    case ExplainTermKind::Halo: return "halo";
    case ExplainTermKind::Transfer: return "transfer";
    case ExplainTermKind::InEdge: return "in-edge";
    case ExplainTermKind::OutEdge: return "out-edge";
  }
  return "compute";
}

// A configuration by its letters ("b8·h2"); the JSON keeps the tuple.
std::string config_text(const std::string& letters, const ExplainedConfig& c) { return config_letters(letters, c.config); }

// ---- Text -------------------------------------------------------------------

// A signed change of the step: "+1.2 ms", "-3 us", "0".
std::string signed_duration(const CostTables& tables, double delta) {
  if (delta == 0) return "0";
  return (delta > 0 ? "+" : "-") + format_duration(cost_seconds(tables, std::fabs(delta)));
}

// One row per term (the union over the shown configurations, in order of
// first appearance), one column per configuration; "-" where a term costs nothing.
void print_explanation(std::ostream& out, const Graph& graph, const CostTables& tables, const Explanation& x) {
  const Vertex& vertex = graph.vertices[static_cast<size_t>(x.vertex)];
  const VertexModel& model = tables.models[static_cast<size_t>(x.vertex)];
  std::string domain = "(";
  for (size_t d = 0; d < model.domain.size(); ++d) domain += (d ? "," : "") + std::to_string(model.domain[d]);
  domain += ")";
  out << vertex.name << ": " << vertex.op << ", dims '" << model.letters << "' " << domain << ", " << x.configurations
      << (x.configurations == 1 ? " configuration" : " configurations") << "\n";

  std::vector<const ExplainedConfig*> columns = {&x.chosen};
  std::vector<std::string> headers = {"chosen"};
  for (size_t i = 0; i < x.alternatives.size(); ++i) {
    columns.push_back(&x.alternatives[i]);
    headers.push_back(x.alternatives[i].index == x.data_parallel_index ? "data-parallel" : "alt " + std::to_string(i + 1));
  }
  if (x.data_parallel) {
    columns.push_back(&*x.data_parallel);
    headers.push_back("data-parallel");
  }
  struct Row {
    std::string what;
    int edge = -1;
  };
  std::vector<Row> rows;
  for (const ExplainedConfig* c : columns)
    for (const ExplainTerm& t : c->terms) {
      bool seen = false;
      for (const Row& r : rows) seen = seen || (t.edge >= 0 ? r.edge == t.edge : r.edge < 0 && r.what == t.what);
      if (!seen) rows.push_back({t.what, t.edge});
    }
  size_t label_width = std::string("change of the step").size();
  for (const Row& r : rows) label_width = std::max(label_width, r.what.size());
  size_t width = std::string("data-parallel").size();
  for (const ExplainedConfig* c : columns) width = std::max(width, display_width(config_text(model.letters, *c)));
  width += 2;
  auto line = [&](const std::string& label, const std::vector<std::string>& cells) {
    std::string text = "  " + pad_right(label, label_width);
    for (const std::string& cell : cells) text += pad_left(cell, width);
    out << text << "\n";
  };
  line("", headers);
  std::vector<std::string> cells;
  for (const ExplainedConfig* c : columns) cells.push_back(config_text(model.letters, *c));
  line("config", cells);
  cells.clear();
  for (const ExplainedConfig* c : columns) cells.push_back(std::to_string(c->devices_used) + (c->devices_used < tables.machine.devices ? "*" : ""));
  line("devices", cells);
  for (const Row& r : rows) {
    cells.clear();
    for (const ExplainedConfig* c : columns) {
      double cost = 0;
      bool present = false;
      for (const ExplainTerm& t : c->terms)
        if (r.edge >= 0 ? t.edge == r.edge : t.edge < 0 && t.what == r.what) cost += t.cost, present = true;
      cells.push_back(present && cost != 0 ? format_duration(cost_seconds(tables, cost)) : "-");
    }
    line(r.what, cells);
  }
  cells.clear();
  for (const ExplainedConfig* c : columns) cells.push_back(format_duration(cost_seconds(tables, c->local_cost)));
  line("layer and its edges", cells);
  cells.clear();
  for (const ExplainedConfig* c : columns) cells.push_back(c == &x.chosen ? "" : signed_duration(tables, c->delta));
  line("change of the step", cells);
  out << "why: " << x.reason << "\n";
}

// ---- JSON -------------------------------------------------------------------

nlohmann::ordered_json config_json(const Graph& graph, const ExplainedConfig& c) {
  nlohmann::ordered_json terms = nlohmann::ordered_json::array();
  for (const ExplainTerm& t : c.terms) {
    nlohmann::ordered_json term = {{"kind", kind_name(t.kind)}, {"what", t.what}, {"cost", t.cost}};
    if (t.neighbour >= 0) term["neighbour"] = graph.vertices[static_cast<size_t>(t.neighbour)].name;
    terms.push_back(term);
  }
  return {{"config", c.config},         {"devices_used", c.devices_used}, {"layer_cost", c.layer_cost},
          {"edge_cost", c.edge_cost},   {"local_cost", c.local_cost},     {"delta", c.delta},
          {"terms", terms}};
}

nlohmann::ordered_json explanation_json(const Graph& graph, const CostTables& tables, const Explanation& x) {
  const Vertex& vertex = graph.vertices[static_cast<size_t>(x.vertex)];
  nlohmann::ordered_json alternatives = nlohmann::ordered_json::array();
  for (const ExplainedConfig& c : x.alternatives) alternatives.push_back(config_json(graph, c));
  return {{"name", vertex.name},
          {"op", vertex.op},
          {"dims", tables.models[static_cast<size_t>(x.vertex)].letters},
          {"configurations", x.configurations},
          {"cheaper_alternatives", x.cheaper},
          {"chosen", config_json(graph, x.chosen)},
          {"alternatives", alternatives},
          {"data_parallel", x.data_parallel ? config_json(graph, *x.data_parallel) : nlohmann::ordered_json(nullptr)},
          {"reason", x.reason}};
}

// ---- The command ------------------------------------------------------------

// A change of bytes per device, signed, in MiB.
std::string signed_mib(int64_t bytes) {
  return (bytes < 0 ? "-" : "+") + format_number("%.2f", static_cast<double>(bytes < 0 ? -bytes : bytes) / (1 << 20)) +
         " MiB";
}

// What recomputing the layer, or sharding its state at another ZeRO stage,
// would change at its configuration, the layer alone (docs/training.md).
void print_techniques(std::ostream& out, const Graph& graph,
                      const SolveOutcome& solved, const CostModel& model, const TrainingSetup& training, int layer) {
  const CostTables& tables = solved.tables;
  const size_t v = static_cast<size_t>(layer);
  const size_t config = static_cast<size_t>(solved.solution.choice[v]);
  const int32_t* c = tables.configs[v][config];
  const uint64_t bytes = solved.memory.bytes(v, config);
  const std::string letters = config_letters(tables.models[v].letters, c, tables.configs[v].rank);
  out << "\nits techniques at " << (letters == "-" ? std::string("its unsplit configuration") : letters)
      << ", this layer alone:\n";
  // Recomputation flipped: the layer's price with the flag turned, its bytes with its outputs (not) kept.
  Graph flipped = graph;
  flipped.vertices[v].recompute = !graph.vertices[v].recompute;
  VertexModel flipped_model = tables.models[v];
  flipped_model.recompute = flipped.vertices[v].recompute;
  const MemoryTables flipped_memory = build_memory_tables(flipped, tables, training);
  out << "  " << (graph.vertices[v].recompute ? "keeping its outputs (now recomputed)" : "recomputing it (now kept)")
      << ": " << signed_duration(tables, model.layer(flipped_model, c) - model.layer(tables.models[v], c))
      << " a step, "
      << signed_mib(static_cast<int64_t>(flipped_memory.bytes(v, config)) - static_cast<int64_t>(bytes)) << "\n";
  // Another ZeRO stage for this layer alone.
  const int now = zero_stage_of(training, graph.vertices[v].zero);
  for (int zero = 0; zero <= kMaxZeroStage; ++zero) {
    if (zero == now) continue;
    Graph staged = graph;
    staged.vertices[v].zero = zero;
    VertexModel staged_model = tables.models[v];
    staged_model.zero = zero;
    const MemoryTables staged_memory = build_memory_tables(staged, tables, training);
    out << "  ZeRO-" << zero << " (now ZeRO-" << now << "): "
        << signed_duration(tables, model.layer(staged_model, c) - model.layer(tables.models[v], c)) << " a step, "
        << signed_mib(static_cast<int64_t>(staged_memory.bytes(v, config)) - static_cast<int64_t>(bytes)) << "\n";
  }
}

// --boundary K: the file's pipeline with stage K's start moved (cli/explain_boundary.h).
int run_explain_boundary(const ExplainCliOptions& o) {
  if (o.strategy.empty()) throw UsageError("--boundary: explains a pipeline strategy file's boundary (add --strategy FILE)");
  const FileAndModel read = read_file_and_model(o.strategy, o.model, o.model_given, std::cerr);
  const StrategyDocument& file = read.file;
  if (!file.training || file.training->stages < 2)
    throw UsageError("--boundary: " + o.strategy + " has no pipeline stages (a boundary is where a stage begins)");
  if (micro_batches_auto(o.memory)) throw UsageError("--micro-batches auto: explain weighs one strategy (the file's count)");
  BoundaryQuestion question;
  question.graph_path = o.graph;
  question.strategy_path = o.strategy;
  question.file = &file;
  question.devices = o.devices ? o.devices : file.devices.value_or(0);
  question.boundary = o.boundary;
  question.training = memory_options(o.memory, file);
  note_training_differences(file, question.training, o.strategy, std::cerr);
  question.model = read.model;
  question.json = o.json;
  return explain_boundary(question);
}

int run_explain(const ExplainCliOptions& given) {
  ExplainCliOptions o = given;
  if ((o.boundary != 0) + !o.layer.empty() + o.all != 1)
    throw UsageError("explain: give exactly one of --layer NAME, --all or --boundary K");
  if (o.boundary != 0) return run_explain_boundary(o);
  if (o.top < 0) throw UsageError("--top: expected a non-negative count, got " + std::to_string(o.top));
  std::optional<StrategyDocument> file;
  int64_t devices = o.devices;
  if (!o.strategy.empty()) {
    FileAndModel read = read_file_and_model(o.strategy, given.model, given.model_given, std::cerr);
    file = std::move(read.file);
    o.model = read.model;  // the file's own unless the command line names one
    refuse_pipeline_strategy(*file, o.strategy, "explain");
    if (devices == 0 && file->devices) devices = *file->devices;
    if (devices == 0) throw InputError(o.strategy + ": field 'devices': missing; pass --devices");
  } else if (devices == 0) {
    throw UsageError("--devices: required without --strategy");
  }
  const TrainingSetup training = memory_options(o.memory, file);
  std::ostringstream differences;  // said once the file is priced (not before an error about it)
  if (file) note_training_differences(*file, training, o.strategy, differences);
  std::unique_ptr<CostModel> model = make_cost_model(o.model, devices, training);
  if (micro_batches_auto(o.memory))
    throw UsageError("--micro-batches auto: explain weighs one strategy; give a count (or --strategy, whose count it takes)");
  Graph graph = training_graph(read_graph_input(o.graph), o.graph, training);
  int layer = -1;
  if (!o.all) {
    layer = graph.find_vertex(o.layer);
    if (layer < 0) {
      std::vector<std::string> names;
      for (const Vertex& vertex : graph.vertices) names.push_back(vertex.name);
      const std::string hint = closest_name(o.layer, names);
      throw InputError("--layer: no layer '" + o.layer + "' in graph '" + graph.name + "'" +
                       (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
    }
  }
  if (file) apply_layer_techniques(graph, *file, training, o.strategy);
  SolveRequest request = pricing_request(training, file ? &*file : nullptr);
  request.min_row = search_min_row(o.model);
  if (file) {
    price_on_searched_plan(request, *file, devices, *model);
  } else if (prices_links(*model)) {  // the optimum as solve finds it: on the default mesh's layouts
    request.mesh = default_mesh(devices, model->devices_per_node());
    request.search_layouts = true;
  }
  SolveOutcome out = solve_request(graph, *model, request);
  if (out.graph) graph = std::move(*out.graph);  // each layer's techniques, chosen by the solver
  const CostTables& tables = out.tables;
  const std::vector<int32_t>& choice = out.solution.choice;
  std::string strategy_words = file ? o.strategy : "the optimum";
  if (out.bounded && !out.bounded->proven_optimal())
    strategy_words = "a bounded solve's answer (at most " + format_number("%.3g", 100 * out.bounded->gap()) +
                     "% above the optimum)";
  const double total = tables.objective.evaluate(choice);
  std::cerr << differences.str();
  const size_t top = static_cast<size_t>(o.top);
  std::vector<Explanation> explanations;
  if (o.all) explanations = explain_all(graph, tables, *model, choice, top);
  else explanations.push_back(explain_vertex(graph, tables, *model, choice, layer, top));

  if (o.json) {
    nlohmann::ordered_json doc;
    doc["format"] = "pase-explain";
    doc["version"] = 1;
    doc["graph"] = graph.name;
    doc["devices"] = tables.machine.devices;
    doc["cost_model"] = tables.cost_model;
    doc["cost_unit"] = tables.unit;
    doc["machine"] = {{"flops_tflops", tables.machine.flops_tflops}, {"bandwidth_gbps", tables.machine.bandwidth_gbps}};
    doc["strategy"] = file ? o.strategy : std::string("optimum");
    doc["total_cost"] = total;
    doc["layers"] = nlohmann::ordered_json::array();
    for (const Explanation& x : explanations) doc["layers"].push_back(explanation_json(graph, tables, x));
    std::cout << doc.dump(2) << "\n";
    return 0;
  }
  std::cout << graph.name << " on " << tables.machine.devices << " devices (" << tables.machine.flops_tflops << " TFLOP/s, "
            << tables.machine.bandwidth_gbps << " GB/s), cost model " << tables.cost_model << ", strategy " << strategy_words
            << ": " << format_total(total, tables.unit) << " " << tables.unit << ", " << format_duration(cost_seconds(tables, total))
            << " a step\n"
            << "Each column prices this layer with every other layer as the strategy has it: its compute, its\n"
            << "collectives and the redistribution on its edges, as time on the modelled machine.\n";
  for (const Explanation& x : explanations) {
    std::cout << "\n";
    print_explanation(std::cout, graph, tables, x);
  }
  if (!o.all) print_techniques(std::cout, graph, out, *model, training, layer);
  bool fewer = false;
  for (const Explanation& x : explanations) {
    fewer = fewer || x.chosen.devices_used < tables.machine.devices;
    for (const ExplainedConfig& c : x.alternatives) fewer = fewer || c.devices_used < tables.machine.devices;
    if (x.data_parallel) fewer = fewer || x.data_parallel->devices_used < tables.machine.devices;
  }
  if (fewer) std::cout << "\n* on fewer than the " << tables.machine.devices << " devices: the others idle for that layer\n";
  return 0;
}

}  // namespace

CommandRunner register_explain(CLI::App& app) {
  auto o = std::make_shared<ExplainCliOptions>();
  CLI::App* cmd = app.add_subcommand("explain", "Explain why a layer has its configuration: its cost against the best alternatives");
  cmd->add_option("graph", o->graph, "Graph file (pase-graph JSON, or MODEL.onnx)")->required();
  cmd->add_option("--devices,-p", o->devices, "Number of devices (default: the strategy file's)");
  cmd->add_option("--layer,-l", o->layer, "The layer (vertex) to explain");
  cmd->add_flag("--all", o->all, "Explain every layer");
  cmd->add_option("--boundary", o->boundary,
                  "With a pipeline --strategy: why stage K begins where it does (the step with it there and one "
                  "block either way; docs/pipeline.md)");
  cmd->add_option("--strategy,-s", o->strategy, "Explain this strategy (pase-strategy JSON) instead of the optimum");
  cmd->add_option("--top", o->top, "Alternatives to show (default 5)");
  cmd->add_flag("--json", o->json, "Print the explanation as JSON (pase-explain)");
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/false);
  cmd->get_option("--layer")->excludes(cmd->get_option("--all"));
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->model_given = model_options_given(*cmd);
    return run_explain(*o);
  };
}

}  // namespace pase
