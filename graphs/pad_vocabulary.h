#pragma once
// A language model's vocabulary padded as Megatron-LM pads it
// (--make-vocab-size-divisible-by): rounded up to a multiple, so that the
// embedding and the head split as many ways as the rest of the model (GPT-2's
// 50257 is 29 x 1733, 50304 is 2^7 x 393). The padded rows train as the others.
#include <cstdint>
#include <string>
#include <vector>

#include "graphs/graph_file.h"

namespace pase {

/// What pad_vocabulary changed.
struct PaddedVocabulary {
  int64_t from = 0, to = 0;          ///< the vocabulary before and after (equal: nothing to pad)
  std::vector<std::string> layers;   ///< the nodes whose vocabulary axis grew, in file order
};

/// The vocabulary found from the loss, not from extents (a hidden size may
/// equal it): each softmax_xent node's input, through single-input
/// elementwise or softmax nodes, back to an `fc` head whose `units` are the
/// vocabulary; the embedding whose table the head reads (tied), else the one
/// embedding of that vocabulary. Each such node's vocabulary axis (its units
/// or vocab, the last axis of its outputs and pointwise weights) is rounded up
/// to a multiple of `multiple`. OptionError (field "pad_vocab") when `multiple`
/// is below 1 or no head can be found; the caller builds the graph, which
/// checks that the shapes still agree.
[[nodiscard]] PaddedVocabulary pad_vocabulary(GraphFileV1& file, int64_t multiple, const std::string& source);

}  // namespace pase
