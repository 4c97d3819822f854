// fc: a fully connected layer over the last dimension. x = (x1…x_{q-1}, K),
// weight (N, K) or, with weight_layout "kn", (K, N): domain (x1…x_{q-1}, N, K),
// a GEMM with m = the x dims.
#include "graphs/ops/ops.h"

namespace pase::ops {
namespace {

std::vector<Vertex> infer(const NodeContext& node, Vertex v) {
  const Shape& x = node.input(0);
  if (x.size() < 2) node.expect_rank(0, 2, "batch dims then features");
  v.units = node.required(node.node().units, "units");
  v.weight_kn = node.node().weight_layout.value_or("nk") == "kn";
  Shape out = x;
  out.back() = v.units;
  v.outputs = {node.checked("units", out)};
  node.check_weight("units", {v.units, x.back()});
  return lowered_to(std::move(v));
}

VertexModel model(const Vertex& v) {
  const Shape& x = v.inputs[0].shape;
  const size_t q = x.size();
  VertexModel m;
  m.kind = v.kind;
  m.domain.assign(x.begin(), x.end() - 1);
  m.domain.push_back(v.units);
  m.domain.push_back(x.back());
  static const std::string batch_letters = "bstuvwxyzacdefghij";
  for (size_t i = 0; i + 1 < q; ++i) m.letters += i < batch_letters.size() ? batch_letters[i] : '?';
  m.letters += "nk";
  m.splittable.assign(m.domain.size(), 1);
  SplitMap in, out;
  for (size_t i = 0; i + 1 < q; ++i) {
    in.push_back({static_cast<int>(i)});
    out.push_back({static_cast<int>(i)});
    m.work.m.push_back(static_cast<int>(i));
  }
  const int n_dim = static_cast<int>(q - 1), k_dim = static_cast<int>(q);
  in.push_back({k_dim});
  out.push_back({n_dim});
  m.inputs = {in};
  m.outputs = {out};
  // (N, K) as PyTorch's Linear holds it, or (K, N) as TensorFlow's Dense and a
  // MatMul on a stored [K, N] matrix do: the layout follows the model, the GEMM is the same.
  if (v.weight_kn) m.weights = {{"weight", {x.back(), v.units}, {{k_dim}, {n_dim}}}};
  else m.weights = {{"weight", {v.units, x.back()}, {{n_dim}, {k_dim}}}};
  m.work.n = {n_dim};
  m.work.k = {k_dim};
  m.work.pointwise = static_cast<double>(v.pointwise);
  return m;
}

int units_dim(const Vertex&, const VertexModel& m) { return static_cast<int>(m.domain.size()) - 2; }  // (x…, N, K)

}  // namespace

OpDefinition fc() {
  return OpDefinition("fc", OpKind::Fc)
      .fields({"units"}, {"pointwise", "weights", "weight_layout"})
      .infers(infer)
      .models(model)
      .works(describe_gemm)
      .owt_role(units_dim);
}

}  // namespace pase::ops
