#pragma once
// Maps an inferred ONNX graph onto the pase op vocabulary (docs/onnx.md).
#include <set>
#include <string>

#include <onnx/onnx_pb.h>

#include "onnximport/fold_constants.h"
#include "onnximport/import_onnx.h"

namespace pase {

/// Builds the pase-graph; InputError "SOURCE: node 'X': ..." on unknown shapes and (unless lenient) unsupported ops.
[[nodiscard]] OnnxImport lower_graph(const onnx::GraphProto& graph, const TensorFacts& facts,
                                     const std::set<std::string>& data_inputs, const OnnxImportOptions& options,
                                     const std::string& source, int64_t opset);

}  // namespace pase
