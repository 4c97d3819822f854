#include "onnximport/norm_pattern.h"

#include <map>

#include "onnximport/onnx_model.h"

namespace pase {
namespace {

class Matcher {
 public:
  explicit Matcher(const onnx::GraphProto& graph) : graph_(graph) {
    for (int i = 0; i < graph.node_size(); ++i)
      for (const std::string& in : graph.node(i).input()) uses_[in].push_back(i);
    for (const onnx::ValueInfoProto& out : graph.output()) uses_[out.name()].push_back(-1);
  }

  // The only consumer of `tensor` if it has exactly one and it is `op`, else -1.
  int sole_use(const std::string& tensor, const std::string& op) const {
    auto it = uses_.find(tensor);
    if (it == uses_.end() || it->second.size() != 1 || it->second[0] < 0) return -1;
    return graph_.node(it->second[0]).op_type() == op ? it->second[0] : -1;
  }

  std::optional<NormMatch> match(int r1) const {
    const onnx::NodeProto& mean = graph_.node(r1);
    std::optional<std::vector<int64_t>> axes = ints_attribute(mean, "axes");
    if (mean.op_type() != "ReduceMean" || mean.input_size() != 1 || !axes || axes->size() != 1 ||
        int_attribute(mean, "keepdims", 1) != 1)
      return std::nullopt;
    const std::string& x = mean.input(0);
    int sub = sole_use(mean.output(0), "Sub");
    if (sub < 0 || graph_.node(sub).input(0) != x || graph_.node(sub).input(1) != mean.output(0)) return std::nullopt;
    const std::string& d = graph_.node(sub).output(0);
    auto it = uses_.find(d);
    if (it == uses_.end() || it->second.size() != 2) return std::nullopt;
    int pow = -1, div = -1;
    for (int use : it->second) {
      if (use < 0) return std::nullopt;
      if (graph_.node(use).op_type() == "Pow" && graph_.node(use).input(0) == d) pow = use;
      if (graph_.node(use).op_type() == "Div" && graph_.node(use).input(0) == d) div = use;
    }
    if (pow < 0 || div < 0) return std::nullopt;
    int mean2 = sole_use(graph_.node(pow).output(0), "ReduceMean");
    if (mean2 < 0 || ints_attribute(graph_.node(mean2), "axes") != axes) return std::nullopt;
    int add = sole_use(graph_.node(mean2).output(0), "Add");
    if (add < 0) return std::nullopt;
    int sqrt = sole_use(graph_.node(add).output(0), "Sqrt");
    if (sqrt < 0 || sole_use(graph_.node(sqrt).output(0), "Div") != div || graph_.node(div).input(1) != graph_.node(sqrt).output(0))
      return std::nullopt;
    NormMatch result;
    result.first = r1;
    result.nodes = {r1, sub, pow, mean2, add, sqrt, div};
    result.input = x;
    result.output = graph_.node(div).output(0);
    result.axis = (*axes)[0];
    return result;
  }

 private:
  const onnx::GraphProto& graph_;
  std::map<std::string, std::vector<int>> uses_;
};

}  // namespace

std::vector<NormMatch> find_decomposed_norms(const onnx::GraphProto& graph) {
  Matcher matcher(graph);
  std::vector<NormMatch> matches;
  for (int i = 0; i < graph.node_size(); ++i)
    if (std::optional<NormMatch> m = matcher.match(i)) matches.push_back(std::move(*m));
  return matches;
}

}  // namespace pase
