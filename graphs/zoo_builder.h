#pragma once
// Builds zoo graphs node by node: each call appends one node with a unique
// name and returns what it produced, so that a model's code reads like the
// architecture it describes (graphs/zoo.cc, graphs/llm_zoo.cc).
#include <string>
#include <vector>

#include "graphs/graph_file.h"

namespace pase {

/// PyTorch-style parameter name: a node's path with '.' for '/' plus the
/// attribute ("layer1.0/conv1", "weight" -> "layer1.0.conv1.weight").
[[nodiscard]] std::string parameter_name(const std::string& path, const std::string& attribute);

/// Appends nodes to a graph file. The weight a conv2d, fc, embedding or lstm
/// node owns is named NODE.weight (parameter_name).
class ZooBuilder {
 public:
  ZooBuilder(std::string name, int64_t cutoff);

  /// An external data tensor.
  std::string tensor(const std::string& name, Shape shape);
  /// An external tensor that is a trainable weight (listed under "parameters").
  std::string parameter(const std::string& name, Shape shape);
  /// The shape the model's checkpoint holds weight `name` in: its declared
  /// shape with neighbouring dimensions merged (graphs/checkpoint_shapes.h).
  void checkpoint_shape(const std::string& name, Shape shape);

  /// A node that has not been added yet.
  [[nodiscard]] static NodeV1 node(std::string name, std::string op, std::vector<std::string> inputs);
  /// A node that owns one weight, named NODE.weight.
  [[nodiscard]] static NodeV1 owning_node(std::string name, std::string op, std::vector<std::string> inputs);
  /// Appends a node and returns its name.
  std::string add(NodeV1 node);

  std::string conv(const std::string& name, const std::string& x, Shape filter, HeightWidth stride = {1, 1},
                   HeightWidth padding = {0, 0}, int64_t pointwise = 0);
  std::string pool(const std::string& name, const std::string& x, HeightWidth window, HeightWidth stride,
                   HeightWidth padding = {0, 0});
  std::string batchnorm(const std::string& name, const std::string& x);
  /// conv2d (pw 0) followed by batchnorm; returns the batchnorm.
  std::string basic_conv(const std::string& name, const std::string& x, int64_t out_channels, int64_t in_channels,
                         HeightWidth kernel, HeightWidth stride = {1, 1}, HeightWidth padding = {0, 0});
  std::string fc(const std::string& name, const std::string& x, int64_t units, int64_t pointwise = 0);
  std::string einsum(const std::string& name, const std::string& equation, std::vector<std::string> inputs,
                     int64_t pointwise = 0);
  std::string elementwise(const std::string& name, std::vector<std::string> inputs, int64_t pointwise = 0);
  std::string concat(const std::string& name, std::vector<std::string> inputs, int64_t axis);
  std::string reduce_mean(const std::string& name, const std::string& x, std::vector<int64_t> axes);

  /// The graph built so far; the builder is left empty.
  [[nodiscard]] GraphFileV1 finish();

 private:
  GraphFileV1 file_;
};

}  // namespace pase
