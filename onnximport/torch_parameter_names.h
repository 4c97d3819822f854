#pragma once
// The checkpoint names of weights that today's PyTorch exporter renamed.
// torch.onnx.export(dynamo=True) folds the transpose of a bias-free
// nn.Linear's weight ([out, in]) into a new initializer, "val_93" of shape
// [in, out]; the MatMul that reads it still carries, in its metadata
// (NodeProto field metadata_props, newer than the linked ONNX library, so
// read from the unknown fields), the module it ran in and the FX argument
// it read: `pkg.torch.onnx.name_scopes` ends with the module's path and
// `pkg.torch.onnx.fx_node` names the argument `%p_<path with '.' as '_'>_weight`.
#include <map>
#include <string>

#include <onnx/onnx_pb.h>

#include "onnximport/tensor_roles.h"

namespace pase {

/// Per initializer that is such a folded transpose: the Linear weight it is a
/// view of (the parameter's name and perm {1, 0}). An initializer is taken
/// only where the metadata's module path, mangled as the exporter mangles it,
/// is the argument the node read, and no tensor already has that name. The
/// same holds for a renamed parameter a GatherND indexes (a mixture of
/// experts' weights, `experts.gate_up_proj`), held as the model holds it.
[[nodiscard]] std::map<std::string, ParameterView> folded_linear_weights(const onnx::GraphProto& graph);

}  // namespace pase
