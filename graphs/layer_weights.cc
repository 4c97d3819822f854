#include "graphs/layer_weights.h"

#include <algorithm>

namespace pase {

std::string default_weight_name(const std::string& node, size_t index) {
  return node + "/weight" + (index == 0 ? "" : "_" + std::to_string(index));
}

std::string owned_weight_name(const Vertex& vertex, size_t index) {
  return index < vertex.weight_names.size() ? vertex.weight_names[index] : default_weight_name(vertex.name, index);
}

std::vector<LayerWeight> layer_weights(const Vertex& vertex, const VertexModel& model) {
  std::vector<LayerWeight> weights;
  auto add = [&weights](LayerWeight weight) {
    auto same = [&](const LayerWeight& w) { return w.name == weight.name; };
    if (std::none_of(weights.begin(), weights.end(), same)) weights.push_back(std::move(weight));
  };
  for (size_t k = 0; k < model.weights.size(); ++k) {
    const WeightTensor& w = model.weights[k];
    add({owned_weight_name(vertex, k), w.shape, w.split});
  }
  for (size_t j = 0; j < vertex.inputs.size() && j < model.inputs.size(); ++j)
    if (vertex.inputs[j].parameter) add({vertex.inputs[j].ref, vertex.inputs[j].shape, model.inputs[j]});
  if (!vertex.outputs.empty() && !model.outputs.empty()) {
    const Shape& out = vertex.outputs[0];
    const SplitMap& out_map = model.outputs[0];
    for (const PointwiseWeight& w : vertex.pointwise_weights) {
      SplitMap split(w.shape.size());
      for (size_t d = 0; d < w.shape.size(); ++d) {
        size_t axis = static_cast<size_t>(w.axis) + d;
        if (axis < out.size() && axis < out_map.size() && w.shape[d] == out[axis]) split[d] = out_map[axis];
      }
      add({w.name, w.shape, std::move(split)});
    }
  }
  return weights;
}

std::vector<std::string> split_letters(const SplitMap& map, const std::string& letters) {
  std::vector<std::string> dims;
  dims.reserve(map.size());
  for (const std::vector<int>& entry : map) {
    std::string text;
    for (int d : entry) text += d >= 0 && static_cast<size_t>(d) < letters.size() ? letters[d] : '?';
    dims.push_back(std::move(text));
  }
  return dims;
}

}  // namespace pase
