#include "onnximport/tensor_roles.h"

#include <map>
#include <vector>

#include "onnximport/onnx_model.h"

namespace pase {
namespace {

struct Use {
  const onnx::NodeProto* node;
  int slot;
};

bool is_one_of(const std::string& op, std::initializer_list<const char*> ops) {
  for (const char* candidate : ops)
    if (op == candidate) return true;
  return false;
}

class DataSlotFinder {
 public:
  explicit DataSlotFinder(const onnx::GraphProto& graph) {
    for (const onnx::NodeProto& node : graph.node())
      for (int k = 0; k < node.input_size(); ++k) uses_[node.input(k)].push_back({&node, k});
    for (const onnx::ValueInfoProto& info : graph.input())
      if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
        rank_[info.name()] = info.type().tensor_type().shape().dim_size();
  }

  // True when some use of `tensor` (following layout-only ops) reads it as data.
  bool used_as_data(const std::string& tensor, int rank, int depth = 0) const {
    auto it = uses_.find(tensor);
    if (it == uses_.end() || depth > 8) return false;
    for (const Use& use : it->second)
      if (is_data_slot(use, rank, depth)) return true;
    return false;
  }

  int rank_of(const std::string& name) const {
    auto it = rank_.find(name);
    return it == rank_.end() ? -1 : it->second;
  }

 private:
  bool is_data_slot(const Use& use, int rank, int depth) const {
    const std::string& op = use.node->op_type();
    // Layout-only ops: a weight may be transposed or cast before use.
    if (is_one_of(op, {"Transpose", "Cast", "Identity", "Flatten", "Expand"}) ||
        (use.slot == 0 && is_one_of(op, {"Reshape", "Unsqueeze", "Squeeze"}))) {
      for (const std::string& out : use.node->output())
        if (used_as_data(out, rank, depth + 1)) return true;
      return false;
    }
    if (op == "Gather") return use.slot == 1;
    if (op == "MatMul") return use.slot == 0 || rank != 2;
    if (is_one_of(op, {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "Where", "Equal", "Concat"}))
      return rank < 0 || rank >= 2;
    return use.slot == 0;
  }

  std::map<std::string, std::vector<Use>> uses_;
  std::map<std::string, int> rank_;
};

}  // namespace

std::set<std::string> find_data_inputs(const onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  DataSlotFinder finder(graph);
  std::set<std::string> data;
  for (const onnx::ValueInfoProto& info : graph.input())
    if (!initializers.count(info.name()) && finder.used_as_data(info.name(), finder.rank_of(info.name())))
      data.insert(info.name());
  return data;
}

std::set<std::string> find_activations(const onnx::GraphProto& graph, const std::set<std::string>& data_inputs) {
  std::set<std::string> active = data_inputs;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "Shape" || node.op_type() == "Size") continue;
    bool any = false;
    for (const std::string& in : node.input()) any = any || (!in.empty() && active.count(in));
    if (any)
      for (const std::string& out : node.output())
        if (!out.empty()) active.insert(out);
  }
  return active;
}

}  // namespace pase
