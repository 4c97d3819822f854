// PipeDream's planner (stages/): its profile format, its states (the DAG of
// antichains, derived by hand for a diamond), its DP against every partition
// of small chains, and `pase pipedream` from the command line.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "stages/pipedream_planner.h"
#include "test_support.h"

using namespace pase;

namespace {

std::string node_line(const std::string& id, const std::string& what, double forward_ms, double backward_ms,
                      const std::string& activation, double parameters) {
  char line[256];
  std::snprintf(line, sizeof line,
                "%s -- %s -- forward_compute_time=%.3f, backward_compute_time=%.3f, activation_size=%s, "
                "parameter_size=%.3f\n",
                id.c_str(), what.c_str(), forward_ms, backward_ms, activation.c_str(), parameters);
  return line;
}

// An input, then a diamond a -> (b, c) -> d, then an unused output: PipeDream
// sets the input and the unused output aside.
std::string diamond() {
  return node_line("n0", "Input", 5, 0, "100.000", 0) + node_line("a", "Conv", 10, 20, "8.000", 1000) +
         node_line("b", "Conv", 40, 80, "[2.000; 2.000]", 0) + node_line("c", "Relu", 1, 2, "8.000", 0) +
         node_line("d", "Add", 3, 3, "8.000", 500) + node_line("e", "__getitem__(0)", 0, 0, "8.000", 0) +
         "\tn0 -- a\n\ta -- b\n\ta -- c\n\tb -- d\n\tc -- d\n\td -- e\n";
}

std::string parse_error(const std::string& text) {
  try {
    (void)parse_pipedream_profile(text, "g.txt");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

struct Layer {
  double seconds, parameter_bytes, activation_bytes;
};

// A chain of layers as states: cumulative sums, every earlier state a predecessor.
std::vector<PipeDreamState> chain_states(const std::vector<Layer>& layers) {
  std::vector<PipeDreamState> states;
  double seconds = 0, parameters = 0, activations = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    seconds += layers[i].seconds;
    parameters += layers[i].parameter_bytes;
    activations += layers[i].activation_bytes;
    PipeDreamState state;
    state.compute_seconds = seconds;
    state.parameter_bytes = parameters;
    state.activation_bytes = activations;
    state.output_activation_bytes = layers[i].activation_bytes;
    for (size_t p = 0; p < i; ++p) state.predecessors.push_back(static_cast<int>(p));
    states.push_back(state);
  }
  return states;
}

// The least time per stage over every split of the chain into consecutive
// stages and every way to give them exactly `machines` replicas, each stage
// (from, to] on r replicas taking (T + 4(r-1)W/(B r)) / r, and with a
// compression ratio also its transfers in and out. Written from the
// definition, not from the planner.
double brute_force(const std::vector<Layer>& layers, const PipeDreamOptions& options) {
  const int n = static_cast<int>(layers.size());
  const double bandwidth = options.bandwidth_bytes_per_second;
  double best = INFINITY;
  std::function<void(int, int, double)> extend = [&](int first, int machines_left, double worst) {
    if (first == n) {
      if (machines_left == 0) best = std::min(best, worst);
      return;
    }
    for (int last = first; last < n; ++last)
      for (int replicas = 1; replicas <= machines_left; ++replicas) {
        double seconds = 0, parameters = 0;
        for (int l = first; l <= last; ++l) {
          seconds += layers[l].seconds;
          parameters += layers[l].parameter_bytes;
        }
        double time = (seconds + 4.0 * (replicas - 1) * parameters / (bandwidth * replicas)) / replicas;
        if (options.activation_compression && first > 0)
          time = std::max(time, 2.0 * layers[first - 1].activation_bytes / (bandwidth * replicas) /
                                    *options.activation_compression);
        if (options.activation_compression && first > 0 && last < n - 1)
          time = std::max(time, 2.0 * layers[last].activation_bytes / (bandwidth * replicas) /
                                    *options.activation_compression);
        extend(last + 1, machines_left - replicas, std::max(worst, time));
      }
  };
  extend(0, options.machines, 0);
  return best;
}

}  // namespace

TEST_CASE("parse_pipedream_profile: PipeDream's graph.txt, and errors that name the line") {
  const ProfileGraph graph = parse_pipedream_profile(diamond(), "g.txt");
  REQUIRE(graph.nodes.size() == 6);
  CHECK(graph.nodes[2].id == "b");
  CHECK(graph.nodes[2].activation_bytes == 4.0);  // a list of outputs counts as its sum
  CHECK(graph.nodes[1].backward_ms == 20.0);
  CHECK(graph.edges.size() == 6);
  CHECK(graph.edges[2] == std::pair<int, int>{1, 3});
  const std::string staged = node_line("x", "Linear", 1, 2, "3.000", 4);
  CHECK(parse_pipedream_profile(staged.substr(0, staged.size() - 1) + " -- stage_id=2\n", "g.txt").nodes.size() == 1);

  CHECK(parse_error("x -- Linear -- forward_compute_time=1.0, backward_compute_time=2.0, activation_size=3.0\n") ==
        "g.txt: line 1: expected forward_compute_time, backward_compute_time, activation_size and parameter_size, "
        "got 3 fields");
  CHECK(parse_error(node_line("x", "L", 1, 2, "abc", 4)) ==
        "g.txt: line 1: field 'activation_size': expected a non-negative number, got 'abc'");
  CHECK(parse_error(node_line("x", "L", 1, 2, "3.0", 4) + "\tx -- y\n") ==
        "g.txt: line 2: edge to 'y', which no line before defines");
  CHECK(parse_error(node_line("x", "L", 1, 2, "3.0", 4) + node_line("x", "L", 1, 2, "3.0", 4)) ==
        "g.txt: line 2: node 'x' is defined twice");
  CHECK(parse_error("x -- L\n") ==
        "g.txt: line 1: expected 'ID -- DESCRIPTION -- forward_compute_time=..., ...', got 2 parts separated by ' -- '");
  CHECK(parse_error("\n") == "g.txt: no nodes (a PipeDream profile, graph.txt, was expected)");
}

TEST_CASE("pipedream_states: a diamond's antichains, in the optimizer's order") {
  // Derived by hand from graph.py: from [a], the antichains [b] and [c];
  // each is augmented with a (which still feeds the other branch); from
  // them {b, c} and [d]. Depth first, children in edge order: [a], [c],
  // [b], {b, c}, [d]. PipeDream's optimizer prints the same states.
  const std::vector<PipeDreamState> states = pipedream_states(parse_pipedream_profile(diamond(), "g.txt"), "g.txt");
  REQUIRE(states.size() == 5);
  CHECK(states[0].antichain == std::vector<std::string>{"a"});
  CHECK(states[1].antichain == std::vector<std::string>{"a", "c"});
  CHECK(states[2].antichain == std::vector<std::string>{"a", "b"});
  CHECK(states[3].antichain == std::vector<std::string>{"a", "c", "b"});
  CHECK(states[4].antichain == std::vector<std::string>{"d"});
  CHECK(states[1].compute_seconds == doctest::Approx(0.033));  // a and c, forward and backward; the input set aside
  CHECK(states[1].output_activation_bytes == 16.0);             // a's and c's activations
  CHECK(states[4].compute_seconds == doctest::Approx(0.159));
  CHECK(states[4].parameter_bytes == 1500.0);
  CHECK(states[3].predecessors == std::vector<int>{0, 1, 2});
  CHECK(states[2].predecessors == std::vector<int>{0});

  PipeDreamOptions options;
  options.machines = 2;
  options.bandwidth_bytes_per_second = 1000;
  const PipeDreamPlan plan = plan_pipedream(states, options);
  // The optimizer's answer: split before {a, b}; a and c, then b and d.
  CHECK(plan.time_per_stage == doctest::Approx(0.126));
  REQUIRE(plan.stages.size() == 2);
  CHECK(plan.stages[0].end == 2);
  CHECK(plan.stages[0].compute_seconds == doctest::Approx(0.033));
  CHECK(plan.stages[1].compute_seconds == doctest::Approx(0.126));
}

TEST_CASE("plan_pipedream: replication and stages by hand") {
  // Three layers of 1 s, no weights: on 3 machines one each; on 2 the whole
  // chain replicated twice (1.5 s) beats any two stages (2 s).
  const std::vector<PipeDreamState> free_weights = chain_states({{1, 0, 1}, {1, 0, 1}, {1, 0, 1}});
  PipeDreamOptions options;
  options.machines = 3;
  PipeDreamPlan three = plan_pipedream(free_weights, options);
  CHECK(three.time_per_stage == doctest::Approx(1.0));
  options.machines = 2;
  PipeDreamPlan two = plan_pipedream(free_weights, options);
  CHECK(two.time_per_stage == doctest::Approx(1.5));
  REQUIRE(two.stages.size() == 1);
  CHECK(two.stages[0].replicas == 2);
  // Weights of 1 GB on a 1 GB/s network: replicating costs 4·1·1e9/(1e9·2)
  // = 2 s of synchronisation, so two stages win: max(2, 1) = 2 s.
  const std::vector<PipeDreamState> heavy = chain_states({{1, 1e9, 1}, {1, 0, 1}, {1, 0, 1}});
  PipeDreamPlan split = plan_pipedream(heavy, options);
  CHECK(split.time_per_stage == doctest::Approx(2.0));
  CHECK(split.stages.size() == 2);
}

TEST_CASE("plan_pipedream: the least time over every partition of small chains") {
  std::mt19937 random(7);
  std::uniform_real_distribution<double> seconds(0.001, 0.05), bytes(0, 4e8);
  int checked = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int layers = 2 + trial % 6, machines = 1 + trial % 5;
    std::vector<Layer> chain;
    for (int l = 0; l < layers; ++l) chain.push_back({seconds(random), bytes(random), bytes(random)});
    PipeDreamOptions options;
    options.machines = machines;
    options.bandwidth_bytes_per_second = trial % 3 == 0 ? 1e9 : 2.5e10;
    if (trial % 4 == 1) options.activation_compression = 1.0 + trial % 7;
    CAPTURE(trial);
    const PipeDreamPlan plan = plan_pipedream(chain_states(chain), options);
    CHECK(plan.time_per_stage == doctest::Approx(brute_force(chain, options)).epsilon(1e-12));
    // The stages it reports cover the chain, use every machine, and none is slower.
    int used = 0, next = 0;
    for (const PipeDreamStage& stage : plan.stages) {
      CHECK(stage.start == next);
      next = stage.end;
      used += stage.replicas;
    }
    CHECK(next == layers);
    CHECK(used == machines);
    ++checked;
  }
  CHECK(checked == 300);
}

TEST_CASE("pase pipedream: JSON and text from the command line, and bad input") {
  const std::string profile = test::write_temp_file("graph.txt", diamond());
  test::CommandResult json = test::run_pase("pipedream " + profile + " --machines 2 --bandwidth 0.000001 --json");
  REQUIRE(json.status == 0);
  CHECK(nlohmann::json::parse(json.output) ==
        nlohmann::json::parse(R"({"format": "pase-pipedream", "machines": 2, "time_per_stage": 0.126,
            "single_stage_time": 0.159, "stages": [{"start": 0, "end": 2, "replicas": 1, "compute_seconds": 0.033},
                                                    {"start": 2, "end": 5, "replicas": 1, "compute_seconds": 0.126}]})"));
  test::CommandResult text = test::run_pase("pipedream " + profile + " -n 2 --bandwidth 0.000001");
  CHECK(text.output.find("PipeDream's planner: 5 states on 2 machines at 1e-06 GB/s\n") == 0);
  CHECK(text.output.find("time per stage 0.126000 s; one stage on one machine 0.159000 s: 1.26x the throughput\n") !=
        std::string::npos);
  test::CommandResult no_machines = test::run_pase("pipedream " + profile + " --machines 0");
  CHECK(no_machines.status == 2);
  CHECK(no_machines.error == "error: --machines: expected a positive number of machines, got 0\n");
  const std::string cycle = test::write_temp_file(
      "cycle.txt", node_line("x", "L", 1, 2, "3.0", 4) + node_line("y", "L", 1, 2, "3.0", 4) + "\tx -- y\n\ty -- x\n");
  test::CommandResult cyclic = test::run_pase("pipedream " + cycle + " --machines 2");
  CHECK(cyclic.status == 1);
  CHECK(cyclic.error == "error: " + cycle + ": the profile's graph has a cycle\n");
  const std::string single = test::write_temp_file("single.txt", node_line("x", "Linear", 1, 2, "3.0", 4));
  test::CommandResult lone = test::run_pase("pipedream " + single + " --machines 2");
  CHECK(lone.status == 1);
  CHECK(lone.error == "error: " + single + ": one layer after the inputs (x): there is nothing to partition\n");
  std::string long_chain;
  for (int l = 0; l <= 5000; ++l) long_chain += node_line("l" + std::to_string(l), "Linear", 1, 2, "3.0", 4);
  const std::string too_long = test::write_temp_file("long.txt", long_chain);
  test::CommandResult refused = test::run_pase("pipedream " + too_long + " --machines 2");
  CHECK(refused.status == 3);
  CHECK(refused.error == "error: refused: " + too_long + ": 5001 layers, more than the 5000 states the planner takes\n");
}
