#pragma once
// The per-layer table of `solve` and `evaluate` as a person reads it
// (README.md, `pase solve`): configurations by their letters
// ("b8·h2"), costs in units ("4.37 TFLOP", "437 ms"), identical repeated
// blocks folded into one line after the first, and for language models the
// tokens a second and the model FLOPs utilisation. The JSON keeps the exact
// numbers.
#include <cstdint>
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "costmodel/training_setup.h"
#include "graphs/graph.h"
#include "strategy/config_lookup.h"

namespace pase {

/// An amount of FLOP in three significant digits and a prefix: "4.37 TFLOP", "0 FLOP".
[[nodiscard]] std::string format_flop(double flop);

/// A cost in its unit as a person reads it: FLOP with a prefix, seconds as a
/// duration; a cost within rounding of zero ("-2.1e-15") is "0".
[[nodiscard]] std::string format_cost_text(double cost, const std::string& unit);

/// What the table shows of one strategy.
struct LayerTableInput {
  const Graph* graph = nullptr;
  const CostTables* tables = nullptr;
  const std::vector<int32_t>* choice = nullptr;
  double total = 0;  ///< the step's cost, the shares' denominator
  const TrainingSetup* setup = nullptr;
  bool all_layers = false;  ///< every row, no block folded
};

/// The table: a header, a row per layer (a repeated block's identical
/// followers folded into one line), and the "*" footnote when a layer runs
/// on fewer devices than there are.
[[nodiscard]] std::string layer_table(const LayerTableInput& input);

/// A strategy's whole table as solve and evaluate print it: a header line
/// (graph, devices, rates, cost model, then `label`), layer_table, the
/// total (total_words, then `after_total`) and, for a language model, its
/// throughput line.
[[nodiscard]] std::string strategy_table(const LayerTableInput& input, const std::string& label,
                                         const std::string& after_total);

/// A step's cost as time on the modelled machine (FLOP at its rate; seconds as they are); negative when unknown.
[[nodiscard]] double step_seconds(const CostTables& tables, double cost);

/// The table's total: "total cost 391870785388544 flop (392 TFLOP; layers
/// 392 TFLOP, redistribution 0 FLOP), 39.2 s a step at 10 TFLOP/s": the
/// exact total first (scripts read it), then in units.
[[nodiscard]] std::string total_words(const CostTables& tables, double total, double layer_total);

/// For a language model (a graph whose embedding reads token ids), the
/// tokens a step trains per second and the model FLOPs utilisation: the
/// GEMMs' FLOP of one step without recomputation (forward and two backward
/// products; an embedding is a lookup, not counted; a multiply-add one
/// operation in the pase model's FLOP, two in a machine's), over the step
/// time and every device's peak; e.g.
/// "13.4k tokens/s, MFU 41.2% of 312 TFLOP/s per device". "" for other graphs.
[[nodiscard]] std::string throughput_words(const Graph& graph, const CostTables& tables, const TrainingSetup& setup,
                                           double total);

}  // namespace pase
