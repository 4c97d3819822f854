#pragma once
// Reading a `pase-strategy` v1 file back (hand-edited or written by `solve`)
// and turning it into a configuration index per vertex of a graph. The one
// reader of strategy files (`evaluate`, and `pase-calibrate --validate`). Only
// `format`, `version`, `graph`, `devices`, `total_cost` and each layer's
// `name`, `config` (and `dims`, when present) are read; the rest is
// informational and ignored.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "graphs/graph.h"

namespace pase {

/// One `layers[]` entry as written.
struct StrategyLayerV1 {
  std::string name;
  std::vector<int64_t> config;
  std::optional<std::string> dims;
};

/// A strategy file as plain data.
struct StrategyFileV1 {
  std::string source;  ///< file name for messages
  std::string graph;
  std::optional<int64_t> devices;
  std::optional<double> total_cost;
  std::vector<StrategyLayerV1> layers;
};

/// Parses and field-checks JSON text (split counts in 1..2^30, each layer
/// named once); `source` names the file in errors.
[[nodiscard]] StrategyFileV1 parse_strategy_file(const std::string& text, const std::string& source);

/// Reads and parses a file (InputError naming it if missing or malformed).
[[nodiscard]] StrategyFileV1 read_strategy_file(const std::string& path);

/// Matches layers to vertices by name and each config to a valid configuration.
/// InputError naming the file, the layer and the field on any mismatch.
[[nodiscard]] std::vector<int32_t> strategy_choice(const StrategyFileV1& file, const Graph& graph,
                                                   const CostTables& tables);

}  // namespace pase
