// explain_vertex / explain_all (strategy/explain.h) and the cost models'
// layer_terms: a layer's cost against its alternatives, every other layer
// fixed, broken down into the cost model's own parts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "costmodel/costs.h"
#include "costmodel/machine_profile.h"
#include "graphs/llm_zoo.h"
#include "graphs/zoo.h"
#include "strategy/baselines.h"
#include "strategy/config_lookup.h"
#include "strategy/explain.h"
#include "dp/solve.h"
#include "test_support.h"

using namespace pase;

namespace {

double term_sum(const CostTerms& terms) {
  double sum = 0;
  for (const CostTerm& t : terms) sum += t.cost;
  return sum;
}

double term_sum(const ExplainedConfig& c) {
  double sum = 0;
  for (const ExplainTerm& t : c.terms) sum += t.cost;
  return sum;
}

int32_t index_of(const CostTables& tables, int v, std::vector<int32_t> config) {
  int32_t index = find_config(tables.configs[static_cast<size_t>(v)], config.data());
  REQUIRE(index >= 0);
  return index;
}

// The cost of one named term of a configuration (0 when it has none).
double term(const ExplainedConfig& c, const std::string& what) {
  double cost = 0;
  for (const ExplainTerm& t : c.terms)
    if (t.what == what) cost += t.cost;
  return cost;
}

// Every explanation of a strategy against the objective itself: each
// alternative's delta is the change of Objective::evaluate when only that
// vertex switches, and each breakdown adds up to the configuration's cost.
void check_against_objective(const CostTables& tables, const std::vector<int32_t>& choice,
                             const std::vector<Explanation>& explanations) {
  const double total = tables.objective.evaluate(choice);
  for (const Explanation& x : explanations) {
    CAPTURE(x.vertex);
    std::vector<const ExplainedConfig*> all = {&x.chosen};
    for (const ExplainedConfig& c : x.alternatives) all.push_back(&c);
    if (x.data_parallel) all.push_back(&*x.data_parallel);
    for (const ExplainedConfig* c : all) {
      std::vector<int32_t> changed = choice;
      changed[static_cast<size_t>(x.vertex)] = c->index;
      const double correct = tables.objective.evaluate(changed) - total;
      CHECK(std::fabs(c->delta - correct) <= 1e-12 * total + 1e-9 * std::fabs(correct));
      CHECK(c->local_cost == doctest::Approx(c->layer_cost + c->edge_cost).epsilon(1e-12));
      CHECK(term_sum(*c) == doctest::Approx(c->local_cost).epsilon(1e-12));
      for (const ExplainTerm& t : c->terms) CHECK(t.cost >= 0);
    }
  }
}

}  // namespace

TEST_CASE("layer_terms: the parts add up to the layer cost, for both cost models") {
  const MachineProfile profile = parse_machine_profile(test::kTestMachineProfile, "m.json");
  for (const ZooEntry& entry : zoo_entries()) {
    CAPTURE(entry.name);
    Graph graph = build_graph(build_zoo_graph(entry.name, entry.default_batch), entry.name);
    Machine machine;
    machine.devices = 8;
    PaseCostModel pase_model(machine);
    CalibratedCostModel calibrated(profile, 8);
    for (const CostModel* model : {static_cast<const CostModel*>(&pase_model), static_cast<const CostModel*>(&calibrated)}) {
      CAPTURE(model->name());
      CostTables tables = build_cost_tables(graph, *model);
      for (size_t v = 0; v < graph.vertices.size(); ++v) {
        for (size_t s = 0; s < tables.configs[v].size(); ++s) {
          CostTerms terms = model->layer_terms(tables.models[v], tables.configs[v][s]);
          REQUIRE(!terms.empty());
          CHECK(terms[0].kind == CostTermKind::Compute);
          CHECK(term_sum(terms) == doctest::Approx(tables.objective.vertex_cost[v][s]).epsilon(1e-12));
        }
      }
    }
  }
}

TEST_CASE("work_terms: a GEMM's compute and its three all-reduces, each by its formula") {
  LayerWork work;
  work.has_gemm = true;
  work.gemm = {/*batch=*/2, /*m=*/4, /*n=*/8, /*k=*/16, /*cm=*/2, /*cn=*/4, /*ck=*/1, /*pointwise=*/1};
  const double r = 5000;
  CostTerms terms = work_terms(work, r);
  REQUIRE(terms.size() == 3);  // ck = 1: no output all-reduce
  CHECK(terms[0].what == "compute");
  CHECK(terms[0].cost == 2 * (3 * 4 * 8 * 16 + 3 * 1 * 4 * 8));
  CHECK(terms[1].what == "input-gradient all-reduce");
  CHECK(terms[1].cost == r * (2 * 4 * 16 / 4.0) * 2 * 3);  // batch·m·k words over cn = 4
  CHECK(terms[2].what == "weight-gradient all-reduce");
  CHECK(terms[2].cost == r * (2 * 8 * 16 / 2.0) * 2 * 1);  // batch·n·k words over cm = 2
  CHECK(terms[2].words == 2 * 8 * 16);
  CHECK(terms[2].group == 2);
}

// x (8,16) -> fc1 (32 units) -> fc2 (4 units) on 2 devices, cutoff 1; r = 5000.
// Each fc has domain (b, n, k) and four configurations: (1,1,1), (1,1,2),
// (1,2,1), (2,1,1). Every number below is worked out by hand from the cost
// model's formulas (docs/formats.md): G = 3mnk + AR(mn, ck) + AR(mk, cn) +
// AR(nk, cm), AR(w, 2) = r·w, and E = 2r·(need − overlap).
TEST_CASE("explain_vertex: a two-layer graph worked by hand") {
  Graph graph = test::graph_from_json(
      R"({"format": "pase-graph", "version": 1, "cutoff": 1, "tensors": {"x": [8, 16]},
          "nodes": [{"name": "fc1", "op": "fc", "inputs": ["x"], "units": 32},
                    {"name": "fc2", "op": "fc", "inputs": ["fc1"], "units": 4}]})");
  Machine machine;
  machine.devices = 2;
  PaseCostModel model(machine);
  CostTables tables = build_cost_tables(graph, model);
  REQUIRE(tables.configs[0].size() == 4);
  // Data parallelism: both split the batch 2 ways.
  std::vector<int32_t> choice = {index_of(tables, 0, {2, 1, 1}), index_of(tables, 1, {2, 1, 1})};
  CHECK(choice == data_parallel_choice(graph, tables));

  SUBCASE("fc2: data parallelism is its best, the next best splits k") {
    Explanation x = explain_vertex(graph, tables, model, choice, 1, 5);
    CHECK(x.configurations == 4);
    CHECK(x.cheaper == 0);
    CHECK(!x.data_parallel);  // it is the chosen one
    // Chosen (2,1,1): m = 4, n = 4, k = 32; the weight gradient (n·k = 128
    // words) is all-reduced over the batch split; the input arrives split alike.
    CHECK(x.chosen.config == std::vector<int32_t>{2, 1, 1});
    CHECK(term(x.chosen, "compute") == 3 * 4 * 4 * 32);
    CHECK(term(x.chosen, "weight-gradient all-reduce") == 5000.0 * 128);
    CHECK(term(x.chosen, "redistribution of input 'fc1'") == 0);
    CHECK(x.chosen.local_cost == 1536 + 640000);
    REQUIRE(x.alternatives.size() == 3);
    // (1,1,2): m = 8, n = 4, k = 16; the output (m·n = 32) is all-reduced;
    // the input, held as (2,1), is needed as (1,2): need 8·16 = 128, overlap 4·16 = 64.
    const ExplainedConfig& k_split = x.alternatives[0];
    CHECK(k_split.config == std::vector<int32_t>{1, 1, 2});
    CHECK(term(k_split, "compute") == 3 * 8 * 4 * 16);
    CHECK(term(k_split, "output all-reduce") == 5000.0 * 32);
    CHECK(term(k_split, "weight-gradient all-reduce") == 0);
    CHECK(term(k_split, "redistribution of input 'fc1'") == 2 * 5000.0 * 64);
    CHECK(k_split.delta == 160000);
    // (1,1,1): 3·8·4·32 compute, and the input gathered: need 256, overlap 128.
    CHECK(x.alternatives[1].config == std::vector<int32_t>{1, 1, 1});
    CHECK(x.alternatives[1].local_cost == 3072 + 2 * 5000.0 * 128);
    CHECK(x.alternatives[1].delta == 3072 + 1280000 - 641536);
    // (1,2,1): the input gradient (m·k = 256) is all-reduced, the input gathered too.
    CHECK(x.alternatives[2].config == std::vector<int32_t>{1, 2, 1});
    CHECK(term(x.alternatives[2], "input-gradient all-reduce") == 5000.0 * 256);
    CHECK(x.alternatives[2].delta == 1536 + 1280000 + 1280000 - 641536);
    CHECK(x.reason ==
          "Splitting the batch 'b' 2 ways (b2) is cheapest given its neighbours: the next best, splitting 'k' 2 ways "
          "(k2), would save 64 ns of weight-gradient all-reduce at 16 GB/s but add 64 ns of redistribution of input "
          "'fc1' and 16 ns of output all-reduce, 16 ns more a step.");
    check_against_objective(tables, choice, {x});
  }
  SUBCASE("fc1: data parallelism is not its best given fc2, and the sentence says so") {
    Explanation x = explain_vertex(graph, tables, model, choice, 0, 5);
    // Chosen (2,1,1): compute 3·4·32·16, weight gradient 32·16 = 512 words.
    CHECK(x.chosen.local_cost == 6144 + 5000.0 * 512);
    REQUIRE(x.alternatives.size() == 3);
    // (1,2,1): input gradient 8·16 = 128 words; fc2 needs its output, held
    // (1,2), as (2,1): need 4·32 = 128, overlap 4·16 = 64.
    CHECK(x.alternatives[0].config == std::vector<int32_t>{1, 2, 1});
    CHECK(term(x.alternatives[0], "redistribution to 'fc2'") == 2 * 5000.0 * 64);
    CHECK(x.alternatives[0].local_cost == 6144 + 640000 + 640000);
    // (1,1,1): compute 12288 and the output scattered to fc2: need 128, nothing held.
    CHECK(x.alternatives[1].local_cost == 12288 + 2 * 5000.0 * 128);
    // (1,1,2): output all-reduce 256 words plus the same scatter: a tie with the chosen.
    CHECK(x.alternatives[2].local_cost == 6144 + 5000.0 * 256 + 2 * 5000.0 * 128);
    CHECK(x.alternatives[2].delta == 0);
    CHECK(x.cheaper == 2);
    CHECK(x.reason ==
          "Splitting 'n' 2 ways (n2) instead would save 256 ns of weight-gradient all-reduce at 16 GB/s but add 64 "
          "ns of input-gradient all-reduce and 64 ns of redistribution to 'fc2', 128 ns less a step: this strategy is "
          "not the best choice for this layer given its neighbours.");
    check_against_objective(tables, choice, {x});
  }
  SUBCASE("one device: one configuration, nothing to compare") {
    Machine one;
    PaseCostModel single(one);
    CostTables only = build_cost_tables(graph, single);
    Explanation x = explain_vertex(graph, only, single, {0, 0}, 1, 5);
    CHECK(x.configurations == 1);
    CHECK(x.alternatives.empty());
    CHECK(!x.data_parallel);
    CHECK(x.chosen.local_cost == 3 * 8 * 4 * 32);
    CHECK(x.reason == "Keeping it on one device is its only configuration on 1 device: no dimension can be split "
                      "(unsplittable, not a divisor, or below the cutoff).");
  }
  SUBCASE("top limits the alternatives; 0 shows none") {
    CHECK(explain_vertex(graph, tables, model, choice, 1, 1).alternatives.size() == 1);
    CHECK(explain_vertex(graph, tables, model, choice, 1, 0).alternatives.empty());
  }
}

TEST_CASE("explain_vertex: a layer that costs nothing ties with data parallelism") {
  // A transpose of an external tensor: no work, no edges, every configuration costs 0.
  Graph graph = test::graph_from_json(
      R"({"format": "pase-graph", "version": 1, "cutoff": 1, "tensors": {"x": [8, 4]},
          "nodes": [{"name": "t", "op": "transpose", "inputs": ["x"], "perm": [1, 0]}]})");
  Machine machine;
  machine.devices = 2;
  PaseCostModel model(machine);
  CostTables tables = build_cost_tables(graph, model);
  Explanation x = explain_vertex(graph, tables, model, {0}, 0, 5);
  CHECK(x.cheaper == 0);
  REQUIRE(x.alternatives.size() == 2);
  CHECK(x.alternatives[0].delta == 0);
  CHECK(x.reason == "Keeping it on one device ties with data parallelism, splitting the batch 'a' 2 ways (a2) here "
                    "(the solver keeps the first in configuration order).");
}

TEST_CASE("explain_all: the optimum is the best configuration of every layer given its neighbours") {
  for (const char* name : {"alexnet", "transformer", "inception3"}) {
    CAPTURE(name);
    Graph graph = load_graph(test::source_path(std::string("data/graphs/") + name + ".json"));
    Machine machine;
    machine.devices = 8;
    PaseCostModel model(machine);
    CostTables tables = build_cost_tables(graph, model);
    Solution optimum = solve(tables.objective, graph.vertex_names(), SolveOptions{});
    std::vector<Explanation> all = explain_all(graph, tables, model, optimum.choice, 5);
    REQUIRE(all.size() == graph.vertices.size());
    for (const Explanation& x : all) {
      CAPTURE(graph.vertices[static_cast<size_t>(x.vertex)].name);
      CHECK(x.cheaper == 0);
      for (const ExplainedConfig& c : x.alternatives) CHECK(c.delta >= -1e-12 * optimum.cost);
      CHECK(std::is_sorted(x.alternatives.begin(), x.alternatives.end(),
                           [](const ExplainedConfig& a, const ExplainedConfig& b) { return a.local_cost < b.local_cost; }));
      CHECK(x.chosen.delta == 0);
    }
    check_against_objective(tables, optimum.choice, all);
  }
}

TEST_CASE("explain_all: the calibrated model, priced in seconds, explains alike") {
  Graph graph = load_graph(test::source_path("data/graphs/alexnet.json"));
  CalibratedCostModel model(parse_machine_profile(test::kTestMachineProfile, "m.json"), 8);
  CostTables tables = build_cost_tables(graph, model);
  Solution optimum = solve(tables.objective, graph.vertex_names(), SolveOptions{});
  std::vector<Explanation> all = explain_all(graph, tables, model, optimum.choice, 4);
  for (const Explanation& x : all) {
    CAPTURE(x.reason);
    CHECK(x.cheaper == 0);
    CHECK(x.reason.find("GB/s") == std::string::npos);  // links differ by group: no one bandwidth to name
  }
  check_against_objective(tables, optimum.choice, all);
}

TEST_CASE("explain_all: the data-parallel baseline is not locally optimal at alexnet's fc layers") {
  Graph graph = load_graph(test::source_path("data/graphs/alexnet.json"));
  Machine machine;
  machine.devices = 8;
  PaseCostModel model(machine);
  CostTables tables = build_cost_tables(graph, model);
  std::vector<int32_t> choice = data_parallel_choice(graph, tables);
  std::vector<Explanation> all = explain_all(graph, tables, model, choice, 3);
  const Explanation& fc6 = all[static_cast<size_t>(graph.find_vertex("fc6"))];
  CHECK(fc6.cheaper > 0);
  CHECK(fc6.reason.find("this strategy is not the best choice for this layer given its neighbours.") != std::string::npos);
  // A layer explained against a better one: the first alternative is cheaper.
  CHECK(fc6.alternatives.front().delta < 0);
  check_against_objective(tables, choice, all);
}

// Done means `explain` answers for every layer of the zoo: the paper's five
// graphs and the language-model presets, at p = 8 on the default machine.
TEST_CASE("explain_all: every layer of every zoo graph at p = 8") {
  std::vector<std::pair<std::string, GraphFileV1>> zoo;
  for (const ZooEntry& entry : zoo_entries()) zoo.emplace_back(entry.name, build_zoo_graph(entry.name, entry.default_batch));
  for (const LlmPreset& preset : llm_presets()) zoo.emplace_back(preset.name, build_llm_graph(preset.family, preset.shape, preset.name));
  for (const auto& [name, file] : zoo) {
    CAPTURE_BOUND(name);
    Graph graph = build_graph(file, name);
    Machine machine;
    machine.devices = 8;
    PaseCostModel model(machine);
    CostTables tables = build_cost_tables(graph, model);
    Solution optimum = solve(tables.objective, graph.vertex_names(), SolveOptions{});
    std::vector<Explanation> all = explain_all(graph, tables, model, optimum.choice, 5);
    REQUIRE(all.size() == graph.vertices.size());
    for (const Explanation& x : all) {
      CAPTURE(graph.vertices[static_cast<size_t>(x.vertex)].name);
      CHECK(x.cheaper == 0);
      CHECK(x.reason.size() > 20);
      CHECK(x.reason.back() == '.');
      CHECK(x.alternatives.size() == std::min<size_t>(5, x.configurations - 1));
      CHECK(std::fabs(term_sum(x.chosen) - x.chosen.local_cost) <= 1e-12 * optimum.cost);
    }
  }
}

TEST_CASE("config_words and cost_seconds") {
  Graph graph = test::graph_from_json(
      R"({"format": "pase-graph", "version": 1, "cutoff": 1, "tensors": {"x": [8, 16]},
          "nodes": [{"name": "fc1", "op": "fc", "inputs": ["x"], "units": 32}]})");
  Machine machine;
  machine.devices = 8;
  CostTables tables = build_cost_tables(graph, machine);
  const int32_t one[] = {1, 1, 1}, batch[] = {8, 1, 1}, mixed[] = {2, 2, 2}, fewer[] = {2, 1, 2};
  CHECK(config_words(graph, tables, 0, one) == "keeping it on one device");
  CHECK(config_words(graph, tables, 0, batch) == "splitting the batch 'b' 8 ways");
  CHECK(config_words(graph, tables, 0, mixed) == "splitting the batch 'b' 2 ways, 'n' 2 ways and 'k' 2 ways");
  CHECK(config_words(graph, tables, 0, fewer) == "splitting the batch 'b' 2 ways and 'k' 2 ways on 4 of the 8 devices");
  CHECK(cost_seconds(tables, 1e13) == 1.0);  // 10 TFLOP/s
  tables.unit = "seconds";
  CHECK(cost_seconds(tables, 2.5) == 2.5);
}
