#pragma once
// Maps an inferred ONNX graph onto the pase op vocabulary (docs/onnx.md).
#include <map>
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

#include "onnximport/fold_constants.h"
#include "onnximport/import_onnx.h"
#include "onnximport/tensor_roles.h"

namespace pase {

/// Builds the pase-graph; InputError "SOURCE: node 'X': ..." on unknown shapes and (unless lenient) unsupported ops.
/// `parameters` (find_parameters) names the weights: conv2d, fc and embedding
/// `weights`, `pointwise_weights` (biases, norm scales) and `parameters`.
[[nodiscard]] OnnxImport lower_graph(const onnx::GraphProto& graph, const TensorFacts& facts,
                                     const std::set<std::string>& data_inputs,
                                     const std::map<std::string, ParameterView>& parameters,
                                     const OnnxImportOptions& options, const std::string& source, int64_t opset);

}  // namespace pase
