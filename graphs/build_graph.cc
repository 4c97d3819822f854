#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <stdexcept>

#include <boost/graph/connected_components.hpp>
#include <boost/graph/undirected_graph.hpp>

#include "base/check.h"
#include "base/error.h"
#include "graphs/checkpoint_shapes.h"
#include "graphs/graph.h"
#include "graphs/layer_weights.h"
#include "graphs/node_context.h"
#include "graphs/op_registry.h"
#include "base/closest_name.h"

namespace pase {
namespace {

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
    owned_weights_.assign(file_.nodes.size(), {});
    for (int node : order) lower_node(node);
    check_checkpoint_shapes(check_weight_names());
    graph_.parameters = file_.parameters;
    graph_.replaced = file_.replaced;
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

  [[noreturn]] void fail_field(const std::string& field, const std::string& message) const {
    throw InputError(source_ + ": field '" + field + "': " + message);
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
    for (size_t k = 0; k < file_.parameters.size(); ++k) {
      const std::string& name = file_.parameters[k];
      std::string field = "parameters[" + std::to_string(k) + "]";
      if (!tensor_shapes_.count(name)) {
        std::vector<std::string> tensors;
        for (const auto& entry : tensor_shapes_) tensors.push_back(entry.first);
        std::string hint = closest_name(name, tensors);
        fail_field(field, "'" + name + "' names no external tensor" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
      }
      if (!parameters_.insert(name).second) fail_field(field, "'" + name + "' is listed twice");
    }
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

  void expect_inputs(int node, const OpDefinition& op) const {
    size_t count = file_.nodes[node].inputs.size();
    if (count >= op.min_inputs && count <= op.max_inputs) return;
    size_t low = op.min_inputs, high = op.max_inputs;
    std::string want = low == high ? std::to_string(low) : high == SIZE_MAX ? "at least " + std::to_string(low)
                                                                            : std::to_string(low) + " to " + std::to_string(high);
    fail_node(node, "inputs", "op '" + file_.nodes[node].op + "' takes " + want + " input(s), got " + std::to_string(count));
  }

  // The op's definition infers the node's shapes; the builder wires its
  // inputs and checks the outputs the file claims.
  void lower_node(int i) {
    const NodeV1& node = file_.nodes[i];
    const OpDefinition* op = find_op(node.op);
    PASE_ASSERT(op != nullptr && op->infer != nullptr, node.op);  // the reader accepts only known ops
    Vertex v;
    v.name = node.name;
    v.op = node.op;
    v.kind = op->kind;
    v.cutoff = node.cutoff.value_or(file_.cutoff);
    v.pointwise = node.pointwise.value_or(0);
    std::vector<Shape> in;
    std::vector<bool> external;
    for (size_t j = 0; j < node.inputs.size(); ++j) {
      const Reference& r = references_[i][j];
      VertexInput input;
      input.ref = node.inputs[j];
      if (r.node < 0) {
        input.shape = tensor_shapes_.at(r.tensor);
        input.parameter = parameters_.count(r.tensor) > 0;
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
      external.push_back(r.node < 0);
      v.inputs.push_back(input);
    }
    expect_inputs(i, *op);
    std::vector<Vertex> lowered = op->infer(NodeContext(node, in, external, source_), std::move(v));
    check_claimed_outputs(i, lowered.back().outputs);
    attach_weights(i, lowered.back());
    for (Vertex& vertex : lowered) {
      for (VertexInput& input : vertex.inputs)
        if (input.source.vertex == kPreviousVertex) input.source.vertex = static_cast<int>(graph_.vertices.size()) - 1;
      add_vertex(i, std::move(vertex));
    }
  }

  void check_claimed_outputs(int i, const std::vector<Shape>& inferred) const {
    const NodeV1& node = file_.nodes[i];
    if (!node.outputs) return;
    const std::vector<Shape>& claimed = *node.outputs;
    if (claimed.size() != inferred.size())
      fail_node(i, "outputs", "claims " + std::to_string(claimed.size()) + " output(s) but the op has " + std::to_string(inferred.size()));
    for (size_t k = 0; k < claimed.size(); ++k)
      if (claimed[k] != inferred[k])
        fail_node(i, "outputs[" + std::to_string(k) + "]",
                  "shape mismatch: claims " + shape_to_string(claimed[k]) + " but the op gives " + shape_to_string(inferred[k]));
  }

  // The node's `weights` (one name per weight its op owns) and
  // `pointwise_weights` (each broadcast against output 0) on its last vertex.
  void attach_weights(int i, Vertex& vertex) {
    const NodeV1& node = file_.nodes[i];
    // The shapes of the weights the op owns, once per node (check_weight_names reads them).
    if (op_takes_field(*find_op(node.op), "weights"))
      for (const WeightTensor& weight : build_vertex_model(vertex).weights) owned_weights_[i].push_back(weight.shape);
    if (node.weights) {
      size_t owned = owned_weights_[i].size();
      if (node.weights->size() != owned)
        fail_node(i, "weights", "op '" + node.op + "' owns " + std::to_string(owned) + " weight(s), got " +
                                    std::to_string(node.weights->size()) + " name(s)");
      vertex.weight_names = *node.weights;
    }
    if (!node.pointwise_weights) return;
    const Shape& out = vertex.outputs.at(0);
    const auto rank = static_cast<int64_t>(out.size());
    for (size_t k = 0; k < node.pointwise_weights->size(); ++k) {
      const PointwiseWeightV1& w = (*node.pointwise_weights)[k];
      std::string field = "pointwise_weights[" + std::to_string(k) + "]";
      const auto dims = static_cast<int64_t>(w.shape.size());
      int64_t axis = w.axis.value_or(rank - dims);
      if (axis < 0 && w.axis) axis += rank;
      if (axis < 0 || axis > rank - dims)  // not axis + dims: a written axis may be near 2^63
        fail_node(i, field + (w.axis ? ".axis" : ".shape"),
                  "shape " + shape_to_string(w.shape) + (w.axis ? " from axis " + std::to_string(*w.axis) : "") +
                      " does not fit in output 0 of shape " + shape_to_string(out));
      for (int64_t d = 0; d < dims; ++d)
        if (w.shape[d] != 1 && w.shape[d] != out[axis + d])
          fail_node(i, field + ".shape",
                    "shape " + shape_to_string(w.shape) + " does not broadcast against output 0 of shape " +
                        shape_to_string(out) + " from axis " + std::to_string(axis) + " (each size must be 1 or " +
                        "the output's)");
      vertex.pointwise_weights.push_back({w.name, w.shape, static_cast<int>(axis)});
    }
  }

  // A weight name stands for one tensor: every layer that reads it (tied
  // embeddings) sees one shape, and no layer lists it twice. Checked in file
  // order, over the written names, the default NODE/weight names and the
  // external tensors listed under `parameters`. Returns every weight's shape by name.
  std::map<std::string, Shape> check_weight_names() const {
    struct Seen {
      const Shape* shape;
      int node;  // -1: an external tensor listed under `parameters`
    };
    std::map<std::string, Seen> seen;
    for (const auto& [name, shape] : file_.tensors)
      if (parameters_.count(name)) seen.emplace(name, Seen{&shape, -1});
    // The texts are made only for the message of a clash.
    auto claim = [&](int i, const std::string& name, const Shape& shape, const std::function<std::string()>& field,
                     bool default_name) {
      auto [it, inserted] = seen.emplace(name, Seen{&shape, i});
      if (inserted) return;
      std::string what = default_name ? "the default weight name '" + name + "'" : "'" + name + "'";
      if (it->second.node == i) fail_node(i, field(), what + " names two weights of this node");
      if (*it->second.shape != shape) {
        std::string owner = it->second.node < 0 ? "the parameter tensor '" + name + "'"
                                                : "a weight of node '" + file_.nodes[it->second.node].name + "'";
        fail_node(i, field(), what + " also names " + owner + " with shape " + shape_to_string(*it->second.shape) +
                                  ", not " + shape_to_string(shape) + " (a weight read by several layers has one shape)");
      }
    };
    for (int i = 0; i < static_cast<int>(file_.nodes.size()); ++i) {
      const Vertex& vertex = graph_.vertices[last_vertex_[i]];
      const std::vector<Shape>& owned = owned_weights_[i];
      for (size_t k = 0; k < owned.size(); ++k) {
        bool named = k < vertex.weight_names.size();
        claim(i, owned_weight_name(vertex, k), owned[k],
              [&] { return named ? "weights[" + std::to_string(k) + "]" : std::string("weights"); }, !named);
      }
      for (size_t k = 0; k < vertex.pointwise_weights.size(); ++k)
        claim(i, vertex.pointwise_weights[k].name, vertex.pointwise_weights[k].shape,
              [&] { return "pointwise_weights[" + std::to_string(k) + "].name"; }, false);
    }
    std::map<std::string, Shape> shapes;
    for (const auto& [name, entry] : seen) shapes.emplace(name, *entry.shape);
    return shapes;
  }

  // Each `checkpoint_shapes` entry names a weight and merges neighbouring
  // dimensions of its declared shape.
  void check_checkpoint_shapes(const std::map<std::string, Shape>& weights) {
    for (const auto& [name, shape] : file_.checkpoint_shapes) {
      const std::string field = "checkpoint_shapes." + name;
      auto weight = weights.find(name);
      if (weight == weights.end()) {
        std::vector<std::string> names;
        for (const auto& entry : weights) names.push_back(entry.first);
        std::string hint = closest_name(name, names);
        fail_field(field, "'" + name + "' names no weight" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
      }
      if (!checkpoint_merges(weight->second, shape))
        fail_field(field, shape_to_string(shape) + " is not the weight's shape " + shape_to_string(weight->second) +
                              " with neighbouring dimensions merged");
      if (!graph_.checkpoint_shapes.emplace(name, shape).second) fail_field(field, "'" + name + "' is listed twice");
    }
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
  std::set<std::string> parameters_;
  std::vector<std::vector<Shape>> owned_weights_;  // per node, the shapes of the weights its op owns
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

std::vector<std::string> Graph::vertex_names() const {
  std::vector<std::string> names;
  names.reserve(vertices.size());
  for (const Vertex& vertex : vertices) names.push_back(vertex.name);
  return names;
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
