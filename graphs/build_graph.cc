#include <algorithm>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <stdexcept>

#include <boost/graph/connected_components.hpp>
#include <boost/graph/undirected_graph.hpp>

#include "graphs/einsum.h"
#include "graphs/error.h"
#include "graphs/graph.h"

namespace pase {
namespace {

const std::map<std::string, OpKind>& op_kinds() {
  static const std::map<std::string, OpKind> kinds = {
      {"fc", OpKind::Fc}, {"einsum", OpKind::Einsum}, {"matmul", OpKind::Matmul},
      {"conv2d", OpKind::Conv2d}, {"pool2d", OpKind::Pool2d}, {"elementwise", OpKind::Elementwise},
      {"norm", OpKind::Norm}, {"batchnorm", OpKind::Batchnorm}, {"softmax", OpKind::Softmax},
      {"softmax_xent", OpKind::SoftmaxXent}, {"reduce_mean", OpKind::ReduceMean}, {"concat", OpKind::Concat},
      {"split", OpKind::Split}, {"reshape", OpKind::Unravel}, {"transpose", OpKind::Transpose},
      {"stack", OpKind::Stack}, {"unstack", OpKind::Unstack}, {"embedding", OpKind::Embedding},
      {"lstm", OpKind::Lstm}};
  return kinds;
}

// A parsed reference "node", "node:k" or "tensor".
struct Reference {
  int node = -1;  // index into file.nodes, or -1 for an external tensor
  int port = 0;
  std::string tensor;
};

class Builder {
 public:
  Builder(const GraphFileV1& file, const std::string& source) : file_(file), source_(source) {}

  Graph build() {
    index_names();
    resolve_references();
    std::vector<int> order = topological_order();
    graph_.name = file_.name;
    graph_.source = source_;
    first_vertex_.assign(file_.nodes.size(), -1);
    last_vertex_.assign(file_.nodes.size(), -1);
    for (int node : order) lower_node(node);
    for (int v = 0; v < static_cast<int>(graph_.vertices.size()); ++v) {
      const Vertex& vertex = graph_.vertices[v];
      for (int j = 0; j < static_cast<int>(vertex.inputs.size()); ++j) {
        const TensorSource& src = vertex.inputs[j].source;
        if (src.vertex >= 0) graph_.edges.push_back({src.vertex, src.port, v, j});
      }
    }
    return std::move(graph_);
  }

 private:
  [[noreturn]] void fail_node(int node, const std::string& field, const std::string& message) const {
    std::string where = source_ + ": node '" + file_.nodes[node].name + "'";
    if (!field.empty()) where += ": field '" + field + "'";
    throw InputError(where + ": " + message);
  }

  void index_names() {
    for (const auto& [name, shape] : file_.tensors) {
      if (name.empty() || name.find(':') != std::string::npos)
        throw InputError(source_ + ": tensor '" + name + "': a tensor name must be non-empty and contain no ':'");
      tensor_shapes_[name] = shape;
    }
    for (int i = 0; i < static_cast<int>(file_.nodes.size()); ++i) {
      const std::string& name = file_.nodes[i].name;
      if (tensor_shapes_.count(name)) fail_node(i, "name", "duplicate name: '" + name + "' is also an external tensor");
      if (!node_index_.emplace(name, i).second) fail_node(i, "name", "duplicate name: node '" + name + "' is defined twice");
    }
    // reshape creates "NAME/ravel"; it must not collide with a user node.
    for (const NodeV1& node : file_.nodes)
      if (node.op == "reshape" && node_index_.count(node.name + "/ravel"))
        fail_node(node_index_[node.name + "/ravel"], "name",
                  "duplicate name: reshape '" + node.name + "' already uses '" + node.name + "/ravel'");
  }

  void resolve_references() {
    std::vector<std::string> names;
    for (const auto& entry : node_index_) names.push_back(entry.first);
    for (const auto& entry : tensor_shapes_) names.push_back(entry.first);
    references_.resize(file_.nodes.size());
    for (int i = 0; i < static_cast<int>(file_.nodes.size()); ++i) {
      const NodeV1& node = file_.nodes[i];
      for (size_t j = 0; j < node.inputs.size(); ++j) {
        const std::string& ref = node.inputs[j];
        std::string field = "inputs[" + std::to_string(j) + "]";
        Reference r;
        if (tensor_shapes_.count(ref)) {
          r.tensor = ref;
        } else {
          std::string base = ref;
          auto colon = ref.rfind(':');
          if (colon != std::string::npos) {
            base = ref.substr(0, colon);
            std::string digits = ref.substr(colon + 1);
            if (digits.empty() || digits.size() > 6 || !std::all_of(digits.begin(), digits.end(), ::isdigit))
              fail_node(i, field, "bad output index in '" + ref + "' (expected NODE:K with K a number)");
            r.port = std::stoi(digits);
          }
          auto it = node_index_.find(base);
          if (it == node_index_.end()) {
            std::string hint = closest_name(base, names);
            fail_node(i, field, "'" + ref + "' names no node or tensor" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
          }
          r.node = it->second;
          if (r.node == i) fail_node(i, field, "cycle: " + node.name + " -> " + node.name);
        }
        references_[i].push_back(r);
      }
    }
  }

  // Kahn's algorithm, lowest file index first, so the order is stable; on a
  // cycle, walk it to print its path.
  std::vector<int> topological_order() {
    size_t n = file_.nodes.size();
    std::vector<std::vector<int>> consumers(n);
    std::vector<int> pending(n, 0);
    for (size_t i = 0; i < n; ++i) {
      std::set<int> producers;
      for (const Reference& r : references_[i])
        if (r.node >= 0) producers.insert(r.node);
      pending[i] = static_cast<int>(producers.size());
      for (int p : producers) consumers[p].push_back(static_cast<int>(i));
    }
    std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
    for (size_t i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push(static_cast<int>(i));
    std::vector<int> order;
    while (!ready.empty()) {
      int i = ready.top();
      ready.pop();
      order.push_back(i);
      for (int c : consumers[i])
        if (--pending[c] == 0) ready.push(c);
    }
    if (order.size() == n) return order;
    // Every node left has a pending producer that is also left: follow them until one repeats.
    int start = 0;
    while (pending[start] == 0) ++start;
    std::vector<int> path;
    std::vector<int> seen(n, -1);
    int at = start;
    while (seen[at] < 0) {
      seen[at] = static_cast<int>(path.size());
      path.push_back(at);
      for (const Reference& r : references_[at])
        if (r.node >= 0 && pending[r.node] > 0) {
          at = r.node;
          break;
        }
    }
    std::vector<int> cycle(path.begin() + seen[at], path.end());
    std::reverse(cycle.begin(), cycle.end());  // producer -> consumer direction
    std::rotate(cycle.begin(), std::min_element(cycle.begin(), cycle.end()), cycle.end());  // start at the first in the file
    std::string text;
    for (int c : cycle) text += file_.nodes[c].name + " -> ";
    text += file_.nodes[cycle.front()].name;
    throw InputError(source_ + ": cycle: " + text);
  }

  int normalise_axis(int node, const std::string& field, int64_t axis, size_t rank, bool allow_end = false) const {
    int64_t limit = static_cast<int64_t>(rank) + (allow_end ? 1 : 0);
    int64_t a = axis < 0 ? axis + limit : axis;
    if (a < 0 || a >= limit)
      fail_node(node, field, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
    return static_cast<int>(a);
  }

  void expect_inputs(int node, size_t low, size_t high) const {
    size_t count = file_.nodes[node].inputs.size();
    if (count >= low && count <= high) return;
    std::string want = low == high ? std::to_string(low) : high == SIZE_MAX ? "at least " + std::to_string(low)
                                                                            : std::to_string(low) + " to " + std::to_string(high);
    fail_node(node, "inputs", "op '" + file_.nodes[node].op + "' takes " + want + " input(s), got " + std::to_string(count));
  }

  void expect_rank(int node, size_t input, const Shape& shape, size_t rank, const std::string& what) const {
    if (shape.size() != rank)
      fail_node(node, "inputs[" + std::to_string(input) + "]",
                "'" + file_.nodes[node].inputs[input] + "' has shape " + shape_to_string(shape) + "; op '" +
                    file_.nodes[node].op + "' needs rank " + std::to_string(rank) + " (" + what + ")");
  }

  Shape checked(int node, const std::string& field, const Shape& shape) const {
    for (int64_t s : shape)
      if (s <= 0) fail_node(node, field, "inferred shape " + shape_to_string(shape) + " has a non-positive size");
    if (!checked_product(shape)) fail_node(node, field, "inferred shape " + shape_to_string(shape) + " has more than 2^63 elements");
    return shape;
  }

  int64_t conv_extent(int node, const std::string& what, int64_t in, int64_t window, int64_t pad, int64_t stride) const {
    int64_t span = in + 2 * pad - window;
    if (span < 0)
      fail_node(node, what, "window " + std::to_string(window) + " is larger than the padded input " + std::to_string(in + 2 * pad));
    return span / stride + 1;
  }

  void lower_node(int i) {
    const NodeV1& node = file_.nodes[i];
    Vertex v;
    v.name = node.name;
    v.op = node.op;
    v.kind = op_kinds().at(node.op);
    v.cutoff = node.cutoff.value_or(file_.cutoff);
    v.pointwise = node.pointwise.value_or(0);
    std::vector<Shape> in;
    for (size_t j = 0; j < node.inputs.size(); ++j) {
      const Reference& r = references_[i][j];
      VertexInput input;
      input.ref = node.inputs[j];
      if (r.node < 0) {
        input.shape = tensor_shapes_.at(r.tensor);
      } else {
        int producer = last_vertex_[r.node];
        const Vertex& pv = graph_.vertices[producer];
        if (r.port >= static_cast<int>(pv.outputs.size()))
          fail_node(i, "inputs[" + std::to_string(j) + "]",
                    "'" + input.ref + "' asks for output " + std::to_string(r.port) + " but node '" + file_.nodes[r.node].name +
                        "' has " + std::to_string(pv.outputs.size()) + " output(s)");
        input.source = {producer, r.port};
        input.shape = pv.outputs[r.port];
      }
      in.push_back(input.shape);
      v.inputs.push_back(input);
    }
    auto same_shapes = [&](size_t from, const std::string& what) {
      for (size_t j = from; j < in.size(); ++j)
        if (in[j] != in[0])
          fail_node(i, "inputs[" + std::to_string(j) + "]",
                    "shape mismatch: '" + node.inputs[j] + "' is " + shape_to_string(in[j]) + " but '" + node.inputs[0] +
                        "' is " + shape_to_string(in[0]) + " (" + what + ")");
    };

    switch (v.kind) {
      case OpKind::Fc: {
        expect_inputs(i, 1, 1);
        if (in[0].size() < 2) expect_rank(i, 0, in[0], 2, "batch dims then features");
        v.units = *node.units;
        Shape out = in[0];
        out.back() = v.units;
        v.outputs = {checked(i, "units", out)};
        break;
      }
      case OpKind::Einsum:
      case OpKind::Matmul: {
        expect_inputs(i, 2, 2);
        if (v.kind == OpKind::Matmul) {
          if (in[0].size() < 2 || in[0].size() != in[1].size() || in[0].size() > 20)
            fail_node(i, "inputs", "matmul needs two operands of the same rank >= 2, got " + shape_to_string(in[0]) + " and " +
                                       shape_to_string(in[1]));
          std::string batch;
          for (size_t d = 0; d + 2 < in[0].size(); ++d) batch += static_cast<char>('a' + d);
          v.equation = batch + "mk," + batch + "kn->" + batch + "mn";
        } else {
          v.equation = *node.equation;
        }
        EinsumSpec spec;
        try {
          spec = parse_einsum(v.equation);
        } catch (const std::invalid_argument& error) {
          fail_node(i, "equation", "'" + v.equation + "': " + error.what());
        }
        std::map<char, int64_t> size;
        const std::string* terms[2] = {&spec.lhs, &spec.rhs};
        for (int t = 0; t < 2; ++t) {
          const std::string& term = *terms[t];
          if (term.size() != in[t].size())
            fail_node(i, v.kind == OpKind::Matmul ? "inputs" : "equation",
                      "operand " + std::to_string(t) + " '" + term + "' has " + std::to_string(term.size()) + " letters but '" +
                          node.inputs[t] + "' has shape " + shape_to_string(in[t]));
          for (size_t d = 0; d < term.size(); ++d) {
            auto [it, inserted] = size.emplace(term[d], in[t][d]);
            if (!inserted && it->second != in[t][d])
              fail_node(i, v.kind == OpKind::Matmul ? "inputs" : "equation",
                        "shape mismatch: letter '" + std::string(1, term[d]) + "' is " + std::to_string(it->second) +
                            " in operand 0 but " + std::to_string(in[t][d]) + " in operand 1 ('" + node.inputs[t] + "' is " +
                            shape_to_string(in[t]) + ")");
          }
        }
        Shape out;
        for (char c : spec.out) out.push_back(size[c]);
        v.outputs = {checked(i, "equation", out)};
        break;
      }
      case OpKind::Conv2d: {
        expect_inputs(i, 1, 1);
        expect_rank(i, 0, in[0], 4, "batch, channels, height, width");
        v.filter = *node.filter;
        if (v.filter.size() != 4)
          fail_node(i, "filter", "expected 4 sizes (N, C, R, S), got " + std::to_string(v.filter.size()));
        if (v.filter[1] != in[0][1])
          fail_node(i, "filter", "shape mismatch: filter has " + std::to_string(v.filter[1]) + " input channels but '" +
                                     node.inputs[0] + "' has " + std::to_string(in[0][1]) + " (shape " + shape_to_string(in[0]) + ")");
        v.stride = node.stride.value_or(HeightWidth{1, 1});
        v.padding = node.padding.value_or(HeightWidth{0, 0});
        int64_t ho = conv_extent(i, "filter", in[0][2], v.filter[2], v.padding.h, v.stride.h);
        int64_t wo = conv_extent(i, "filter", in[0][3], v.filter[3], v.padding.w, v.stride.w);
        v.outputs = {checked(i, "filter", {in[0][0], v.filter[0], ho, wo})};
        break;
      }
      case OpKind::Pool2d: {
        expect_inputs(i, 1, 1);
        expect_rank(i, 0, in[0], 4, "batch, channels, height, width");
        v.window = *node.window;
        v.stride = node.stride.value_or(HeightWidth{1, 1});
        v.padding = node.padding.value_or(HeightWidth{0, 0});
        int64_t ho = conv_extent(i, "window", in[0][2], v.window.h, v.padding.h, v.stride.h);
        int64_t wo = conv_extent(i, "window", in[0][3], v.window.w, v.padding.w, v.stride.w);
        v.outputs = {checked(i, "window", {in[0][0], in[0][1], ho, wo})};
        break;
      }
      case OpKind::Elementwise:
        expect_inputs(i, 1, SIZE_MAX);
        same_shapes(1, "elementwise operands must have the same shape");
        v.outputs = {in[0]};
        break;
      case OpKind::Norm:
      case OpKind::Batchnorm:
      case OpKind::Softmax:
        expect_inputs(i, 1, 1);
        if (v.kind == OpKind::Batchnorm) v.axis = 0;
        else v.axis = normalise_axis(i, "axis", node.axis.value_or(v.kind == OpKind::Norm ? -1 : 1), in[0].size());
        v.outputs = {in[0]};
        break;
      case OpKind::SoftmaxXent:
        expect_inputs(i, 1, 1);
        v.outputs = {in[0]};
        break;
      case OpKind::ReduceMean: {
        expect_inputs(i, 1, 1);
        std::set<int> axes;
        for (size_t a = 0; a < node.axes->size(); ++a) {
          int axis = normalise_axis(i, "axes", (*node.axes)[a], in[0].size());
          if (!axes.insert(axis).second) fail_node(i, "axes", "axis " + std::to_string((*node.axes)[a]) + " is listed twice");
        }
        if (axes.empty()) fail_node(i, "axes", "expected at least one axis");
        v.axes.assign(axes.begin(), axes.end());
        v.keepdims = node.keepdims.value_or(false);
        Shape out;
        for (size_t d = 0; d < in[0].size(); ++d) {
          if (!axes.count(static_cast<int>(d))) out.push_back(in[0][d]);
          else if (v.keepdims) out.push_back(1);
        }
        if (out.empty()) out = {1};
        v.outputs = {out};
        break;
      }
      case OpKind::Concat: {
        expect_inputs(i, 1, SIZE_MAX);
        v.axis = normalise_axis(i, "axis", *node.axis, in[0].size());
        Shape out = in[0];
        for (size_t j = 1; j < in.size(); ++j) {
          bool fits = in[j].size() == in[0].size();
          for (size_t d = 0; fits && d < in[0].size(); ++d)
            if (static_cast<int>(d) != v.axis && in[j][d] != in[0][d]) fits = false;
          if (!fits)
            fail_node(i, "inputs[" + std::to_string(j) + "]",
                      "shape mismatch: '" + node.inputs[j] + "' is " + shape_to_string(in[j]) + " but '" + node.inputs[0] +
                          "' is " + shape_to_string(in[0]) + " (they may differ only on axis " + std::to_string(v.axis) + ")");
          out[v.axis] += in[j][v.axis];
        }
        v.outputs = {checked(i, "inputs", out)};
        break;
      }
      case OpKind::Split: {
        expect_inputs(i, 1, 1);
        v.axis = normalise_axis(i, "axis", *node.axis, in[0].size());
        std::vector<int64_t> sizes = *node.parts;
        int64_t extent = in[0][v.axis];
        if (node.parts_is_count) {
          int64_t count = sizes[0];
          if (extent % count != 0)
            fail_node(i, "parts", "axis " + std::to_string(v.axis) + " has size " + std::to_string(extent) +
                                      ", which does not split into " + std::to_string(count) + " equal parts");
          if (count > 4096) fail_node(i, "parts", "at most 4096 parts, got " + std::to_string(count));
          sizes.assign(static_cast<size_t>(count), extent / count);
        } else if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != extent) {
          fail_node(i, "parts", "sizes add up to " + std::to_string(std::accumulate(sizes.begin(), sizes.end(), int64_t{0})) +
                                    " but axis " + std::to_string(v.axis) + " has size " + std::to_string(extent));
        }
        for (int64_t part : sizes) {
          Shape out = in[0];
          out[v.axis] = part;
          v.outputs.push_back(out);
        }
        break;
      }
      case OpKind::Unravel: {
        expect_inputs(i, 1, 1);
        Shape target = *node.shape;
        int64_t total = *checked_product(in[0]);
        int unknown = -1;
        int64_t known = 1;
        for (size_t d = 0; d < target.size(); ++d) {
          if (target[d] == -1) {
            if (unknown >= 0) fail_node(i, "shape", "at most one size may be -1");
            unknown = static_cast<int>(d);
          } else {
            known *= target[d];
            if (known > total) break;
          }
        }
        if (unknown >= 0 && known > 0 && total % known == 0) target[unknown] = total / known;
        auto product = checked_product(target);
        if (!product || *product != total)
          fail_node(i, "shape", "shape mismatch: " + shape_to_string(*node.shape) + " does not hold the " + std::to_string(total) +
                                    " elements of '" + node.inputs[0] + "' " + shape_to_string(in[0]));
        // The ravel vertex flattens the input to one dimension; the unravel vertex reshapes it.
        Vertex ravel = v;
        ravel.name = node.name + "/ravel";
        ravel.kind = OpKind::Ravel;
        ravel.outputs = {{total}};
        add_vertex(i, std::move(ravel));
        VertexInput flat;
        flat.ref = node.name + "/ravel";
        flat.source = {static_cast<int>(graph_.vertices.size()) - 1, 0};
        flat.shape = {total};
        v.inputs = {flat};
        v.outputs = {target};
        break;
      }
      case OpKind::Transpose: {
        expect_inputs(i, 1, 1);
        std::vector<int64_t> perm = *node.perm;
        std::vector<int64_t> sorted = perm;
        std::sort(sorted.begin(), sorted.end());
        for (size_t d = 0; d < sorted.size(); ++d)
          if (sorted[d] != static_cast<int64_t>(d) || sorted.size() != in[0].size())
            fail_node(i, "perm", "expected a permutation of 0.." + std::to_string(in[0].size() - 1) + ", got " + shape_to_string(perm));
        if (perm.size() != in[0].size())
          fail_node(i, "perm", "expected a permutation of 0.." + std::to_string(in[0].size() - 1) + ", got " + shape_to_string(perm));
        Shape out;
        for (int64_t p : perm) {
          v.perm.push_back(static_cast<int>(p));
          out.push_back(in[0][p]);
        }
        v.outputs = {out};
        break;
      }
      case OpKind::Stack: {
        expect_inputs(i, 1, SIZE_MAX);
        same_shapes(1, "stacked tensors must have the same shape");
        v.axis = normalise_axis(i, "axis", node.axis.value_or(0), in[0].size(), /*allow_end=*/true);
        Shape out = in[0];
        out.insert(out.begin() + v.axis, static_cast<int64_t>(in.size()));
        v.outputs = {out};
        break;
      }
      case OpKind::Unstack: {
        expect_inputs(i, 1, 1);
        v.axis = normalise_axis(i, "axis", node.axis.value_or(0), in[0].size());
        if (in[0].size() < 2) fail_node(i, "inputs[0]", "unstack needs rank >= 2, got " + shape_to_string(in[0]));
        if (in[0][v.axis] > 4096) fail_node(i, "axis", "unstack gives at most 4096 outputs, axis has size " + std::to_string(in[0][v.axis]));
        Shape out = in[0];
        out.erase(out.begin() + v.axis);
        v.outputs.assign(static_cast<size_t>(in[0][v.axis]), out);
        break;
      }
      case OpKind::Embedding: {
        expect_inputs(i, 1, 1);
        if (references_[i][0].node >= 0)
          fail_node(i, "inputs[0]", "embedding ids '" + node.inputs[0] + "' must be an external tensor (listed in 'tensors')");
        expect_rank(i, 0, in[0], 2, "batch, sequence");
        v.vocab = *node.vocab;
        v.dim = *node.dim;
        v.equation = "abc,cd->abd";
        v.outputs = {checked(i, "dim", {in[0][0], in[0][1], v.dim})};
        break;
      }
      case OpKind::Lstm: {
        expect_inputs(i, 1, 1);
        expect_rank(i, 0, in[0], 3, "batch, sequence, features");
        v.units = *node.units;
        v.layers = *node.layers;
        if (in[0][2] != v.units)
          fail_node(i, "units", "shape mismatch: units " + std::to_string(v.units) + " but '" + node.inputs[0] +
                                    "' has " + std::to_string(in[0][2]) + " features (shape " + shape_to_string(in[0]) + ")");
        v.outputs = {in[0]};
        break;
      }
      case OpKind::Ravel:
        break;  // only created by reshape
    }
    if (node.outputs) {
      const std::vector<Shape>& claimed = *node.outputs;
      if (claimed.size() != v.outputs.size())
        fail_node(i, "outputs", "claims " + std::to_string(claimed.size()) + " output(s) but the op has " + std::to_string(v.outputs.size()));
      for (size_t k = 0; k < claimed.size(); ++k)
        if (claimed[k] != v.outputs[k])
          fail_node(i, "outputs[" + std::to_string(k) + "]",
                    "shape mismatch: claims " + shape_to_string(claimed[k]) + " but the op gives " + shape_to_string(v.outputs[k]));
    }
    add_vertex(i, std::move(v));
  }

  void add_vertex(int node, Vertex vertex) {
    int id = static_cast<int>(graph_.vertices.size());
    if (first_vertex_[node] < 0) first_vertex_[node] = id;
    last_vertex_[node] = id;
    graph_.vertices.push_back(std::move(vertex));
  }

  const GraphFileV1& file_;
  const std::string& source_;
  std::map<std::string, Shape> tensor_shapes_;
  std::map<std::string, int> node_index_;
  std::vector<std::vector<Reference>> references_;
  std::vector<int> first_vertex_, last_vertex_;
  Graph graph_;
};

}  // namespace

int Graph::find_vertex(const std::string& vertex_name) const {
  for (size_t v = 0; v < vertices.size(); ++v)
    if (vertices[v].name == vertex_name) return static_cast<int>(v);
  return -1;
}

int Graph::component_count() const {
  using Undirected = boost::adjacency_list<boost::vecS, boost::vecS, boost::undirectedS>;
  Undirected undirected(vertices.size());
  for (const TensorEdge& e : edges) boost::add_edge(e.src, e.dst, undirected);
  std::vector<int> component(vertices.size());
  return vertices.empty() ? 0 : boost::connected_components(undirected, component.data());
}

Graph build_graph(const GraphFileV1& file, const std::string& source) { return Builder(file, source).build(); }

Graph load_graph(const std::string& path) { return build_graph(read_graph_file(path), path); }

}  // namespace pase
