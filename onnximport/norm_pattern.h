#pragma once
// Recognises the layer norm that exporters decompose at opsets below 17:
//   m = ReduceMean(x); d = Sub(x, m); v = ReduceMean(Pow(d, 2));
//   y = Div(d, Sqrt(Add(v, eps)))
// so that it becomes one `norm` vertex instead of seven.
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace pase {

/// One decomposed layer norm, by node index into the graph.
struct NormMatch {
  int first = 0;              ///< the leading ReduceMean; the norm vertex takes its name
  std::vector<int> nodes;     ///< every node of the pattern, `first` included
  std::string input;          ///< x
  std::string output;         ///< y (the Div's output)
  int64_t axis = -1;          ///< the normalised axis as written
};

/// Every decomposed layer norm over a single axis whose inner tensors have no other use.
[[nodiscard]] std::vector<NormMatch> find_decomposed_norms(const onnx::GraphProto& graph);

}  // namespace pase
