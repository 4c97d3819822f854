#include "costmodel/costs.h"

#include <algorithm>

namespace pase {

double all_reduce(double words, double devices, double r) {
  if (devices <= 1) return 0.0;
  return r * (words / devices) * 2.0 * (devices - 1.0);
}

double redistribution_words(const Shape& tensor, const int64_t* a, const int64_t* b) {
  double need = 1.0, overlap = 1.0;
  int64_t parts_a = 1, parts_b = 1;
  for (size_t i = 0; i < tensor.size(); ++i) {
    double extent = static_cast<double>(tensor[i]);
    need *= extent / static_cast<double>(b[i]);
    overlap *= std::min(extent / static_cast<double>(a[i]), extent / static_cast<double>(b[i]));
    parts_a *= a[i];
    parts_b *= b[i];
  }
  if (parts_b > parts_a) overlap = 0.0;
  return std::max(0.0, need - overlap);
}

double redistribution_cost(const Shape& tensor, const int64_t* a, const int64_t* b, double r) {
  return r * 2.0 * redistribution_words(tensor, a, b);
}

void tensor_split(const SplitMap& map, const int32_t* config, int64_t* split_out) {
  for (size_t i = 0; i < map.size(); ++i) {
    int64_t split = 1;
    for (int d : map[i]) split *= config[d];
    split_out[i] = split;
  }
}

namespace {

double splits_except(const int32_t* c, int rank, int skip) {
  double product = 1;
  for (int d = 0; d < rank; ++d)
    if (d != skip) product *= c[d];
  return product;
}

double per_device(const VertexModel& m, const int32_t* c, int d) {
  return static_cast<double>(m.domain[d]) / static_cast<double>(c[d]);
}

double gemm_cost(const VertexModel& model, const int32_t* c, double r) {
  const LayerCostSpec& s = model.cost;
  double batch = 1, m = 1, n = s.n_scale, k = s.k_scale, cm = 1, cn = 1, ck = 1;
  for (int d : s.batch) batch *= per_device(model, c, d);
  for (int d : s.m) m *= per_device(model, c, d), cm *= c[d];
  for (int d : s.n) n *= per_device(model, c, d), cn *= c[d];
  for (int d : s.k) k *= per_device(model, c, d), ck *= c[d];
  double cost = batch * (3 * m * n * k + 3 * s.pointwise * m * n + all_reduce(m * n, ck, r) + all_reduce(m * k, cn, r) +
                         all_reduce(n * k, cm, r));
  if (s.lstm_state_exchange) {
    // Each step, each layer: the (b, U) hidden state is produced split (cb, cn) but
    // the next step's GEMM needs it split (cb, ck).
    const int layers = 0, steps = 1, batch_dim = 2, n_dim = 3, k_dim = 4;
    Shape state = {model.domain[batch_dim], model.domain[n_dim]};
    int64_t held[2] = {c[batch_dim], c[n_dim]};
    int64_t needed[2] = {c[batch_dim], c[k_dim]};
    cost += static_cast<double>(model.domain[layers]) * static_cast<double>(model.domain[steps]) * r *
            redistribution_words(state, held, needed);
  }
  return cost;
}

}  // namespace

double layer_cost(const VertexModel& model, const int32_t* c, double r) {
  const LayerCostSpec& s = model.cost;
  const int rank = static_cast<int>(model.domain.size());
  double elements = 1;
  for (int d = 0; d < rank; ++d) elements *= per_device(model, c, d);
  switch (s.kind) {
    case LayerCostSpec::Kind::Zero:
      return 0.0;
    case LayerCostSpec::Kind::Gemm:
      return gemm_cost(model, c, r);
    case LayerCostSpec::Kind::Pool: {
      // Domain (b, c, ho, wo); the halo is measured on the INPUT height and width.
      double h = s.in_h / c[2], w = s.in_w / c[3];
      double grown_h = h + (c[2] > 1 ? s.window_r : 0.0), grown_w = w + (c[3] > 1 ? s.window_s : 0.0);
      double halo = r * per_device(model, c, 0) * per_device(model, c, 1) * (grown_h * grown_w - h * w);
      return elements + halo;
    }
    case LayerCostSpec::Kind::Elementwise:
      return (1.0 + s.pointwise) * elements;
    case LayerCostSpec::Kind::Norm: {
      double x_axis = per_device(model, c, s.axis);
      double others = splits_except(c, rank, s.axis);
      return 16 * elements + 4 * all_reduce(elements / x_axis, c[s.axis], r) + 4 * all_reduce(x_axis, others, r);
    }
    case LayerCostSpec::Kind::Softmax: {
      double f = elements / per_device(model, c, s.axis);
      double d_axis = static_cast<double>(model.domain[s.axis]);
      return 4 * elements + elements * d_axis + 2 * all_reduce(f, c[s.axis], r) + all_reduce(f * d_axis, c[s.axis], r);
    }
    case LayerCostSpec::Kind::SoftmaxXent: {
      double beta = elements / per_device(model, c, rank - 1);
      return 4 * elements + 2 * beta + (c[rank - 1] > 1 ? 2 * r * beta : 0.0);
    }
    case LayerCostSpec::Kind::ReduceMean: {
      double reduced = 1;
      for (int d : s.axes) reduced *= c[d];
      return all_reduce(elements, reduced, r);
    }
  }
  return 0.0;
}

}  // namespace pase

#include "costmodel/cost_model.h"

namespace pase {

double PaseCostModel::layer(const VertexModel& model, const int32_t* config) const {
  return layer_cost(model, config, machine_.word_cost());
}

double PaseCostModel::redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const {
  return redistribution_cost(tensor, a, b, machine_.word_cost());
}

void CostModel::redistribution_matrix(const Shape& tensor, const std::vector<std::vector<int64_t>>& a,
                                      const std::vector<std::vector<int64_t>>& b, double* out) const {
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) out[i * b.size() + j] = redistribution(tensor, a[i].data(), b[j].data());
}

void PaseCostModel::redistribution_matrix(const Shape& tensor, const std::vector<std::vector<int64_t>>& a,
                                          const std::vector<std::vector<int64_t>>& b, double* out) const {
  // Per-split extents and products once per class, so a pair costs `rank`
  // mins and multiplies. Same operations in the same order as
  // redistribution_words, hence the same values bit for bit.
  const size_t rank = tensor.size();
  auto extents = [&](const std::vector<std::vector<int64_t>>& splits, std::vector<double>& ext, std::vector<int64_t>& parts) {
    ext.resize(splits.size() * rank);
    parts.resize(splits.size());
    for (size_t c = 0; c < splits.size(); ++c) {
      int64_t product = 1;
      for (size_t i = 0; i < rank; ++i) {
        ext[c * rank + i] = static_cast<double>(tensor[i]) / static_cast<double>(splits[c][i]);
        product *= splits[c][i];
      }
      parts[c] = product;
    }
  };
  std::vector<double> a_ext, b_ext;
  std::vector<int64_t> a_parts, b_parts;
  extents(a, a_ext, a_parts);
  extents(b, b_ext, b_parts);
  std::vector<double> need(b.size());
  for (size_t j = 0; j < b.size(); ++j) {
    double product = 1.0;
    for (size_t i = 0; i < rank; ++i) product *= b_ext[j * rank + i];
    need[j] = product;
  }
  const double r = machine_.word_cost();
  for (size_t i = 0; i < a.size(); ++i) {
    const double* x = a_ext.data() + i * rank;
    for (size_t j = 0; j < b.size(); ++j) {
      const double* y = b_ext.data() + j * rank;
      double overlap = 1.0;
      for (size_t d = 0; d < rank; ++d) overlap *= std::min(x[d], y[d]);
      if (b_parts[j] > a_parts[i]) overlap = 0.0;
      out[i * b.size() + j] = r * 2.0 * std::max(0.0, need[j] - overlap);
    }
  }
}

}  // namespace pase
