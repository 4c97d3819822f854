// The search over layouts on a mesh (plans/mesh_search.h): on machines of 2
// nodes of 2 and of 4 devices, the DP over every layer's (configuration,
// axes) is the optimum of brute force over every node-aware strategy, each
// priced from scratch (layer_on_mesh, realized words over the links crossed),
// and the plan built from the answer realizes its cost exactly.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "costmodel/builtin_machines.h"
#include "costmodel/calibrated_cost_model.h"
#include "costmodel/cost_tables.h"
#include "dp/solve.h"
#include "plans/mesh.h"
#include "plans/mesh_pricing.h"
#include "plans/mesh_search.h"
#include "plans/realized_words.h"
#include "random_objective.h"
#include "solve/solve_request.h"
#include "strategy/baselines.h"
#include "test_support.h"

using namespace pase;

namespace {

// dgx-a100's links and device on a machine of `per_node` devices a node.
CalibratedCostModel machine_of_nodes(int64_t devices, int64_t per_node) {
  MachineProfile profile = load_machine_profile("dgx-a100");
  profile.devices_per_node = per_node;
  return CalibratedCostModel(profile, devices, CalibratedOptions{{Dtype::Bf16, Optimizer::Adam}});
}

// An MLP and a small attention: layers whose splits meet all-reduces, and
// tensors read under other layouts than written.
Graph mlp() { return test::two_layer_mlp(8, 64, 128, 32); }

Graph attention() {
  return test::graph_from_json(R"({"format": "pase-graph", "version": 1, "name": "attention",
   "tensors": {"q": [4, 4, 16, 8], "k": [4, 4, 16, 8]},
   "nodes": [{"name": "logits", "op": "einsum", "inputs": ["q", "k"], "equation": "bhlk,bhmk->bhlm"},
             {"name": "softmax", "op": "softmax", "inputs": ["logits"], "axis": 3},
             {"name": "scale", "op": "elementwise", "inputs": ["softmax"]}]})");
}

// Every layout of every vertex, priced from scratch, and the least total over
// every combination of them.
// With `only`, each vertex's layouts of that configuration alone (a baseline's).
double brute_force(const Graph& graph, const CostTables& configs, const Mesh& mesh, const CostModel& model,
                   const std::vector<int32_t>* only = nullptr) {
  struct Layout {
    const int32_t* config;
    AxisAssignment axes;
    double cost;
  };
  std::vector<std::vector<Layout>> layouts(graph.vertices.size());
  for (size_t v = 0; v < layouts.size(); ++v)
    for (size_t s = 0; s < configs.configs[v].size(); ++s)
      if (!only || static_cast<int32_t>(s) == (*only)[v])
      for (AxisAssignment& axes : axis_assignments(mesh, configs.configs[v][s], configs.configs[v].rank, 100000).list) {
        const double cost = layer_on_mesh(model, configs.models[v], configs.configs[v][s], mesh, axes);
        layouts[v].push_back({configs.configs[v][s], std::move(axes), cost});
      }
  const auto coordinates = mesh_coordinates(mesh);
  std::vector<int32_t> digits(layouts.size(), 0);
  double best = std::numeric_limits<double>::infinity();
  do {
    double total = 0;
    for (size_t v = 0; v < layouts.size(); ++v) total += layouts[v][static_cast<size_t>(digits[v])].cost;
    for (const TensorEdge& edge : graph.edges) {
      const Layout& u = layouts[static_cast<size_t>(edge.src)][static_cast<size_t>(digits[static_cast<size_t>(edge.src)])];
      const Layout& w = layouts[static_cast<size_t>(edge.dst)][static_cast<size_t>(digits[static_cast<size_t>(edge.dst)])];
      const AxisSpec held = tensor_spec(configs.models[static_cast<size_t>(edge.src)].outputs[static_cast<size_t>(edge.src_port)], u.axes);
      const AxisSpec needed = tensor_spec(configs.models[static_cast<size_t>(edge.dst)].inputs[static_cast<size_t>(edge.dst_port)], w.axes);
      const Shape& shape = graph.vertices[static_cast<size_t>(edge.src)].outputs[static_cast<size_t>(edge.src_port)];
      total += edge_on_mesh(model, realized_words(shape, held, needed, mesh, coordinates), held, needed, mesh);
    }
    best = std::min(best, total);
  } while (test::next_assignment(digits, [&](size_t i) { return layouts[i].size(); }));
  return best;
}

}  // namespace

TEST_CASE("mesh search: the DP over layouts is brute force's optimum on 2 nodes of 2 and of 4 devices") {
  for (const Graph& graph : {mlp(), attention()})
    for (const auto& [shape, devices] : {std::pair<const char*, int64_t>{"node=2,gpu=2", 4}, {"gpu=2,node=2", 4},
                                         {"node=2,gpu=4", 8}, {"a=2,b=2,c=2", 8}}) {
      const int64_t per_node = devices / 2;  // two nodes
      const Mesh mesh = parse_mesh(shape, devices, per_node);
      CAPTURE(graph.name);
      const std::string shape_text(shape);  // not the binding itself: see CAPTURE_BOUND
      CAPTURE(shape_text);
      const CalibratedCostModel model = machine_of_nodes(devices, per_node);
      const CostTables configs = build_cost_tables(graph, model, kDefaultMaxConfigs, [&](const VertexModel& m, const int32_t* c) {
        return realizable(mesh, c, static_cast<int>(m.domain.size()));
      });
      const MeshTables searched = price_on_mesh(graph, configs, mesh, model);
      size_t layouts = 1;
      for (const auto& assignments : searched.assignments) layouts *= assignments->size();
      CHECK(layouts >= 400);  // brute force weighs that many strategies
      SolveOptions options;
      options.dp.threads = 1;
      const Solution solution = solve(searched.tables.objective, graph.vertex_names(), options);
      CHECK(solution.cost == doctest::Approx(brute_force(graph, configs, mesh, model)).epsilon(1e-12));
      const PlanResult plan =
          plan_from_layouts(graph, searched.tables, searched.assignments, solution.choice, mesh, model);
      CHECK(plan.plan.realized_total_cost == doctest::Approx(solution.cost).epsilon(1e-12));
      CHECK(plan.plan.assignment_proof == "searched");
    }
}

TEST_CASE("mesh pricing: devices per node along each axis, and which redistributions cross nodes") {
  CHECK(axis_devices_per_node(parse_mesh("dp=16,tp=4", 64, 8)) == std::vector<int64_t>{2, 4});
  CHECK(axis_devices_per_node(parse_mesh("dp=8,tp=8", 64, 8)) == std::vector<int64_t>{1, 8});
  CHECK(axis_devices_per_node(parse_mesh("tp=8,dp=8", 64, 8)) == std::vector<int64_t>{1, 8});
  CHECK(axis_devices_per_node(parse_mesh("a=2,b=2,c=2", 8, 4)) == std::vector<int64_t>{1, 2, 2});
  const Mesh mesh = parse_mesh("node=2,gpu=4", 8, 4);
  CHECK(node_splits(mesh, {{0, 1}, {}}) == std::vector<int32_t>{4, 1});
  CHECK(node_splits(mesh, {{1}, {0}}) == std::vector<int32_t>{4, 1});
  // Rows on both axes, read with rows on gpu only: the node axis's pieces move across nodes.
  CHECK(crosses_nodes({{0, 1}, {}}, {{1}, {}}, mesh));
  // Rows on gpu, read with columns on gpu: moves inside each node.
  CHECK_FALSE(crosses_nodes({{1}, {}}, {{}, {1}}, mesh));
  // Replicated, read split on node: every device holds what it needs.
  CHECK_FALSE(crosses_nodes({{}, {}}, {{0}, {}}, mesh));
}

TEST_CASE("mesh search: a head split across nodes pays the network, inside a node NVLink") {
  // The issue's case: dp=4,tp=16 on nodes of 8 puts a 16-way split over two
  // nodes; its all-reduce must cost more than the same split's inside one.
  const Graph graph = mlp();
  const CalibratedCostModel model = machine_of_nodes(8, 4);
  const CostTables configs = build_cost_tables(graph, model);
  const Mesh inside = parse_mesh("node=2,gpu=4", 8, 4), across = parse_mesh("gpu=4,node=2", 8, 4);
  // fc1 (bnk) split 4 ways over k (its output all-reduced), on the in-node axis and on the cross-node one.
  const int32_t config[3] = {1, 1, 4};
  const double in_node = layer_on_mesh(model, configs.models[0], config, inside, {{}, {}, {1}});
  const double over_nodes = layer_on_mesh(model, configs.models[0], config, across, {{}, {}, {0}});
  CHECK(in_node == doctest::Approx(model.layer(configs.models[0], config)).epsilon(1e-12));
  // The output all-reduce of 8 x 128 elements over 4 devices, one per node... of the two nodes:
  // with gpu=4 outermost each step of that axis is 2 devices apart, inside a node of 4: 2 per node.
  const double elements = 8.0 * 128;
  auto ring = [&](double latency, double bandwidth) { return 2 * 3 * (latency + elements / 4 * 2 / bandwidth); };
  CHECK(over_nodes - in_node == doctest::Approx(ring(6e-6, std::min(240e9, 2 * 20e9)) - ring(3e-6, 240e9)).epsilon(1e-9));
}

TEST_CASE("layer_terms_on_nodes: the parts explain shows add up to the layer's price over the links") {
  const Graph graph = mlp();
  const CalibratedCostModel model = machine_of_nodes(8, 4);
  const CostTables configs = build_cost_tables(graph, model);
  const int32_t config[3] = {1, 1, 4};
  const int32_t inside[3] = {1, 1, 4}, across[3] = {1, 1, 2};  // the 4 pieces in one node; two per node
  auto sum = [](const CostTerms& terms) {
    double total = 0;
    for (const CostTerm& term : terms) total += term.cost;
    return total;
  };
  auto all_reduce = [](const CostTerms& terms) {
    double total = 0;
    for (const CostTerm& term : terms) total += term.kind == CostTermKind::AllReduce ? term.cost : 0.0;
    return total;
  };
  const CostTerms in_node = model.layer_terms_on_nodes(configs.models[0], config, inside);
  const CostTerms over_nodes = model.layer_terms_on_nodes(configs.models[0], config, across);
  CHECK(sum(in_node) == doctest::Approx(model.layer_on_nodes(configs.models[0], config, inside)).epsilon(1e-12));
  CHECK(sum(over_nodes) == doctest::Approx(model.layer_on_nodes(configs.models[0], config, across)).epsilon(1e-12));
  CHECK(sum(in_node) == doctest::Approx(model.layer(configs.models[0], config)).epsilon(1e-12));
  // Only the collectives change: the all-reduce terms carry the whole difference.
  CHECK(all_reduce(over_nodes) > all_reduce(in_node));
  CHECK(all_reduce(over_nodes) - all_reduce(in_node) == doctest::Approx(sum(over_nodes) - sum(in_node)).epsilon(1e-9));
}

TEST_CASE("a baseline on a searched mesh: its configurations, the axes that run them best, as brute force finds") {
  int priced = 0;
  for (const Graph& graph : {mlp(), attention()})
    for (const auto& [shape, devices] : {std::pair<const char*, int64_t>{"node=2,gpu=2", 4}, {"node=2,gpu=4", 8}})
      for (const char* name : {"data-parallel", "owt", "mcmc"}) {
        const int64_t per_node = devices / 2;
        const Mesh mesh = parse_mesh(shape, devices, per_node);
        CAPTURE(graph.name);
        const std::string shape_text(shape);  // not the binding itself: see CAPTURE_BOUND
        CAPTURE(shape_text);
        CAPTURE(std::string(name));
        const CalibratedCostModel model = machine_of_nodes(devices, per_node);
        const CostTables configs = build_cost_tables(graph, model, kDefaultMaxConfigs, [&](const VertexModel& m, const int32_t* c) {
          return realizable(mesh, c, static_cast<int>(m.domain.size()));
        });
        const BaselineResult chosen = run_baseline(name, graph, configs, McmcOptions{});
        if (!chosen.applicable) continue;  // owt on a graph without its layers
        ++priced;
        SolveRequest request;
        request.source = StrategySource::Baseline;
        request.baseline = name;
        request.mesh = mesh;
        request.search_layouts = true;
        const SolveOutcome out = solve_request(graph, model, request);
        CHECK(out.solution.cost == doctest::Approx(brute_force(graph, configs, mesh, model, &chosen.choice)).epsilon(1e-12));
        for (size_t v = 0; v < graph.vertices.size(); ++v) {  // the baseline's configurations, unchanged
          const ConfigSet& expanded = out.tables.configs[v];
          const int32_t* config = expanded[static_cast<size_t>(out.solution.choice[v])];
          CHECK(std::equal(config, config + expanded.rank, configs.configs[v][static_cast<size_t>(chosen.choice[v])]));
        }
        REQUIRE(out.placed);
        CHECK(out.placed->plan.realized_total_cost == doctest::Approx(out.solution.cost).epsilon(1e-12));
      }
  CHECK(priced >= 8);
}

// realizable on a mesh of prime axes answers by divisibility (the splits'
// product divides the devices); here against the assignment search itself,
// over every configuration of three dimensions of splits up to 12.
TEST_CASE("realizable: on prime meshes the divisibility test equals the search for an assignment") {
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{{2, 2, 2}, {3, 2, 2, 2}, {2, 2, 2, 2, 2}, {5, 3, 2}}) {
    Mesh mesh;
    mesh.shape = shape;
    for (size_t i = 0; i < shape.size(); ++i) mesh.axes.push_back("x" + std::to_string(i));
    size_t realized = 0;
    for (int32_t a = 1; a <= 12; ++a)
      for (int32_t b = 1; b <= 12; ++b)
        for (int32_t c = 1; c <= 12; ++c) {
          const int32_t config[] = {a, b, c};
          CAPTURE(a);
          CAPTURE(b);
          CAPTURE(c);
          const bool searched = !axis_assignments(mesh, config, 3, 1).list.empty();
          CHECK(realizable(mesh, config, 3) == searched);
          realized += searched;
        }
    CHECK(realized > 10);
  }
  // A mesh whose axes are not prime still searches: 4 x 2 holds a split of 4 and 2, not 8 and 1 on one axis of 4.
  Mesh composite;
  composite.shape = {4, 2};
  composite.axes = {"a", "b"};
  const int32_t fits[] = {4, 2}, two_twos[] = {2, 2};
  CHECK(realizable(composite, fits, 2));
  CHECK(!realizable(composite, two_twos, 2));  // 8 devices, but no axis of 2 twice
}
