#pragma once
// The batch as a parameter of a graph file (docs/training.md): what batch a
// file was written for, and the same graph at a smaller one, so that a step
// of M micro-batches can be priced one micro-batch at a time.
#include <cstdint>
#include <optional>
#include <string>

#include "graphs/graph_file.h"

namespace pase {

/// The global batch of a graph file: dim 0 of its first data input (an
/// external tensor not under `parameters`, in file order); nullopt when the
/// file has no data input.
[[nodiscard]] std::optional<int64_t> find_graph_batch(const GraphFileV1& file);

/// find_graph_batch, or an InputError naming `source` when there is none.
[[nodiscard]] int64_t graph_batch(const GraphFileV1& file, const std::string& source);

/// The file at batch graph_batch / micro_batches: dim 0 of every data input
/// that has the batch, and of every `shape` (reshape) and `outputs` entry
/// whose dim 0 is the batch or a multiple of it (a flattened batch), divided
/// by micro_batches. OptionError (field "micro_batches") when micro_batches
/// is not a divisor of the batch; the caller builds the graph, which checks
/// that the shapes still agree.
[[nodiscard]] GraphFileV1 micro_batch_graph(const GraphFileV1& file, int64_t micro_batches, const std::string& source);

}  // namespace pase
