#include "onnximport/torch_parameter_names.h"

#include <optional>
#include <set>
#include <vector>

#include <google/protobuf/unknown_field_set.h>

namespace pase {
namespace {

constexpr int kNodeMetadataField = 9;  // NodeProto.metadata_props (ONNX 1.16, IR version 10)

// The node's metadata entries, from the fields the linked library does not know.
std::map<std::string, std::string> node_metadata(const onnx::NodeProto& node) {
  std::map<std::string, std::string> entries;
  const google::protobuf::UnknownFieldSet& unknown = node.unknown_fields();
  for (int k = 0; k < unknown.field_count(); ++k) {
    const google::protobuf::UnknownField& field = unknown.field(k);
    if (field.number() != kNodeMetadataField || field.type() != google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED)
      continue;
    onnx::StringStringEntryProto entry;
    if (entry.ParseFromString(field.length_delimited())) entries[entry.key()] = entry.value();
  }
  return entries;
}

// The quoted strings of a Python list's repr: "['', 'model', 'model.layers.0']".
std::vector<std::string> quoted_strings(const std::string& text) {
  std::vector<std::string> out;
  for (size_t at = text.find('\''); at != std::string::npos; at = text.find('\'', at + 1)) {
    size_t end = text.find('\'', at + 1);
    if (end == std::string::npos) break;
    out.push_back(text.substr(at + 1, end - at - 1));
    at = end;
  }
  return out;
}

// A call the exporter recorded: its FX node's text, and the module it ran
// in with '.' as the FX argument names spell it ('_').
struct RecordedCall {
  std::string fx, module, mangled_module;
};

// The node's call, where its FX node calls `target` inside a module.
std::optional<RecordedCall> recorded_call(const onnx::NodeProto& node, const std::string& target) {
  std::map<std::string, std::string> metadata = node_metadata(node);
  RecordedCall call{metadata["pkg.torch.onnx.fx_node"], "", ""};
  if (call.fx.find(target) == std::string::npos) return std::nullopt;
  std::vector<std::string> scopes = quoted_strings(metadata["pkg.torch.onnx.name_scopes"]);
  if (scopes.size() < 2 || scopes[scopes.size() - 2].empty()) return std::nullopt;
  call.module = call.mangled_module = scopes[scopes.size() - 2];
  for (char& c : call.mangled_module)
    if (c == '.') c = '_';
  return call;
}

// The module a Linear's node ran in, where its metadata says it read that module's weight.
std::optional<std::string> linear_module(const onnx::NodeProto& node) {
  std::optional<RecordedCall> call = recorded_call(node, "aten.linear.default");
  if (!call) return std::nullopt;
  const std::string argument = "%p_" + call->mangled_module + "_weight";
  if (call->fx.find(argument + ")") == std::string::npos && call->fx.find(argument + ",") == std::string::npos)
    return std::nullopt;
  return call->module;
}

// The parameter an indexing node (aten.index.Tensor: GatherND of a mixture
// of experts' weights) read, where its metadata names it: the FX argument
// `%p_<module path with '.' as '_'>_<attribute>` of the module the node ran
// in, as "<module>.<attribute>" ("model.layers.0.mlp.experts.gate_up_proj").
std::optional<std::string> indexed_parameter(const onnx::NodeProto& node) {
  std::optional<RecordedCall> call = recorded_call(node, "aten.index.Tensor");
  if (!call) return std::nullopt;
  const std::string prefix = "(%p_" + call->mangled_module + "_";
  const size_t at = call->fx.find(prefix);
  if (at == std::string::npos) return std::nullopt;
  const size_t start = at + prefix.size(), end = call->fx.find_first_of(",)", start);
  if (end == std::string::npos || end == start) return std::nullopt;
  return call->module + "." + call->fx.substr(start, end - start);
}

}  // namespace

std::map<std::string, ParameterView> folded_linear_weights(const onnx::GraphProto& graph) {
  std::set<std::string> names;
  std::map<std::string, const onnx::TensorProto*> initializers;
  for (const onnx::ValueInfoProto& input : graph.input()) names.insert(input.name());
  for (const onnx::TensorProto& init : graph.initializer()) {
    names.insert(init.name());
    initializers[init.name()] = &init;
  }
  std::map<std::string, ParameterView> out;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "GatherND" && node.input_size() == 2) {
      auto init = initializers.find(node.input(0));
      std::optional<std::string> name = indexed_parameter(node);
      if (init != initializers.end() && name && !names.count(*name)) {
        std::vector<int64_t> identity(static_cast<size_t>(init->second->dims_size()));
        for (size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<int64_t>(d);
        out[node.input(0)] = ParameterView{*name, identity};
      }
      continue;
    }
    if (node.op_type() != "MatMul" || node.input_size() != 2) continue;
    auto init = initializers.find(node.input(1));
    if (init == initializers.end() || init->second->dims_size() != 2) continue;
    std::optional<std::string> module = linear_module(node);
    if (!module || names.count(*module + ".weight")) continue;
    out[node.input(1)] = ParameterView{*module + ".weight", {1, 0}};
  }
  return out;
}

}  // namespace pase
