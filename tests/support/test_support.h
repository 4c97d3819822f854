#pragma once
// Helpers shared by the tests: running the CLI, temporary files, small graphs.
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "graphs/graph.h"

/// doctest's CAPTURE of a structured binding: CAPTURE's lambda cannot capture
/// one before C++20 (clang refuses it), so the value is bound to a reference
/// first, under the same name with `_bound` after it.
#define CAPTURE_BOUND(binding)             \
  const auto& binding##_bound = (binding); \
  CAPTURE(binding##_bound)

namespace pase::test {

struct CommandResult {
  int status = 0;       ///< exit code
  std::string output;   ///< stdout
  std::string error;    ///< stderr
};

/// Runs `pase ARGS` (ARGS is passed to the shell as written).
CommandResult run_pase(const std::string& args);

/// Writes `text` to a fresh file in a temporary directory and returns its path.
std::string write_temp_file(const std::string& name, const std::string& text);

/// The graph `pase models export ARGUMENTS` writes, as a temporary file made
/// once per arguments (std::runtime_error if the export fails).
const std::string& exported_model(const std::string& arguments);

/// Path of a file in the source tree ("data/graphs/alexnet.json").
std::string source_path(const std::string& relative);

/// A small pase-machine profile: 10 TFLOP/s peak, 500 GB/s memory, 8 per node,
/// intra 10 GB/s + 5 us, inter 2 GB/s + 20 us, and a 2x2x2 GEMM grid whose nn
/// table differs at every corner (1..8 TFLOP/s), nt all 2, tn all 4.
extern const char* const kTestMachineProfile;

/// Builds a graph from pase-graph JSON text.
Graph graph_from_json(const std::string& text, const std::string& source = "test.json");

/// Every way to cut positions 0..positions into `parts` non-empty
/// contiguous ranges, each visited as its parts + 1 bounds (0 first,
/// `positions` last): the brute force the pipeline's partitions are checked by.
void each_partition(int positions, int parts, const std::function<void(const std::vector<int>&)>& visit);

/// x -> fc1 -> a -> b -> res = fc1 + b -> fc2: a residual block whose
/// strategies on a few devices are few enough to enumerate.
Graph residual_block();

/// x [batch, features] -> fc1 (units1) -> fc2 (units2) -> loss (softmax_xent):
/// two weight GEMMs whose splits meet all-reduces and redistributions.
Graph two_layer_mlp(int64_t batch, int64_t features, int64_t units1, int64_t units2);

/// One golden number of tests/expected/KIND.json, a file written by
/// scripts/regen_goldens.py from what the built `pase` prints: the cost of a
/// strategy ("pase": the DP optimum, or a baseline's name) for a graph file at
/// a device count on a machine, and, where recorded, every layer's configuration.
struct Golden {
  std::string graph;     ///< the graph's name ("alexnet")
  std::string file;      ///< relative to the source tree ("data/graphs/alexnet.json")
  int64_t batch = 0;     ///< dim 0 of the graph's first input, for the record
  int64_t devices = 0;
  std::string strategy;  ///< "pase", "data-parallel", "owt", ...
  std::string cost_model;
  double flops_tflops = 0.0, bandwidth_gbps = 0.0;
  double total_cost = 0.0;
  std::vector<std::pair<std::string, std::vector<int32_t>>> layers;  ///< (vertex, config); empty if not recorded
};

/// Every entry of tests/expected/KIND.json: KIND is "zoo_optima" (DP optima)
/// or "baseline_costs" (the baselines' costs). Read once per process.
const std::vector<Golden>& goldens(const std::string& kind);

/// The entry of KIND for GRAPH at DEVICES with STRATEGY, priced by the `pase`
/// model on the default machine (10 TFLOP/s, 16 GB/s: what the tests and the
/// CLI use unless told otherwise). Throws std::runtime_error if there is none.
const Golden& golden(const std::string& kind, const std::string& graph, int64_t devices,
                     const std::string& strategy = "pase");

/// The DP optimum of a zoo graph on the default machine (tests/expected/zoo_optima.json).
double zoo_optimum(const std::string& graph, int64_t devices);

/// A baseline's cost on a zoo graph on the default machine (tests/expected/baseline_costs.json).
double baseline_cost(const std::string& strategy, const std::string& graph, int64_t devices);

/// A cost as the CLI prints a whole number of FLOP ("97098296512").
std::string flop_text(double cost);

/// Rounds of a randomized test: all of them in the Release build, a quarter
/// (at least one) under the sanitizers, where each runs some ten times slower
/// and finds memory errors, not new numbers.
constexpr bool sanitized_build() {
#ifdef PASE_SANITIZED_TESTS
  return true;
#else
  return false;
#endif
}
constexpr int sanitized_rounds(int rounds) {
#ifdef PASE_SANITIZED_TESTS
  return rounds / 4 > 0 ? rounds / 4 : 1;
#else
  return rounds;
#endif
}

}  // namespace pase::test
