#pragma once
// Tied weights (GPT's token table, read by the embedding and by lm_head): a
// framework holds one layout per weight, so where a later layer reads a
// weight in another layout than its first reader, that layer reshards it
// every step, and its gradient back (docs/plans.md, "Tied weights").
#include <cstddef>
#include <string>
#include <vector>

#include "plans/plan.h"

namespace pase {

struct WeightReshard {
  std::string weight;         ///< the parameter's name
  size_t holder = 0;          ///< the layer whose layout the weight is held in: its first reader
  size_t holder_weight = 0;   ///< the weight's index among the holder's weights
  size_t reader = 0;          ///< a later layer that reads it in another layout
  size_t reader_weight = 0;   ///< the weight's index among the reader's weights
  /// The reader's shape is another than the holder's (a transposed read):
  /// no reshard maps one onto the other, and realized_words is 0.
  bool reshaped = false;
  double realized_words = 0;  ///< the most elements a device lacks under the reader's layout
};

/// Every later read of a weight in another layout than its first reader's, in layer order.
[[nodiscard]] std::vector<WeightReshard> weight_reshards(const Plan& plan);

/// The refusal of a reshaped read, naming `source`, both layers and both shapes.
[[nodiscard]] std::string reshaped_weight_message(const Plan& plan, const WeightReshard& reshard,
                                                  const std::string& source);

}  // namespace pase
