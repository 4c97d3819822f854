#include "onnximport/tensor_roles.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <vector>

#include "onnximport/onnx_model.h"
#include "onnximport/torch_parameter_names.h"

namespace pase {
namespace {

struct Use {
  const onnx::NodeProto* node;
  int slot;
};

// How a use reads a graph input: as data for certain (the input of a Conv, a
// Gather's ids), as data only when nothing else in the node is (an operand of
// an Add or Mul: a mask or a rotary table added to an activation is a buffer),
// or not at all (a parameter slot). Views (Transpose, Slice, Expand, ...) and
// comparisons are followed to their uses: a buffer sliced to the sequence
// length, or compared with 0 to make a mask, is still a buffer.
enum class Slot { kNone, kWeak, kStrong };

class DataSlotFinder {
 public:
  explicit DataSlotFinder(const onnx::GraphProto& graph) {
    for (const onnx::NodeProto& node : graph.node())
      for (int k = 0; k < node.input_size(); ++k) uses_[node.input(k)].push_back({&node, k});
    for (const onnx::ValueInfoProto& info : graph.input())
      if (info.type().has_tensor_type() && info.type().tensor_type().has_shape())
        rank_[info.name()] = info.type().tensor_type().shape().dim_size();
  }

  // Whether some use of `tensor` (following views) reads it as data: strongly,
  // or weakly where no other operand of the reading node is in `active`
  // (nullptr: every weak use counts).
  bool used_as_data(const std::string& tensor, int rank, Slot wanted, const std::set<std::string>* active,
                    int depth = 0) const {
    auto it = uses_.find(tensor);
    if (it == uses_.end() || depth > 8) return false;
    for (const Use& use : it->second) {
      Slot slot = slot_of(use, rank);
      if (slot == Slot::kNone && follows(use)) {
        for (const std::string& out : use.node->output())
          if (used_as_data(out, rank, wanted, active, depth + 1)) return true;
        continue;
      }
      if (slot == Slot::kStrong) return true;
      if (slot == Slot::kWeak && wanted == Slot::kWeak && !other_operand_active(use, active)) return true;
    }
    return false;
  }

  int rank_of(const std::string& name) const {
    auto it = rank_.find(name);
    return it == rank_.end() ? -1 : it->second;
  }

 private:
  // Views and comparisons: what they make is read by the next node.
  static bool follows(const Use& use) {
    const std::string& op = use.node->op_type();
    return is_one_of(op, {"Transpose", "Cast", "Identity", "Flatten", "Expand", "Tile", "Split", "Concat", "Equal", "Less", "Greater",
                          "LessOrEqual", "GreaterOrEqual", "Not", "And", "Or"}) ||
           (use.slot == 0 && is_one_of(op, {"Reshape", "Unsqueeze", "Squeeze", "Slice"}));
  }

  static Slot slot_of(const Use& use, int rank) {
    const std::string& op = use.node->op_type();
    if (follows(use)) return Slot::kNone;
    // Ids are [batch, sequence]; a 1-D index (Swin's relative-position index
    // into its bias table) is a buffer.
    if (op == "Gather") return use.slot == 1 && (rank < 0 || rank >= 2) ? Slot::kStrong : Slot::kNone;
    if (op == "GatherND") return use.slot == 1 ? Slot::kStrong : Slot::kNone;  // ids into a table of experts
    if (op == "MatMul") return use.slot == 0 ? Slot::kStrong : rank != 2 ? Slot::kWeak : Slot::kNone;
    if (op == "Where") return use.slot == 0 ? Slot::kNone : rank < 0 || rank >= 2 ? Slot::kWeak : Slot::kNone;
    if (is_one_of(op, {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean"}))
      return rank < 0 || rank >= 2 ? Slot::kWeak : Slot::kNone;
    return use.slot == 0 ? Slot::kStrong : Slot::kNone;
  }

  static bool other_operand_active(const Use& use, const std::set<std::string>* active) {
    if (!active) return false;
    for (int k = 0; k < use.node->input_size(); ++k)
      if (k != use.slot && active->count(use.node->input(k))) return true;
    return false;
  }

  std::map<std::string, std::vector<Use>> uses_;
  std::map<std::string, int> rank_;
};

}  // namespace

std::set<std::string> find_data_inputs(const onnx::GraphProto& graph) {
  std::set<std::string> initializers;
  for (const onnx::TensorProto& init : graph.initializer()) initializers.insert(init.name());
  DataSlotFinder finder(graph);
  std::vector<std::string> candidates;
  for (const onnx::ValueInfoProto& info : graph.input())
    if (!initializers.count(info.name())) candidates.push_back(info.name());
  // Inputs read as data for certain; then those an elementwise op reads
  // beside no activation of theirs (without any certain input: every such).
  std::set<std::string> data;
  for (const std::string& name : candidates)
    if (finder.used_as_data(name, finder.rank_of(name), Slot::kStrong, nullptr)) data.insert(name);
  std::set<std::string> active = find_activations(graph, data);
  const std::set<std::string>* beside = data.empty() ? nullptr : &active;
  for (const std::string& name : candidates)
    if (!data.count(name) && finder.used_as_data(name, finder.rank_of(name), Slot::kWeak, beside)) data.insert(name);
  return data;
}

bool ParameterView::as_held() const {
  for (size_t d = 0; d < perm.size(); ++d)
    if (perm[d] != static_cast<int64_t>(d)) return false;
  return true;
}

std::map<std::string, ParameterView> find_parameters(const onnx::GraphProto& graph, const std::set<std::string>& data_inputs) {
  auto is_float = [](int32_t type) {
    return type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE || type == onnx::TensorProto::FLOAT16 ||
           type == onnx::TensorProto::BFLOAT16;
  };
  std::map<std::string, int64_t> rank;  // candidates: rank >= 1, floating point
  for (const onnx::ValueInfoProto& info : graph.input()) {
    const onnx::TypeProto& type = info.type();
    if (data_inputs.count(info.name()) || !type.has_tensor_type() || !type.tensor_type().has_shape() ||
        !is_float(type.tensor_type().elem_type()))
      continue;
    int64_t r = type.tensor_type().shape().dim_size();
    if (r >= 1) rank[info.name()] = r;
  }
  for (const onnx::TensorProto& init : graph.initializer())
    if (!data_inputs.count(init.name()) && is_float(init.data_type()) && init.dims_size() >= 1)
      rank[init.name()] = init.dims_size();
  for (const onnx::NodeProto& node : graph.node())
    if (node.op_type() == "BatchNormalization")
      for (int k = 3; k < node.input_size() && k < 5; ++k) rank.erase(node.input(k));

  std::map<std::string, ParameterView> views;
  for (const auto& [name, r] : rank) {
    std::vector<int64_t> identity(static_cast<size_t>(r));
    std::iota(identity.begin(), identity.end(), int64_t{0});
    views[name] = {name, identity};
  }
  for (auto& [tensor, view] : folded_linear_weights(graph))
    if (views.count(tensor)) views[tensor] = view;
  // ONNX lists nodes in topological order, so one pass follows chains of views.
  for (const onnx::NodeProto& node : graph.node()) {
    const std::string& op = node.op_type();
    if (node.input_size() < 1 || node.output_size() < 1 || !(op == "Transpose" || op == "Cast" || op == "Identity")) continue;
    auto in = views.find(node.input(0));
    if (in == views.end()) continue;
    ParameterView view = in->second;
    if (op == "Transpose") {
      const size_t r = view.perm.size();
      std::vector<int64_t> perm = ints_attribute(node, "perm").value_or(std::vector<int64_t>{});
      if (perm.empty())
        for (size_t d = r; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
      if (perm.size() != r) continue;
      std::vector<int64_t> composed;
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(r)) break;
        composed.push_back(in->second.perm[static_cast<size_t>(p)]);
      }
      if (composed.size() != r) continue;
      view.perm = composed;
    }
    views[node.output(0)] = view;
  }
  return views;
}

std::set<std::string> find_activations(const onnx::GraphProto& graph, const std::set<std::string>& data_inputs) {
  std::set<std::string> active = data_inputs;
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() == "Shape" || node.op_type() == "Size") continue;
    bool any = false;
    // CastLike's input 1 gives only the type to cast to (today's exporter casts
    // a constant zero bias like the data input).
    const int read = node.op_type() == "CastLike" ? std::min(node.input_size(), 1) : node.input_size();
    for (int k = 0; k < read; ++k) any = any || (!node.input(k).empty() && active.count(node.input(k)));
    if (any)
      for (const std::string& out : node.output())
        if (!out.empty()) active.insert(out);
  }
  return active;
}

}  // namespace pase
