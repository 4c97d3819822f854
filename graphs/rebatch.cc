#include "graphs/rebatch.h"

#include <algorithm>

#include "base/error.h"

namespace pase {
namespace {

bool is_parameter(const GraphFileV1& file, const std::string& name) {
  return std::find(file.parameters.begin(), file.parameters.end(), name) != file.parameters.end();
}

// Dim 0 of a shape that carries the batch (the batch itself, or a flattened
// batch times other dimensions), divided by the micro-batch count.
void divide_batch(Shape& shape, int64_t batch, int64_t micro_batches) {
  if (!shape.empty() && shape[0] > 0 && shape[0] % batch == 0) shape[0] /= micro_batches;
}

}  // namespace

std::optional<int64_t> find_graph_batch(const GraphFileV1& file) {
  for (const auto& [name, shape] : file.tensors)
    if (!is_parameter(file, name) && !shape.empty()) return shape[0];
  return std::nullopt;
}

int64_t graph_batch(const GraphFileV1& file, const std::string& source) {
  if (std::optional<int64_t> batch = find_graph_batch(file)) return *batch;
  throw InputError(source + ": no data input (an external tensor not under `parameters`) gives the graph's batch");
}

GraphFileV1 micro_batch_graph(const GraphFileV1& file, int64_t micro_batches, const std::string& source) {
  const int64_t batch = graph_batch(file, source);
  if (micro_batches < 1 || batch % micro_batches != 0)
    throw OptionError({"micro_batches", "micro_batches", "",
                       ": expected a divisor of the graph's batch " + std::to_string(batch) + " (" + source + "), got " +
                           std::to_string(micro_batches)});
  GraphFileV1 out = file;
  if (micro_batches == 1) return out;
  for (auto& [name, shape] : out.tensors)
    if (!is_parameter(out, name) && !shape.empty() && shape[0] == batch) shape[0] /= micro_batches;
  for (NodeV1& node : out.nodes) {
    if (node.shape) divide_batch(*node.shape, batch, micro_batches);
    if (node.outputs)
      for (Shape& shape : *node.outputs) divide_batch(shape, batch, micro_batches);
  }
  return out;
}

}  // namespace pase
