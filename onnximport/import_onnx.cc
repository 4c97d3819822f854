#include "onnximport/import_onnx.h"

#include <algorithm>
#include <cctype>

#include "base/error.h"
#include "graphs/graph.h"
#include "onnximport/fold_constants.h"
#include "onnximport/lower_graph.h"
#include "onnximport/onnx_model.h"
#include "onnximport/tensor_roles.h"

namespace pase {
namespace {

std::string file_stem(const std::string& path) {
  std::string base = path.substr(path.find_last_of('/') + 1);
  std::string stem = base.substr(0, base.rfind('.'));
  return pase_name(stem, "onnx");
}

// Fixes the batch size of the data inputs; every other dimension must
// already be static. Returns the batch size the model was exported with (0:
// dynamic), and the new one.
BatchChange set_input_shapes(onnx::GraphProto& graph, const std::set<std::string>& data_inputs,
                             const OnnxImportOptions& options, const std::string& path) {
  BatchChange change;
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
    if (!data_inputs.count(input.name())) continue;
    if (!input.type().has_tensor_type() || !input.type().tensor_type().has_shape())
      throw InputError(path + ": input '" + input.name() + "': the model gives no shape for it");
    onnx::TensorShapeProto& shape = *input.mutable_type()->mutable_tensor_type()->mutable_shape();
    for (int d = 0; d < shape.dim_size(); ++d) {
      onnx::TensorShapeProto::Dimension& dim = *shape.mutable_dim(d);
      if (d == 0 && options.batch) {
        if (change.from == 0 && dim.has_dim_value()) change.from = dim.dim_value();
        change.to = *options.batch;
        dim.set_dim_value(*options.batch);
        continue;
      }
      if (dim.has_dim_value() && dim.dim_value() > 0) continue;
      std::string what = dim.has_dim_param() ? " ('" + dim.dim_param() + "')" : "";
      std::string where = path + ": input '" + input.name() + "': dimension " + std::to_string(d) + what + " is dynamic; ";
      if (d == 0) throw OptionError({"batch", "the import option 'batch'", where + "set it with ", ""});
      throw InputError(where + "export the model with a static size for it");
    }
  }
  // Shapes the exporter wrote for outputs and intermediates are recomputed, so
  // that a new batch size cannot conflict with them.
  graph.clear_value_info();
  for (onnx::ValueInfoProto& output : *graph.mutable_output())
    if (output.type().has_tensor_type()) output.mutable_type()->mutable_tensor_type()->clear_shape();
  return change;
}

void check_options(const OnnxImportOptions& options) {
  if (options.loss != "softmax_xent" && options.loss != "none")
    throw OptionError({"loss", "import option 'loss'", "", ": unknown loss '" + options.loss + "' (choose softmax_xent or none)"});
  if (options.batch && *options.batch <= 0)
    throw OptionError({"batch", "import option 'batch'", "", ": expected a positive size, got " + std::to_string(*options.batch)});
}

OnnxImport import_model(onnx::ModelProto model, const std::string& path, const OnnxImportOptions& options) {
  onnx::GraphProto& graph = *model.mutable_graph();
  sanitize_node_names(graph);
  std::set<std::string> data_inputs = find_data_inputs(graph);
  if (data_inputs.empty())
    throw InputError(path + ": no data input: every graph input is an initializer or used only as a weight");
  const BatchChange batch = set_input_shapes(graph, data_inputs, options, path);
  std::map<std::string, ParameterView> parameters = find_parameters(graph, data_inputs);
  TensorFacts facts = infer_shapes_and_constants(
      model, path, batch.from > 0 && batch.to > 0 ? std::optional<BatchChange>(batch) : std::nullopt);
  OnnxImport result = lower_graph(model.graph(), facts, data_inputs, parameters, options, path, default_opset(model));
  result.graph.name = file_stem(path);
  if (result.graph.nodes.empty()) throw InputError(path + ": the model has no op that pase models");
  // Validates references and shapes; the claimed outputs catch any mapping slip.
  (void)build_graph(result.graph, path);
  return result;
}

}  // namespace

OnnxImport import_onnx(const std::string& path, const OnnxImportOptions& options) {
  check_options(options);
  return import_model(read_onnx_model(path), path, options);
}

OnnxImport import_onnx_bytes(const std::string& bytes, const std::string& source, const OnnxImportOptions& options) {
  check_options(options);
  return import_model(parse_onnx_model(bytes, source), source, options);
}

}  // namespace pase
