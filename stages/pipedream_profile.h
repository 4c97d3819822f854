#pragma once
// A profile in the format of PipeDream's profiler (its graph.txt): one line
// per layer, then one tab-indented line per edge.
//
//   node2 -- Conv2d(3, 64, ...) -- forward_compute_time=22.316, backward_compute_time=6.405, activation_size=198246400.000, parameter_size=93184.000
//   	node1 -- node2
//
// Times are milliseconds, sizes bytes; an activation_size may be a list
// ("[12.0; 4.0]", a layer with several outputs), which counts as its sum;
// a trailing " -- stage_id=K" is read and ignored.
#include <string>
#include <vector>

namespace pase {

struct ProfileNode {
  std::string id, description;
  double forward_ms = 0, backward_ms = 0;
  double activation_bytes = 0, parameter_bytes = 0;
};

struct ProfileGraph {
  std::vector<ProfileNode> nodes;         ///< in file order
  std::vector<std::pair<int, int>> edges;  ///< (from, to) node indices, in file order
};

/// Parses a profile's text; `source` names the file in errors, which are
/// InputErrors naming the line ("FILE: line 3: ...").
[[nodiscard]] ProfileGraph parse_pipedream_profile(const std::string& text, const std::string& source);

}  // namespace pase
