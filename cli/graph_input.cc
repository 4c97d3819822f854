#include "cli/graph_input.h"

namespace pase {

Graph load_graph_input(const std::string& path) { return load_graph(path); }

}  // namespace pase
