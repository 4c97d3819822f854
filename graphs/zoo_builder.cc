#include "graphs/zoo_builder.h"

namespace pase {

std::string parameter_name(const std::string& path, const std::string& attribute) {
  std::string name = path;
  for (char& c : name)
    if (c == '/') c = '.';
  return name + "." + attribute;
}

ZooBuilder::ZooBuilder(std::string name, int64_t cutoff) {
  file_.name = std::move(name);
  file_.cutoff = cutoff;
}

std::string ZooBuilder::tensor(const std::string& name, Shape shape) {
  file_.tensors.emplace_back(name, std::move(shape));
  return name;
}

std::string ZooBuilder::parameter(const std::string& name, Shape shape) {
  file_.parameters.push_back(name);
  return tensor(name, std::move(shape));
}

void ZooBuilder::checkpoint_shape(const std::string& name, Shape shape) {
  file_.checkpoint_shapes.emplace_back(name, std::move(shape));
}

NodeV1 ZooBuilder::node(std::string name, std::string op, std::vector<std::string> inputs) {
  NodeV1 n;
  n.name = std::move(name);
  n.op = std::move(op);
  n.inputs = std::move(inputs);
  return n;
}

NodeV1 ZooBuilder::owning_node(std::string name, std::string op, std::vector<std::string> inputs) {
  NodeV1 n = node(std::move(name), std::move(op), std::move(inputs));
  n.weights = std::vector<std::string>{parameter_name(n.name, "weight")};
  return n;
}

std::string ZooBuilder::add(NodeV1 node) {
  std::string name = node.name;
  file_.nodes.push_back(std::move(node));
  return name;
}

std::string ZooBuilder::conv(const std::string& name, const std::string& x, Shape filter, HeightWidth stride,
                             HeightWidth padding, int64_t pointwise) {
  NodeV1 n = owning_node(name, "conv2d", {x});
  n.filter = std::move(filter);
  if (stride != HeightWidth{1, 1}) n.stride = stride;
  if (padding != HeightWidth{0, 0}) n.padding = padding;
  if (pointwise) n.pointwise = pointwise;
  return add(std::move(n));
}

std::string ZooBuilder::pool(const std::string& name, const std::string& x, HeightWidth window, HeightWidth stride,
                             HeightWidth padding) {
  NodeV1 n = node(name, "pool2d", {x});
  n.window = window;
  if (stride != HeightWidth{1, 1}) n.stride = stride;
  if (padding != HeightWidth{0, 0}) n.padding = padding;
  return add(std::move(n));
}

std::string ZooBuilder::batchnorm(const std::string& name, const std::string& x) {
  return add(node(name, "batchnorm", {x}));
}

std::string ZooBuilder::basic_conv(const std::string& name, const std::string& x, int64_t out_channels,
                                   int64_t in_channels, HeightWidth kernel, HeightWidth stride, HeightWidth padding) {
  std::string c = conv(name + "/conv", x, {out_channels, in_channels, kernel.h, kernel.w}, stride, padding);
  return batchnorm(name + "/bn", c);
}

std::string ZooBuilder::fc(const std::string& name, const std::string& x, int64_t units, int64_t pointwise) {
  NodeV1 n = owning_node(name, "fc", {x});
  n.units = units;
  if (pointwise) n.pointwise = pointwise;
  return add(std::move(n));
}

std::string ZooBuilder::einsum(const std::string& name, const std::string& equation, std::vector<std::string> inputs,
                               int64_t pointwise) {
  NodeV1 n = node(name, "einsum", std::move(inputs));
  n.equation = equation;
  if (pointwise) n.pointwise = pointwise;
  return add(std::move(n));
}

std::string ZooBuilder::elementwise(const std::string& name, std::vector<std::string> inputs, int64_t pointwise) {
  NodeV1 n = node(name, "elementwise", std::move(inputs));
  if (pointwise) n.pointwise = pointwise;
  return add(std::move(n));
}

std::string ZooBuilder::concat(const std::string& name, std::vector<std::string> inputs, int64_t axis) {
  NodeV1 n = node(name, "concat", std::move(inputs));
  n.axis = axis;
  return add(std::move(n));
}

std::string ZooBuilder::reduce_mean(const std::string& name, const std::string& x, std::vector<int64_t> axes) {
  NodeV1 n = node(name, "reduce_mean", {x});
  n.axes = std::move(axes);
  return add(std::move(n));
}

GraphFileV1 ZooBuilder::finish() { return std::move(file_); }

}  // namespace pase
