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

/// Builds a graph from pase-graph JSON text.
Graph graph_from_json(const std::string& text, const std::string& source = "test.json");

}  // namespace pase::test
