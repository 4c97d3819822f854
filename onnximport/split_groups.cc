// Several Slices (or scalar Gathers) of one tensor along one axis become one
// split (or unstack) vertex, each member reading one of its outputs.
#include <algorithm>

#include "onnximport/lowerer.h"
#include "onnximport/onnx_model.h"

namespace pase {

void Lowerer::find_groups() {
  std::map<std::pair<std::string, int64_t>, Group> slices, gathers;
  for (int i = 0; i < graph_.node_size(); ++i) {
    const onnx::NodeProto& node = graph_.node(i);
    if (node.input_size() == 0 || !is_active(node.input(0))) continue;
    const Shape* shape = facts_.shape(node.input(0));
    if (!shape) continue;
    if (node.op_type() == "Slice") {
      std::optional<std::pair<int64_t, std::pair<int64_t, int64_t>>> range = slice_range(node, *shape);
      if (!range) continue;
      Group& g = slices[{node.input(0), range->first}];
      if (g.first < 0) {
        g.first = i;
        g.input = node.input(0);
        g.axis = range->first;
      }
      ranges_[i] = range->second;
      g.port_of[i] = -1;
    } else if (node.op_type() == "Gather" && !is_active(node.input(1))) {
      const ConstantValue* index = facts_.value(node.input(1));
      if (!index || !index->dims.empty() || shape->size() < 2) continue;
      int64_t rank = static_cast<int64_t>(shape->size());
      int64_t axis = int_attribute(node, "axis", 0);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) continue;
      auto k = static_cast<int64_t>(index->data[0]);
      if (k < 0) k += (*shape)[axis];
      Group& g = gathers[{node.input(0), axis}];
      if (g.first < 0) {
        g.first = i;
        g.input = node.input(0);
        g.axis = axis;
      }
      g.port_of[i] = static_cast<int>(k);
    }
  }
  for (auto& [key, g] : slices) {
    int64_t extent = facts_.shape(g.input)->at(g.axis);
    std::set<int64_t> bounds = {0, extent};
    for (const auto& [i, port] : g.port_of) {
      bounds.insert(ranges_[i].first);
      bounds.insert(ranges_[i].second);
    }
    std::vector<int64_t> cuts(bounds.begin(), bounds.end());
    for (size_t k = 0; k + 1 < cuts.size(); ++k) g.parts.push_back(cuts[k + 1] - cuts[k]);
    bool disjoint = true;
    for (auto& [i, port] : g.port_of) {
      auto [begin, end] = ranges_[i];
      auto at = std::lower_bound(cuts.begin(), cuts.end(), begin);
      if (begin == 0 && end == extent) {
        g.identity.insert(i);
      } else if (at + 1 < cuts.end() && *(at + 1) == end) {
        port = static_cast<int>(at - cuts.begin());
      } else {
        disjoint = false;
      }
    }
    // Overlapping slices each get their own split, led by themselves.
    for (auto& [i, port] : g.port_of) {
      if (disjoint || g.identity.count(i)) {
        group_of_[i] = &g;
        continue;
      }
      Group own;
      own.first = i;
      own.input = g.input;
      own.axis = g.axis;
      auto [begin, end] = ranges_[i];
      for (int64_t part : {begin, end - begin, extent - end})
        if (part > 0) own.parts.push_back(part);
      own.port_of[i] = begin > 0 ? 1 : 0;
      own_groups_.push_back(own);
    }
    if (disjoint && g.identity.size() == g.port_of.size()) continue;
    if (disjoint) {
      // The first non-identity member emits the split.
      for (const auto& [i, port] : g.port_of)
        if (!g.identity.count(i)) {
          g.first = i;
          break;
        }
    }
  }
  for (Group& own : own_groups_) group_of_[own.first] = &own;
  for (auto& [key, g] : gathers)
    for (const auto& [i, port] : g.port_of) group_of_[i] = &g;
  slice_groups_ = std::move(slices);
  gather_groups_ = std::move(gathers);
}

std::optional<std::pair<int64_t, std::pair<int64_t, int64_t>>> Lowerer::slice_range(const onnx::NodeProto& node,
                                                                                   const Shape& shape) const {
  std::vector<int64_t> starts, ends, axes, steps;
  if (opset_ < 10) {
    starts = ints_attribute(node, "starts").value_or(std::vector<int64_t>{});
    ends = ints_attribute(node, "ends").value_or(std::vector<int64_t>{});
    axes = ints_attribute(node, "axes").value_or(std::vector<int64_t>{});
  } else {
    std::optional<std::vector<int64_t>> s = input_ints(node, 1), e = input_ints(node, 2);
    if (!s || !e) return std::nullopt;
    starts = *s;
    ends = *e;
    if (node.input_size() > 3 && !node.input(3).empty()) {
      std::optional<std::vector<int64_t>> a = input_ints(node, 3);
      if (!a) return std::nullopt;
      axes = *a;
    }
    if (node.input_size() > 4 && !node.input(4).empty()) {
      std::optional<std::vector<int64_t>> st = input_ints(node, 4);
      if (!st) return std::nullopt;
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t d = 0; d < starts.size(); ++d) axes.push_back(static_cast<int64_t>(d));
  if (starts.size() != ends.size() || axes.size() != starts.size()) return std::nullopt;
  std::optional<std::pair<int64_t, std::pair<int64_t, int64_t>>> result;
  int64_t rank = static_cast<int64_t>(shape.size());
  for (size_t k = 0; k < axes.size(); ++k) {
    if (!steps.empty() && steps[k] != 1) return std::nullopt;
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank) return std::nullopt;
    int64_t size = shape[axis], begin = starts[k], end = ends[k];
    if (begin < 0) begin += size;
    if (end < 0) end += size;
    begin = std::clamp<int64_t>(begin, 0, size);
    end = std::clamp<int64_t>(end, 0, size);
    if (end <= begin) return std::nullopt;
    if (begin == 0 && end == size) continue;
    if (result) return std::nullopt;  // more than one axis is cut
    result = {axis, {begin, end}};
  }
  if (!result) return std::make_pair(int64_t{0}, std::make_pair(int64_t{0}, shape.empty() ? 0 : shape[0]));
  return result;
}

void Lowerer::lower_group_member(int i) {
  const onnx::NodeProto& node = graph_.node(i);
  Group& g = *group_of_.at(i);
  Ref in = ref_of(node, g.input);
  if (g.identity.count(i)) {
    alias(node.output(0), in);
    return;
  }
  if (!emitted_groups_.count(&g)) {
    emitted_groups_[&g] = emit_group(node, g, in);
  }
  const std::string& name = emitted_groups_[&g];
  int port = g.port_of.at(i);
  refs_[node.output(0)] = Ref{name + ":" + std::to_string(port), -1, {}};
}

std::string Lowerer::emit_group(const onnx::NodeProto& node, const Group& g, const Ref& in) {
  NodeV1 n;
  n.name = claim_name(node);
  n.inputs = {in.ref};
  n.axis = g.axis;
  Shape shape = *facts_.shape(g.input);
  std::vector<Shape> claims;
  if (g.parts.empty()) {
    n.op = "unstack";
    Shape out = shape;
    out.erase(out.begin() + g.axis);
    claims.assign(static_cast<size_t>(shape[g.axis]), out);
  } else {
    n.op = "split";
    n.parts = g.parts;
    for (int64_t part : g.parts) {
      Shape out = shape;
      out[g.axis] = part;
      claims.push_back(out);
    }
  }
  n.outputs = claims;
  result_.graph.nodes.push_back(n);
  return n.name;
}

}  // namespace pase
