// Einsum: summed-out letters first, then pairwise contractions.
#include "onnximport/lowerings/lowerings.h"

#include "onnximport/einsum_chain.h"
#include "onnximport/lowering_helpers.h"
#include "onnximport/onnx_model.h"

namespace pase {

// Any Einsum numpy accepts but a diagonal (onnximport/einsum_chain.h): the
// letters one operand alone has summed out, then pairwise contractions
// from the left (each an einsum, or a contraction where a side is empty);
// operands may be activations or parameters as held.
void Lowerer::lower_einsum(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  const std::string equation = string_attribute(node, "equation", "");
  std::vector<Shape> shapes;
  std::vector<size_t> ranks;
  for (const std::string& in : node.input()) {
    shapes.push_back(shape_of(node, in));
    ranks.push_back(shapes.back().size());
  }
  std::vector<EinsumStep> steps;
  std::vector<const char*> ops;  // of each Contract step
  std::map<char, int64_t> size;
  try {
    const EinsumTerms terms = expand_einsum(equation, ranks);
    for (size_t j = 0; j < terms.operands.size(); ++j)
      for (size_t d = 0; d < terms.operands[j].size(); ++d) {
        const char c = terms.operands[j][d];
        auto [it, fresh] = size.emplace(c, shapes[j][d]);
        if (!fresh && it->second != shapes[j][d])
          return unsupported(node, "'" + equation + "': letter '" + std::string(1, c) + "' is " +
                                       std::to_string(it->second) + " in one operand and " + std::to_string(shapes[j][d]) +
                                       " in another (a broadcast size-1 dimension)");
      }
    steps = plan_einsum(terms);
    for (const EinsumStep& step : steps)
      ops.push_back(step.kind == EinsumStep::Kind::Contract ? contraction_op(step.equation) : "");
  } catch (const std::invalid_argument& error) {
    return unsupported(node, "'" + equation + "': " + error.what());
  }
  if (steps.empty()) return alias(node.output(0), ref_of(node, node.input(0)));
  // Vertices before the last: NAME/sumJ sums operand J, NAME/contractJ
  // contracts the result so far with operand J; the last is NAME.
  std::vector<std::string> names;
  for (size_t s = 0; s < steps.size(); ++s) {
    const EinsumStep& step = steps[s];
    NodeV1 n;
    for (int in : step.inputs)
      n.inputs.push_back(in >= 0 ? ref_of(node, node.input(in)).ref : names[static_cast<size_t>(-1 - in)]);
    Shape out;
    for (char c : step.term) out.push_back(size[c]);
    n.outputs = std::vector<Shape>{out};
    std::string suffix;
    if (step.kind == EinsumStep::Kind::Sum) {
      n.op = "reduce_mean";
      n.axes = step.axes;
      suffix = "/sum" + std::to_string(step.operand);
    } else if (step.kind == EinsumStep::Kind::Contract) {
      n.op = ops[s];
      n.equation = step.equation;
      suffix = "/contract" + std::to_string(step.operand);
    } else {
      n.op = "transpose";
      n.perm = step.perm;
      suffix = "/transpose";
    }
    n.name = s + 1 == steps.size() ? claim_name(node) : unique_name(node.name() + suffix);
    names.push_back(n.name);
    result_.graph.nodes.push_back(std::move(n));
  }
  refs_[node.output(0)] = Ref{names.back(), last_node(), {}};
}

std::vector<LoweringEntry> einsum_lowerings() {
  return {
      {"Einsum", &Lowerer::lower_einsum}};
}

}  // namespace pase
