// Recurrent layers: LSTM and GRU as the lstm op, their weights traced back
// to the exporter's parameters.
#include "onnximport/lowerings/lowerings.h"

#include "onnximport/onnx_model.h"

namespace pase {

// ONNX LSTM and GRU (one node is one layer): the `lstm` op with its gate
// count (4, 3), input size and directions. Time-major X [s, b, I]
// (layout 0) reaches pase's (b, s, I) through a transpose NAME/in, and Y
// [s, D, b, U] comes back through NAME/out and NAME/y; batch-major X
// [b, s, I] (layout 1) is read as it is and Y [b, s, D, U] is a reshape
// NAME/y. Y_h and Y_c ([D, b, U], batch-major [b, D, U]) are the lstm
// output's last step (NAME/h, NAME/c, each from a slice NAME/h/last): the
// backward direction's Y_h is really its first step and Y_c the cell
// state, which the lstm vertex does not output; both have that slice's
// shape and split, and cost the same data movement. A reverse layer costs
// what a forward one does.
void Lowerer::lower_rnn(const onnx::NodeProto& node, const std::vector<int>& slots) {
  const int64_t gates = node.op_type() == "LSTM" ? 4 : 3;
  if (slots != std::vector<int>{0}) return unsupported(node, "a weight or initial state computed from the data");
  const std::string direction = string_attribute(node, "direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    return unsupported(node, "direction '" + direction + "'");
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = int_attribute(node, "layout", 0);
  if (layout != 0 && layout != 1) return unsupported(node, "layout " + std::to_string(layout));
  const bool batch_major = layout == 1;
  const Shape& x = shape_of(node, node.input(0));
  const int64_t hidden = int_attribute(node, "hidden_size", 0);
  if (x.size() != 3) return unsupported(node, "an input of rank " + std::to_string(x.size()) + ", not 3");
  // Bounded so that D·gates·hidden and the like stay far from 2^63.
  if (hidden < 1 || hidden > (int64_t{1} << 40)) return unsupported(node, "hidden_size " + std::to_string(hidden));
  bool used = false;
  for (int k = 0; k < node.output_size() && k < 3; ++k) used = used || is_used(node.output(k));
  if (!used) return;
  const int64_t batch = batch_major ? x[0] : x[1], steps = batch_major ? x[1] : x[0], features = x[2];
  const int64_t out_features = directions * hidden;
  std::string input = ref_of(node, node.input(0)).ref;
  if (!batch_major) {
    NodeV1& in = push_helper(node.name() + "/in", "transpose", input, {batch, steps, features});
    in.perm = std::vector<int64_t>{1, 0, 2};
    input = in.name;
  }
  NodeV1 n;
  n.name = claim_name(node);
  n.op = "lstm";
  n.inputs = {input};
  n.units = hidden;
  n.layers = 1;
  if (gates != 4) n.gates = gates;
  if (features != hidden) n.input_size = features;
  if (directions != 1) n.directions = directions;
  name_rnn_weights(node, n, gates * hidden, directions, hidden, features);
  n.outputs = std::vector<Shape>{{batch, steps, out_features}};
  const std::string rnn = n.name;
  result_.graph.nodes.push_back(std::move(n));
  if (is_used(node.output(0))) {
    const Shape& y = shape_of(node, node.output(0));
    if (!batch_major && directions == 2) {
      // (b, s, 2·U) -> (b, s, 2, U) -> ONNX's (s, 2, b, U).
      NodeV1& out = push_helper(rnn + "/out", "reshape", rnn, {batch, steps, 2, hidden});
      out.shape = Shape{batch, steps, 2, hidden};
      std::string out_name = out.name;
      NodeV1& shaped = push_helper(rnn + "/y", "transpose", out_name, y);
      shaped.perm = std::vector<int64_t>{1, 2, 0, 3};
    } else {
      std::string from = rnn;
      if (!batch_major) {
        NodeV1& out = push_helper(rnn + "/out", "transpose", rnn, {steps, batch, hidden});
        out.perm = std::vector<int64_t>{1, 0, 2};
        from = out.name;
      }
      NodeV1& shaped = push_helper(rnn + "/y", "reshape", from, y);
      shaped.shape = y;
    }
    refs_[node.output(0)] = Ref{result_.graph.nodes.back().name, last_node(), {}};
  }
  for (int k = 1; k < node.output_size() && k < 3; ++k) {
    if (!is_used(node.output(k))) continue;
    const std::string state = rnn + (k == 1 ? "/h" : "/c");
    const Shape& target = shape_of(node, node.output(k));
    NodeV1& last = push_helper(state + "/last", "slice", rnn, {batch, 1, out_features});
    last.axis = 1;
    last.shape = Shape{batch, 1, out_features};
    std::string from = last.name;
    if (!batch_major && directions == 2) {
      // (b, 1, 2·U) -> (b, 2, U) -> ONNX's (2, b, U).
      NodeV1& parts = push_helper(state + "/directions", "reshape", from, {batch, 2, hidden});
      parts.shape = Shape{batch, 2, hidden};
      std::string parts_name = parts.name;
      NodeV1& shaped = push_helper(state, "transpose", parts_name, target);
      shaped.perm = std::vector<int64_t>{1, 0, 2};
    } else {
      NodeV1& shaped = push_helper(state, "reshape", from, target);
      shaped.shape = target;
    }
    refs_[node.output(k)] = Ref{result_.graph.nodes.back().name, last_node(), {}};
  }
}

void Lowerer::name_rnn_weights(const onnx::NodeProto& node, NodeV1& n, int64_t gate_units, int64_t directions, int64_t hidden,
                               int64_t features) {
  auto slot = [&](int k) { return k < node.input_size() ? node.input(k) : std::string(); };
  auto shaped = [&](const std::string& t, const Shape& shape) {
    const Shape* s = facts_.shape(t);
    return s != nullptr && *s == shape;
  };
  const std::string w = slot(1), r = slot(2), b = slot(3);
  std::optional<std::string> w_name = parameter_name(w), r_name = parameter_name(r);
  if (w_name && r_name) {
    if (!shaped(w, {directions, gate_units, features}) || !shaped(r, {directions, gate_units, hidden})) return;
    std::vector<std::string> names = {*w_name, *r_name};
    if (!b.empty()) {
      std::optional<std::string> b_name = parameter_name(b);
      if (!b_name || !shaped(b, {directions, 2 * gate_units})) return;
      names.push_back(*b_name);
    }
    n.weights = names;
    n.weight_layout = "onnx";
    return;
  }
  std::optional<std::vector<std::string>> ih = sources_of(w), hh = sources_of(r);
  std::optional<std::vector<std::string>> bias = b.empty() ? std::vector<std::string>{} : sources_of(b);
  auto all_shaped = [&](const std::vector<std::string>& names, const Shape& shape) {
    return std::all_of(names.begin(), names.end(), [&](const std::string& t) { return shaped(t, shape); });
  };
  const auto d = static_cast<size_t>(directions);
  if (!ih || !hh || !bias || ih->size() != d || hh->size() != d || (!bias->empty() && bias->size() != 2 * d) ||
      !all_shaped(*ih, {gate_units, features}) || !all_shaped(*hh, {gate_units, hidden}) ||
      !all_shaped(*bias, {gate_units}))
    return;
  std::vector<std::string> names;
  for (size_t k = 0; k < d; ++k) {
    names.push_back((*ih)[k]);
    names.push_back((*hh)[k]);
    if (!bias->empty()) {
      names.push_back((*bias)[2 * k]);
      names.push_back((*bias)[2 * k + 1]);
    }
  }
  n.weights = names;
  n.weight_layout = "torch";
}

std::optional<std::vector<std::string>> Lowerer::sources_of(const std::string& tensor) {
  if (producers_.empty())
    for (int i = 0; i < graph_.node_size(); ++i)
      for (const std::string& out : graph_.node(i).output()) producers_.emplace(out, i);
  std::vector<std::string> found;
  std::vector<std::string> pending = {tensor};
  std::set<std::string> seen;
  while (!pending.empty()) {
    const std::string t = pending.back();
    pending.pop_back();
    if (!seen.insert(t).second) continue;
    if (is_active(t)) return std::nullopt;
    if (std::optional<std::string> name = parameter_name(t)) {
      if (std::find(found.begin(), found.end(), *name) == found.end()) found.push_back(*name);
      continue;
    }
    auto made = producers_.find(t);
    if (made == producers_.end()) return std::nullopt;
    const onnx::NodeProto* producer = &graph_.node(made->second);
    const std::string& op = producer->op_type();
    if (op == "Concat") {
      for (int k = producer->input_size(); k-- > 0;) pending.push_back(producer->input(k));
    } else if (is_one_of(op, {"Slice", "Unsqueeze", "Squeeze", "Reshape", "Identity", "Cast"})) {
      if (producer->input_size() > 0) pending.push_back(producer->input(0));
    } else {
      return std::nullopt;
    }
  }
  return found;
}

std::vector<LoweringEntry> recurrent_lowerings() {
  return {
      {"LSTM", &Lowerer::lower_rnn},
      {"GRU", &Lowerer::lower_rnn}};
}

}  // namespace pase
