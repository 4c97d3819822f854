#pragma once
// Helpers shared by the tests: running the CLI, temporary files, small graphs.
#include <string>

#include "graphs/graph.h"

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

/// Path of a file in the source tree ("data/graphs/alexnet.json").
std::string source_path(const std::string& relative);

/// A small pase-machine profile: 10 TFLOP/s peak, 500 GB/s memory, 8 per node,
/// intra 10 GB/s + 5 us, inter 2 GB/s + 20 us, and a 2x2x2 GEMM grid whose nn
/// table differs at every corner (1..8 TFLOP/s), nt all 2, tn all 4.
extern const char* const kTestMachineProfile;

/// Builds a graph from pase-graph JSON text.
Graph graph_from_json(const std::string& text, const std::string& source = "test.json");

}  // namespace pase::test
