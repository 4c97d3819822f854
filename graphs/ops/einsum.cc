// The GEMM family written as two-operand einsums: einsum, matmul (batched
// "…mk,…kn->…mn"), embedding (a one-hot (b, s, V) times the (V, D) table,
// "abc,cd->abd") and contraction (an einsum whose m, n, reduction or batch
// group may be empty, "te,etd->td"). Domain: the output letters, then the
// reduction letters.
#include <map>
#include <stdexcept>

#include "base/check.h"
#include "graphs/einsum.h"
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

// Sizes each letter from the operands' shapes; `field` is where a mismatch is reported.
Shape einsum_output(const NodeContext& node, const EinsumSpec& spec, const std::string& field) {
  std::map<char, int64_t> size;
  const std::string* terms[2] = {&spec.lhs, &spec.rhs};
  for (size_t t = 0; t < 2; ++t) {
    const std::string& term = *terms[t];
    const Shape& shape = node.input(t);
    if (term.size() != shape.size())
      node.fail(field, "operand " + std::to_string(t) + " '" + term + "' has " + std::to_string(term.size()) +
                           " letters but '" + node.node().inputs[t] + "' has shape " + shape_to_string(shape));
    for (size_t d = 0; d < term.size(); ++d) {
      auto [it, inserted] = size.emplace(term[d], shape[d]);
      if (!inserted && it->second != shape[d])
        node.fail(field, "shape mismatch: letter '" + std::string(1, term[d]) + "' is " + std::to_string(it->second) +
                             " in operand 0 but " + std::to_string(shape[d]) + " in operand 1 ('" + node.node().inputs[t] +
                             "' is " + shape_to_string(shape) + ")");
    }
  }
  Shape out;
  for (char c : spec.out) out.push_back(size[c]);
  return node.checked(field, out);
}

using EquationParser = EinsumSpec (*)(const std::string&);

std::vector<Vertex> infer_with_equation(const NodeContext& node, Vertex v, const std::string& field,
                                        EquationParser parse = parse_einsum) {
  EinsumSpec spec;
  try {
    spec = parse(v.equation);
  } catch (const std::invalid_argument& error) {
    node.fail("equation", "'" + v.equation + "': " + error.what());
  }
  v.outputs = {einsum_output(node, spec, field)};
  return lowered_to(std::move(v));
}

std::vector<Vertex> infer_einsum(const NodeContext& node, Vertex v) {
  v.equation = node.required(node.node().equation, "equation");
  return infer_with_equation(node, std::move(v), "equation");
}

// The graph format's einsum has an m and an n side (parse_einsum refuses
// others); the extension op takes any equation the GEMM formula can price.
std::vector<Vertex> infer_contraction(const NodeContext& node, Vertex v) {
  v.equation = node.required(node.node().equation, "equation");
  return infer_with_equation(node, std::move(v), "equation", parse_contraction);
}

std::vector<Vertex> infer_matmul(const NodeContext& node, Vertex v) {
  const Shape& a = node.input(0);
  const Shape& b = node.input(1);
  if (a.size() < 2 || a.size() != b.size() || a.size() > 20)
    node.fail("inputs", "matmul needs two operands of the same rank >= 2, got " + shape_to_string(a) + " and " +
                            shape_to_string(b));
  std::string batch;
  for (size_t d = 0; d + 2 < a.size(); ++d) batch += static_cast<char>('a' + d);
  v.equation = batch + "mk," + batch + "kn->" + batch + "mn";
  return infer_with_equation(node, std::move(v), "inputs");
}

// The ids are a graph input (tokens) or computed (a router's top-k experts).
std::vector<Vertex> infer_embedding(const NodeContext& node, Vertex v) {
  node.expect_rank(0, 2, "batch, sequence");
  v.vocab = node.required(node.node().vocab, "vocab");
  v.dim = node.required(node.node().dim, "dim");
  v.equation = "abc,cd->abd";
  const Shape& ids = node.input(0);
  node.check_weight("vocab", {v.vocab, v.dim});
  v.outputs = {node.checked("dim", {ids[0], ids[1], v.dim})};
  return lowered_to(std::move(v));
}

// Shared by the four: the einsum's domain, port maps and GEMM roles over
// the operand shapes (embedding's are the one-hot and the table). An empty
// group gives an empty index list, which the GEMM cost reads as extent 1.
VertexModel einsum_model(const Vertex& v, const Shape& lhs_shape, const Shape& rhs_shape) {
  // Validated, by the op's own parser, when the graph was built; only a
  // contraction may leave the m or n side empty.
  EinsumSpec spec = parse_contraction(v.equation);
  PASE_ASSERT(v.kind == OpKind::Contraction || is_gemm_einsum(spec), v.equation, static_cast<int>(v.kind));
  VertexModel m;
  m.kind = v.kind;
  m.letters = spec.domain;
  const std::string operands[2] = {spec.lhs, spec.rhs};
  const Shape* shapes[2] = {&lhs_shape, &rhs_shape};
  for (char c : spec.domain)
    for (int t = 0; t < 2; ++t) {
      auto at = operands[t].find(c);
      if (at != std::string::npos) {
        m.domain.push_back((*shapes[t])[at]);
        break;
      }
    }
  m.splittable.assign(m.domain.size(), 1);
  m.inputs = {letters_map(spec.lhs, spec.domain), letters_map(spec.rhs, spec.domain)};
  m.outputs = {letters_map(spec.out, spec.domain)};
  m.work.batch = indices_of(spec.batch, spec.domain);
  m.work.m = indices_of(spec.m_letters, spec.domain);
  m.work.n = indices_of(spec.n_letters, spec.domain);
  m.work.k = indices_of(spec.reduction, spec.domain);
  m.work.pointwise = static_cast<double>(v.pointwise);
  return m;
}

VertexModel model_einsum(const Vertex& v) { return einsum_model(v, v.inputs[0].shape, v.inputs[1].shape); }

VertexModel model_embedding(const Vertex& v) {
  const Shape& ids = v.inputs[0].shape;
  VertexModel m = einsum_model(v, {ids[0], ids[1], v.vocab}, {v.vocab, v.dim});
  m.inputs = {letters_map("ab", m.letters)};  // the ids are the one-hot's first two letters
  m.weights = {{"table", {v.vocab, v.dim}, letters_map("cd", m.letters)}};
  m.work.pointwise = 0;
  return m;
}

// The output's first letter is the batch in most equations, but not in a
// stacked projection like "sble,shek->sbhlk", where 'b' is.
int batch_letter(const Vertex&, const VertexModel& m) {
  auto at = m.letters.find('b');
  return at == std::string::npos ? 0 : static_cast<int>(at);
}

// Megatron's column/row-parallel projections: one model letter per einsum, heads first.
int head_or_feature_letter(const Vertex&, const VertexModel& m) {
  for (char letter : {'h', 'f', 'v'}) {
    auto at = m.letters.find(letter);
    if (at != std::string::npos) return static_cast<int>(at);
  }
  return -1;
}

int vocabulary_letter(const Vertex&, const VertexModel& m) { return static_cast<int>(m.letters.find('c')); }

}  // namespace

OpDefinition einsum() {
  return OpDefinition("einsum", OpKind::Einsum).fields({"equation"}, {"pointwise"}).inputs(2, 2).infers(infer_einsum)
      .models(model_einsum).works(describe_gemm).batch_role(batch_letter).tensor_parallel_role(head_or_feature_letter);
}

OpDefinition matmul() {
  return OpDefinition("matmul", OpKind::Matmul).fields({}, {"pointwise"}).inputs(2, 2).infers(infer_matmul)
      .models(model_einsum).works(describe_gemm).batch_role(batch_letter);
}

OpDefinition contraction() {
  // The roles are einsum's, so baselines treat an equation alike under either op.
  return OpDefinition("contraction", OpKind::Contraction).fields({"equation"}, {"pointwise"}).inputs(2, 2)
      .infers(infer_contraction).models(model_einsum).works(describe_gemm).batch_role(batch_letter)
      .tensor_parallel_role(head_or_feature_letter);
}

OpDefinition embedding() {
  // Vocabulary-parallel for Megatron: "abc,cd->abd" split on c.
  return OpDefinition("embedding", OpKind::Embedding).fields({"vocab", "dim"}, {"weights"}).infers(infer_embedding)
      .models(model_embedding).works(describe_gemm).tensor_parallel_role(vocabulary_letter);
}

}  // namespace pase::ops
