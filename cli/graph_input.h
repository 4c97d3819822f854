#pragma once
// Loading the graph a subcommand was given, whatever its format.
#include <string>

#include "graphs/graph.h"

namespace pase {

/// Reads a pase-graph JSON file, or imports an ONNX model (`.onnx`) with default
/// import options; InputError naming the file on any problem.
[[nodiscard]] Graph load_graph_input(const std::string& path);

}  // namespace pase
