#include "costmodel/memory_model.h"

#include <algorithm>
#include <cstdint>
#include <map>

#include "base/error.h"
#include "graphs/layer_weights.h"

namespace pase {
namespace {

constexpr uint64_t kMax = ~uint64_t{0};

bool add_overflows(uint64_t& total, uint64_t term) {
  if (term > kMax - total) return true;
  total += term;
  return false;
}

bool mul_overflows(uint64_t& product, uint64_t factor) {
  if (factor != 0 && product > kMax / factor) return true;
  product *= factor;
  return false;
}

// One tensor of a vertex: its shape, how its dimensions follow the domain, and its bytes per element.
struct Held {
  const Shape* shape;
  const SplitMap* split;
  uint64_t element_bytes;
  bool weight;
};

// A weight's replicas under a configuration: the devices the layer uses
// over the pieces its tile is cut into, i.e. the product of the layer's
// splits over the letters the weight does not follow (ZeRO shards over them).
uint64_t weight_replicas(const int32_t* config, int rank, const std::vector<int64_t>& weight_split) {
  uint64_t devices = 1, pieces = 1;
  for (int d = 0; d < rank; ++d) devices *= static_cast<uint64_t>(config[d]);
  for (int64_t parts : weight_split) pieces *= static_cast<uint64_t>(std::max<int64_t>(parts, 1));
  return std::max<uint64_t>(1, devices / pieces);
}

}  // namespace

uint64_t activation_element_bytes(const TrainingSetup& options) { return dtype_bytes(options.dtype); }

uint64_t parameter_element_bytes(const TrainingSetup& options) { return parameter_bytes(options).total(); }

uint64_t tile_elements(const Shape& shape, const int64_t* split) {
  uint64_t tile = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t parts = std::max<int64_t>(split[i], 1);
    const uint64_t extent = static_cast<uint64_t>(std::max<int64_t>(shape[i], 0));
    if (mul_overflows(tile, (extent + static_cast<uint64_t>(parts) - 1) / static_cast<uint64_t>(parts))) return kMax;
  }
  return tile;
}

MemoryTables build_memory_tables(const Graph& graph, const CostTables& tables, const TrainingSetup& options) {
  MemoryTables memory;
  memory.options = options;
  const uint64_t a = activation_element_bytes(options), S = parameter_element_bytes(options);
  const size_t n = graph.vertices.size();
  memory.offset.assign(n + 1, 0);
  // Vertices that hold alike tensors (shape, split map, element bytes) under
  // the same configuration list (shared storage: priced alike) have the same
  // bytes: their entries are stored once and their offsets point there, so a
  // deep model's repeated blocks add no bytes per block.
  std::map<std::vector<int64_t>, size_t> offset_of_kind;
  std::vector<int64_t> split;
  for (size_t v = 0; v < n; ++v) {
    const Vertex& vertex = graph.vertices[v];
    const VertexModel& model = tables.models[v];
    // What this vertex holds: its weights (parameter inputs among them),
    // its outputs (not a reshape's inner 1-D view) and the data graph inputs
    // it reads, each data tensor once however many ports read it.
    const std::vector<LayerWeight> weights = layer_weights(vertex, model);
    std::vector<Held> held;
    for (const LayerWeight& w : weights) held.push_back({&w.shape, &w.split, S, true});
    // A recomputed layer's outputs are made again during backward, not kept.
    // Nor are attention scores inside a fused kernel.
    if (vertex.kind != OpKind::Ravel && !vertex.recompute && !vertex.fused_scores)
      for (size_t k = 0; k < vertex.outputs.size() && k < model.outputs.size(); ++k)
        held.push_back({&vertex.outputs[k], &model.outputs[k], a, false});
    for (size_t j = 0; j < vertex.inputs.size() && j < model.inputs.size(); ++j) {
      const VertexInput& input = vertex.inputs[j];
      if (input.source.vertex >= 0 || input.parameter) continue;
      auto same = [&](size_t i) { return vertex.inputs[i].source.vertex < 0 && vertex.inputs[i].ref == input.ref; };
      bool seen = false;
      for (size_t i = 0; i < j; ++i) seen = seen || same(i);
      if (!seen) held.push_back({&input.shape, &model.inputs[j], a, false});
    }

    const ConfigSet& configs = tables.configs[v];
    const int zero = zero_stage_of(options, vertex.zero);
    std::vector<int64_t> key = {static_cast<int64_t>(reinterpret_cast<intptr_t>(configs.splits.storage_id())),
                                static_cast<int64_t>(configs.size()), configs.rank, zero};
    for (const Held& h : held) {
      key.insert(key.end(), {static_cast<int64_t>(h.weight), static_cast<int64_t>(h.element_bytes),
                             static_cast<int64_t>(h.shape->size())});
      key.insert(key.end(), h.shape->begin(), h.shape->end());
      key.push_back(static_cast<int64_t>(h.split->size()));
      for (const auto& dims : *h.split) {
        key.push_back(static_cast<int64_t>(dims.size()));
        key.insert(key.end(), dims.begin(), dims.end());
      }
    }
    auto [kind, inserted] = offset_of_kind.try_emplace(std::move(key), memory.weights.size());
    memory.offset[v] = kind->second;
    if (!inserted) continue;
    for (size_t s = 0; s < configs.size(); ++s) {
      uint64_t weight_bytes = 0, activation_bytes = 0;
      for (const Held& h : held) {
        split.resize(h.split->size());
        tensor_split(*h.split, configs[s], split.data());
        uint64_t bytes = tile_elements(*h.shape, split.data());
        bool overflow = bytes == kMax || mul_overflows(bytes, h.element_bytes);
        if (h.weight && zero > 0 && !overflow)
          bytes = weight_state_bytes(options, zero, bytes / h.element_bytes, weight_replicas(configs[s], configs.rank, split));
        if (overflow || add_overflows(h.weight ? weight_bytes : activation_bytes, bytes))
          throw InputError(graph.source + ": vertex '" + vertex.name + "': its bytes per device overflow 64 bits");
      }
      // A pipeline stage holds several micro-batches' activations at once (multiplied in place).
      if (options.activations_in_flight > 1 &&
          mul_overflows(activation_bytes, static_cast<uint64_t>(options.activations_in_flight)))
        throw InputError(graph.source + ": vertex '" + vertex.name + "': its bytes per device overflow 64 bits");
      memory.weights.push_back(weight_bytes);
      memory.activations.push_back(activation_bytes);
    }
  }
  memory.offset[n] = memory.weights.size();
  return memory;
}

PlanMemory plan_memory(const MemoryTables& memory, const std::vector<int32_t>& choice) {
  PlanMemory total;
  for (size_t v = 0; v < memory.vertex_count(); ++v) {
    const size_t at = memory.offset[v] + static_cast<size_t>(choice[v]);
    if (add_overflows(total.weights, memory.weights[at]) || add_overflows(total.activations, memory.activations[at]))
      throw InputError("the strategy's bytes per device overflow 64 bits");
    if (total.weights > kMax - total.activations)
      throw InputError("the strategy's bytes per device overflow 64 bits");
  }
  return total;
}

}  // namespace pase
