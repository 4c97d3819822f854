#include "onnximport/lowering_helpers.h"

#include "graphs/einsum.h"
#include "graphs/op_registry.h"
#include "onnximport/onnx_model.h"

namespace pase {

// The graph format's einsum has at least one m- and one n-letter; a
// contraction without one (te,etd->td, or abcd,bd->ac inside a chain) is the
// extension op `contraction`, priced alike. Keeping every other equation an
// einsum leaves graphs that the format could already carry unchanged.
const char* contraction_op(const std::string& equation) {
  return is_gemm_einsum(parse_contraction(equation)) ? "einsum" : "contraction";
}

// Whether a pase op can absorb a following activation into its `pointwise` count.
bool takes_pointwise(const std::string& op) {
  const OpDefinition* definition = find_op(op);
  return definition != nullptr && op_takes_field(*definition, "pointwise");
}

// Whether a pase op's price already covers a scale and bias applied to its
// output: a normalization's γ and β (a decomposed LayerNorm's Mul and Add)
// are its own parameters, not extra pointwise work.
bool prices_own_affine(const std::string& op) {
  const OpDefinition* definition = find_op(op);
  if (definition == nullptr) return false;
  return definition->kind == OpKind::Norm || definition->kind == OpKind::RmsNorm || definition->kind == OpKind::Batchnorm;
}

// Unary ops whose cost folds into the producer's pointwise count: (op, count).
int pointwise_count(const std::string& op) {
  if (is_one_of(op, {"Identity", "Cast"})) return 0;
  if (is_one_of(op, {"Relu", "LeakyRelu", "Sigmoid", "Tanh", "Erf", "Gelu", "Elu", "Selu", "Softplus", "Softsign",
                     "HardSigmoid", "HardSwish", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Clip", "Dropout",
                     "Sin", "Cos", "Mish", "Celu", "ThresholdedRelu", "Floor", "Ceil", "Round", "Sign", "IsNaN", "IsInf"}))
    return 1;
  return -1;
}

std::string join_shape(const Shape& shape) { return shape_to_string(shape); }

}  // namespace pase
