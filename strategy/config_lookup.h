#pragma once
// Finding a configuration tuple among a vertex's valid configurations, and
// explaining in words why a tuple is not one of them (for strategy files).
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/configs.h"
#include "graphs/vertex_model.h"

namespace pase {

/// Index of `config` (rank entries) in the lexicographically sorted set, or -1 if absent.
[[nodiscard]] int32_t find_config(const ConfigSet& configs, const int32_t* config);

/// Why `config` is not a valid configuration of the vertex ("" when it is valid).
[[nodiscard]] std::string config_problem(const VertexModel& model, int64_t cutoff, int64_t devices,
                                         const std::vector<int64_t>& config);

/// "(1,2,4)".
[[nodiscard]] std::string format_config(const int32_t* config, int rank);

/// A configuration by the letters of its split dimensions and their counts,
/// "b8·h2" (dims "bhrlke", config (8,2,1,1,1,1)); "-" when nothing is split.
/// The tables a person reads print this; the files keep the tuple.
[[nodiscard]] std::string config_letters(const std::string& dims, const int32_t* config, int rank);
[[nodiscard]] std::string config_letters(const std::string& dims, const std::vector<int32_t>& config);

}  // namespace pase
