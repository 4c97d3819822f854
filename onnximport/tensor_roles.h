#pragma once
// Which tensors carry data. Exports with export_params=False list weights as
// graph inputs without initializers, so a graph input counts as data only
// when some use of it is not a parameter slot (docs/onnx.md, "Inputs").
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace pase {

/// Graph inputs that carry data: not initializers and used in at least one data slot.
[[nodiscard]] std::set<std::string> find_data_inputs(const onnx::GraphProto& graph);

/// A trainable parameter of the model, or a view of one through Transpose,
/// Cast or Identity: view dimension i is the parameter's dimension perm[i].
struct ParameterView {
  std::string name;           ///< the parameter's name in the model ("features.0.weight")
  std::vector<int64_t> perm;  ///< as many entries as the parameter has dimensions
  [[nodiscard]] bool as_held() const;  ///< perm is the identity: the view is the parameter as the model holds it
};

/// The trainable parameters and their views, by tensor name. A parameter is a
/// graph input that is not data, or an initializer, of a floating-point type
/// and rank >= 1, that is not a BatchNormalization running statistic (inputs
/// 3 and 4: buffers, neither data nor weights). Call before constant folding,
/// which may replace views of small initializers by new initializers.
[[nodiscard]] std::map<std::string, ParameterView> find_parameters(const onnx::GraphProto& graph,
                                                                   const std::set<std::string>& data_inputs);

/// Tensors computed from a data input (outputs of Shape and Size never are).
[[nodiscard]] std::set<std::string> find_activations(const onnx::GraphProto& graph, const std::set<std::string>& data_inputs);

}  // namespace pase
