#pragma once
// Which tensors carry data. Exports with export_params=False list weights as
// graph inputs without initializers, so a graph input counts as data only
// when some use of it is not a parameter slot (docs/onnx.md, "Inputs").
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

namespace pase {

/// Graph inputs that carry data: not initializers and used in at least one data slot.
[[nodiscard]] std::set<std::string> find_data_inputs(const onnx::GraphProto& graph);

/// Tensors computed from a data input (outputs of Shape and Size never are).
[[nodiscard]] std::set<std::string> find_activations(const onnx::GraphProto& graph, const std::set<std::string>& data_inputs);

}  // namespace pase
