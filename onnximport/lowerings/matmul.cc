// Matrix products: Gemm and MatMul, as fc vertices where one operand is a
// weight, else as einsum vertices.
#include "onnximport/lowerings/lowerings.h"

#include "onnximport/lowering_helpers.h"
#include "onnximport/onnx_model.h"

namespace pase {

std::optional<std::string> Lowerer::matmul_equation(const Shape& a, const Shape& b, bool trans_a, bool trans_b) const {
  if (a.size() < 2 || b.size() < 2 || a.size() > 12 || b.size() > 12) return std::nullopt;
  size_t batch_a = a.size() - 2, batch_b = b.size() - 2, batch = std::max(batch_a, batch_b);
  std::string letters = "abcdefghij";
  std::string out_batch = letters.substr(0, batch), ta, tb;
  for (size_t d = 0; d < batch_a; ++d) {
    size_t o = batch - batch_a + d;
    if (d < batch_a && o >= batch - batch_b && a[d] != b[o - (batch - batch_b)]) return std::nullopt;
    ta += letters[o];
  }
  for (size_t d = 0; d < batch_b; ++d) {
    size_t o = batch - batch_b + d;
    if (o >= batch - batch_a && b[d] != a[o - (batch - batch_a)]) return std::nullopt;
    tb += letters[o];
  }
  ta += trans_a ? "km" : "mk";
  tb += trans_b ? "nk" : "kn";
  return ta + "," + tb + "->" + out_batch + "mn";
}

void Lowerer::lower_gemm(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  bool trans_a = int_attribute(node, "transA", 0) != 0, trans_b = int_attribute(node, "transB", 0) != 0;
  if (node.input_size() > 2 && is_active(node.input(2))) return unsupported(node, "its C operand is an activation");
  if (is_active(node.input(0)) && !is_active(node.input(1)) && !trans_a) {
    const Shape& b = shape_of(node, node.input(1));
    NodeV1& n = emit(node, "fc", {ref_of(node, node.input(0)).ref}, {node.output(0)});
    n.units = trans_b ? b[0] : b[1];
    name_fc_weight(n, node.input(1), /*read_nk=*/trans_b);
    if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(last_node(), node.input(2), std::nullopt);
    return;
  }
  if (!lower_einsum_matmul(node, trans_a, trans_b)) return;
  if (node.input_size() > 2 && !node.input(2).empty()) add_pointwise_weight(last_node(), node.input(2), std::nullopt);
}

void Lowerer::lower_matmul(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  bool a_active = is_active(node.input(0)), b_active = is_active(node.input(1));
  const Shape& a = shape_of(node, node.input(0));
  const Shape& b = shape_of(node, node.input(1));
  if (a_active && !b_active && b.size() == 2 && a.size() >= 2) {
    NodeV1& n = emit(node, "fc", {ref_of(node, node.input(0)).ref}, {node.output(0)});
    n.units = b[1];
    name_fc_weight(n, node.input(1), /*read_nk=*/false);
    return;
  }
  if (a_active && b_active && a.size() == b.size() && a.size() >= 2 && std::equal(a.begin(), a.end() - 2, b.begin())) {
    emit(node, "matmul", {ref_of(node, node.input(0)).ref, ref_of(node, node.input(1)).ref}, {node.output(0)});
    return;
  }
  lower_einsum_matmul(node, false, false);
}

bool Lowerer::lower_einsum_matmul(const onnx::NodeProto& node, bool trans_a, bool trans_b) {
  std::optional<std::string> equation =
      matmul_equation(shape_of(node, node.input(0)), shape_of(node, node.input(1)), trans_a, trans_b);
  if (!equation) {
    unsupported(node, "operands of rank < 2 or broadcast batch dimensions");
    return false;
  }
  // An operand that is a Transpose of a parameter is read as the model holds
  // the parameter, with its letters permuted: "bkn" on a view with perm
  // [0, 2, 1] reads the parameter as "bnk". The einsum computes the same.
  const size_t arrow = equation->find("->");
  std::string terms[2] = {equation->substr(0, equation->find(',')),
                          equation->substr(equation->find(',') + 1, arrow - equation->find(',') - 1)};
  std::vector<std::string> inputs;
  for (size_t j = 0; j < 2; ++j) {
    const std::string& tensor = node.input(static_cast<int>(j));
    auto parameter = parameters_.find(tensor);
    if (is_active(tensor) || parameter == parameters_.end() || parameter->second.as_held() ||
        parameter->second.perm.size() != terms[j].size()) {
      inputs.push_back(ref_of(node, tensor).ref);
      continue;
    }
    std::string held(terms[j].size(), '?');
    for (size_t i = 0; i < terms[j].size(); ++i) held[static_cast<size_t>(parameter->second.perm[i])] = terms[j][i];
    terms[j] = held;
    inputs.push_back(parameter_tensor(node, parameter->second));
  }
  NodeV1& n = emit(node, "einsum", inputs, {node.output(0)});
  n.equation = terms[0] + "," + terms[1] + equation->substr(arrow);
  return true;
}

std::vector<LoweringEntry> matmul_lowerings() {
  return {
      {"Gemm", &Lowerer::lower_gemm},
      {"MatMul", &Lowerer::lower_matmul}};
}

}  // namespace pase
