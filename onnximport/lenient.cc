// What --lenient imports as pass-throughs, and what it leaves out: each
// replaced node's share of the model's estimated FLOP, refused above 5%
// unless forced, and the error naming the unsupported nodes otherwise.
#include <cstdio>
#include <map>

#include "onnximport/lowerer.h"
#include "onnximport/onnx_model.h"

namespace pase {

double Lowerer::estimated_flop(const onnx::NodeProto& node) const {
  auto elements = [&](const std::string& t) {
    const Shape* s = facts_.shape(t);
    double n = 1;
    if (s)
      for (int64_t d : *s) n *= static_cast<double>(d);
    return s ? n : 0.0;
  };
  const std::string& op = node.op_type();
  const Shape* in = node.input_size() > 0 ? facts_.shape(node.input(0)) : nullptr;
  const Shape* w = node.input_size() > 1 ? facts_.shape(node.input(1)) : nullptr;
  const double out = node.output_size() > 0 ? elements(node.output(0)) : 0.0;
  if ((op == "MatMul" || op == "Gemm") && in && !in->empty()) {
    const bool trans_a = op == "Gemm" && int_attribute(node, "transA", 0) != 0;
    return 2 * out * static_cast<double>(trans_a ? in->front() : in->back());
  }
  if ((op == "Conv" || op == "ConvTranspose") && w && w->size() >= 2) {
    double taps = 1;
    for (size_t d = 1; d < w->size(); ++d) taps *= static_cast<double>((*w)[d]);
    return 2 * (op == "Conv" ? out : elements(node.input(0))) * taps;
  }
  if ((op == "LSTM" || op == "GRU" || op == "RNN") && in && in->size() == 3) {
    const double gates = op == "LSTM" ? 4 : op == "GRU" ? 3 : 1;
    const double hidden = static_cast<double>(int_attribute(node, "hidden_size", 0));
    const double directions = string_attribute(node, "direction", "forward") == "bidirectional" ? 2 : 1;
    return 2 * directions * static_cast<double>((*in)[0]) * static_cast<double>((*in)[1]) * gates * hidden *
           (static_cast<double>((*in)[2]) + hidden);
  }
  double all = 0;
  for (const std::string& o : node.output()) all += o.empty() ? 0.0 : elements(o);
  return all;
}

void Lowerer::account_replacements() {
  double total = 0;
  for (int i = 0; i < graph_.node_size(); ++i) {
    bool any = false;
    for (const std::string& out : graph_.node(i).output()) any = any || is_active(out);
    if (any) total += estimated_flop(graph_.node(i));
  }
  double replaced = 0;
  for (const Unsupported& u : unsupported_) {
    const double flop = u.node >= 0 ? estimated_flop(graph_.node(u.node)) : 0.0;
    replaced += flop;
    result_.replaced.push_back({u.op, u.name, total > 0 ? flop / total : 0.0});
    result_.graph.replaced.push_back({u.op, u.name, total > 0 ? flop / total : 0.0});
  }
  const double share = total > 0 ? replaced / total : 0.0;
  auto percent = [](double fraction) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f%%", 100 * fraction);
    return std::string(text);
  };
  for (const LenientReplacement& r : result_.replaced)
    result_.notes.push_back("lenient: node '" + r.name + "' (" + r.op + ") holds " + percent(r.flop_share) +
                            " of the model's estimated FLOP");
  const std::string summary = std::to_string(unsupported_.size()) + " node(s) imported as pass-throughs hold " +
                              percent(share) + " of the model's estimated FLOP";
  if (share > kLenientFlopShare && !options_.lenient_force)
    throw OptionError({"lenient_force", "the import option 'lenient_force'",
                       source_ + ": " + summary + " (more than 5%): the solution would price a different model; ",
                       " imports them anyway"});
  result_.notes.push_back("lenient: " + summary);
}

OptionWords Lowerer::unsupported_message() const {
  const Unsupported& first = unsupported_.front();
  std::string text = source_ + ": node '" + first.name + "': unsupported " + first.op +
                     (first.reason.empty() ? "" : " (" + first.reason + ")") + "; " + std::to_string(unsupported_.size()) +
                     " unsupported node(s):";
  std::map<std::string, std::vector<std::string>> by_op;
  for (const Unsupported& u : unsupported_) by_op[u.op].push_back(u.name);
  bool first_op = true;
  for (const auto& [op, names] : by_op) {
    text += std::string(first_op ? " " : "; ") + op + " x" + std::to_string(names.size()) + " (";
    for (size_t k = 0; k < names.size() && k < 5; ++k) text += (k ? ", '" : "'") + names[k] + "'";
    if (names.size() > 5) text += ", +" + std::to_string(names.size() - 5) + " more";
    text += ")";
    first_op = false;
  }
  return {"lenient", "the import option 'lenient'", text + "; ", " imports them as zero-cost pass-through vertices"};
}

void Lowerer::pass_through(const onnx::NodeProto& node, const std::string& reason) {
  std::vector<int> slots = active_inputs(node);
  for (int k = 0; k < node.output_size(); ++k) {
    const std::string& out = node.output(k);
    if (out.empty() || !is_used(out)) continue;
    const Shape& shape = shape_of(node, out);
    std::vector<std::string> same;
    for (int slot : slots)
      if (shape_of(node, node.input(slot)) == shape) same.push_back(ref_of(node, node.input(slot)).ref);
    std::string how;
    onnx::NodeProto renamed = node;
    if (k > 0) renamed.set_name(node.name() + "/" + std::to_string(k));
    if (!same.empty()) {
      emit(renamed, "elementwise", same, {out});
      how = "an elementwise vertex with pointwise 0";
    } else if (!slots.empty() && checked_product(shape_of(node, node.input(slots[0]))) == checked_product(shape)) {
      NodeV1& n = emit(renamed, "reshape", {ref_of(node, node.input(slots[0])).ref}, {out});
      n.shape = shape;
      how = "a reshape vertex";
    } else if (!slots.empty() && !shape.empty() && checked_product(shape_of(node, node.input(slots[0])))) {
      // Other shapes: one entry of the first activation input broadcast to
      // the output (NAME/flat, NAME/one, NAME), all data movement, so that
      // the graph stays connected.
      const Shape flat_shape = {*checked_product(shape_of(node, node.input(slots[0])))};
      NodeV1& flat = push_helper(renamed.name() + "/flat", "reshape", ref_of(node, node.input(slots[0])).ref, flat_shape);
      flat.shape = flat_shape;
      std::string flat_name = flat.name;
      NodeV1& one = push_helper(renamed.name() + "/one", "slice", flat_name, {1});
      one.axis = 0;
      one.shape = Shape{1};
      std::string one_name = one.name;
      NodeV1& n = emit(renamed, "expand", {one_name}, {out});
      n.shape = shape;
      how = "an expand of one entry of its first activation input";
    } else {
      std::string name = unique_name(renamed.name());
      result_.graph.tensors.emplace_back(name, shape);
      refs_[out] = Ref{name, -1, {}};
      how = "an external tensor (no vertex: the graph is cut there)";
    }
    result_.notes.push_back("lenient: node '" + node.name() + "' (" + node.op_type() + (reason.empty() ? "" : ", " + reason) +
                            ") output " + std::to_string(k) + " imported as " + how);
  }
}

}  // namespace pase
