#include "costmodel/calibrated_cost_model.h"

#include <algorithm>
#include <utility>

#include "costmodel/costs.h"

namespace pase {
namespace {

double per_device(const VertexModel& m, const int32_t* c, int d) {
  return static_cast<double>(m.domain[d]) / static_cast<double>(c[d]);
}

}  // namespace

GemmShape gemm_shape(const VertexModel& model, const int32_t* c) {
  const LayerCostSpec& s = model.cost;
  GemmShape g;
  g.n = s.n_scale;
  g.k = s.k_scale;
  g.pointwise = s.pointwise;
  for (int d : s.batch) g.batch *= per_device(model, c, d);
  for (int d : s.m) g.m *= per_device(model, c, d), g.cm *= c[d];
  for (int d : s.n) g.n *= per_device(model, c, d), g.cn *= c[d];
  for (int d : s.k) g.k *= per_device(model, c, d), g.ck *= c[d];
  return g;
}

std::array<GemmCall, 3> training_gemms(const GemmShape& g) {
  // Y[m,n] = X[m,k]·W[k,n]; dX = dY·Wᵀ; dW = Xᵀ·dY.
  return {GemmCall{GemmLayout::NN, g.m, g.n, g.k}, GemmCall{GemmLayout::NT, g.m, g.k, g.n},
          GemmCall{GemmLayout::TN, g.k, g.n, g.m}};
}

CalibratedCostModel::CalibratedCostModel(MachineProfile profile, int64_t devices)
    : profile_(std::move(profile)), devices_(devices) {}

Machine CalibratedCostModel::machine() const {
  Machine m;
  m.devices = devices_;
  m.flops_tflops = profile_.peak_flops / 1e12;
  m.bandwidth_gbps = profile_.intra_node.bandwidth / 1e9;
  return m;
}

double CalibratedCostModel::gemm_seconds(const GemmCall& call) const {
  return 2.0 * call.m * call.n * call.k / achieved_flops(profile_, call.layout, call.m, call.n, call.k);
}

double CalibratedCostModel::pointwise_seconds(double ops) const {
  return ops * kBytesPerPointwiseOp / profile_.memory_bandwidth;
}

const LinkSpec& CalibratedCostModel::link(double group) const {
  // Devices are numbered node-major and a q-way group holds q consecutive
  // devices, so it stays inside one node exactly when q <= devices_per_node.
  return group <= static_cast<double>(profile_.devices_per_node) ? profile_.intra_node : profile_.inter_node;
}

double CalibratedCostModel::all_reduce_seconds(double elements, double group) const {
  if (group <= 1) return 0.0;
  // A ring: 2(q-1) steps, each sending one w/q chunk to the neighbour; the
  // slowest link of the ring sets the pace of every step.
  const LinkSpec& l = link(group);
  return 2.0 * (group - 1.0) * (l.latency + elements / group * kBytesPerElement / l.bandwidth);
}

double CalibratedCostModel::transfer_seconds(double elements, double group) const {
  if (elements <= 0) return 0.0;
  const LinkSpec& l = link(group);
  return l.latency + elements * kBytesPerElement / l.bandwidth;
}

double CalibratedCostModel::gemm_layer(const VertexModel& model, const int32_t* c) const {
  GemmShape g = gemm_shape(model, c);
  double compute = 0;
  for (const GemmCall& call : training_gemms(g)) compute += gemm_seconds(call);
  compute += pointwise_seconds(3 * g.pointwise * g.m * g.n);
  // One collective per gradient carries all Bpp instances, so latency is paid once.
  double time = g.batch * compute + all_reduce_seconds(g.batch * g.m * g.n, g.ck) +
                all_reduce_seconds(g.batch * g.m * g.k, g.cn) + all_reduce_seconds(g.batch * g.n * g.k, g.cm);
  if (model.cost.lstm_state_exchange) {
    // As in the pase model: every step of every layer moves the (b, U) state
    // from split (cb, cn) to split (cb, ck).
    const int layers = 0, steps = 1, batch_dim = 2, n_dim = 3, k_dim = 4;
    Shape state = {model.domain[batch_dim], model.domain[n_dim]};
    int64_t held[2] = {c[batch_dim], c[n_dim]};
    int64_t needed[2] = {c[batch_dim], c[k_dim]};
    double group = static_cast<double>(c[batch_dim]) * std::max(c[n_dim], c[k_dim]);
    time += static_cast<double>(model.domain[layers]) * static_cast<double>(model.domain[steps]) *
            transfer_seconds(redistribution_words(state, held, needed), group);
  }
  return time;
}

double CalibratedCostModel::layer(const VertexModel& model, const int32_t* c) const {
  const LayerCostSpec& s = model.cost;
  const int rank = static_cast<int>(model.domain.size());
  double elements = 1, used = 1;
  for (int d = 0; d < rank; ++d) elements *= per_device(model, c, d), used *= c[d];
  switch (s.kind) {
    case LayerCostSpec::Kind::Zero:
      return 0.0;
    case LayerCostSpec::Kind::Gemm:
      return gemm_layer(model, c);
    case LayerCostSpec::Kind::Pool: {
      // The pase halo, in elements, exchanged among the devices the pool uses.
      double h = s.in_h / c[2], w = s.in_w / c[3];
      double grown_h = h + (c[2] > 1 ? s.window_r : 0.0), grown_w = w + (c[3] > 1 ? s.window_s : 0.0);
      double halo = per_device(model, c, 0) * per_device(model, c, 1) * (grown_h * grown_w - h * w);
      return pointwise_seconds(elements) + transfer_seconds(halo, used);
    }
    case LayerCostSpec::Kind::Elementwise:
      return pointwise_seconds((1.0 + s.pointwise) * elements);
    case LayerCostSpec::Kind::Norm: {
      double x_axis = per_device(model, c, s.axis);
      double others = used / c[s.axis];
      return pointwise_seconds(16 * elements) + 4 * all_reduce_seconds(elements / x_axis, c[s.axis]) +
             4 * all_reduce_seconds(x_axis, others);
    }
    case LayerCostSpec::Kind::Softmax: {
      double f = elements / per_device(model, c, s.axis);
      double d_axis = static_cast<double>(model.domain[s.axis]);
      return pointwise_seconds(4 * elements + elements * d_axis) + 2 * all_reduce_seconds(f, c[s.axis]) +
             all_reduce_seconds(f * d_axis, c[s.axis]);
    }
    case LayerCostSpec::Kind::SoftmaxXent: {
      double beta = elements / per_device(model, c, rank - 1);
      double last = c[rank - 1];
      return pointwise_seconds(4 * elements + 2 * beta) + (last > 1 ? 2 * transfer_seconds(beta, last) : 0.0);
    }
    case LayerCostSpec::Kind::ReduceMean: {
      double reduced = 1;
      for (int d : s.axes) reduced *= c[d];
      return all_reduce_seconds(elements, reduced);
    }
  }
  return 0.0;
}

double CalibratedCostModel::redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const {
  double parts_a = 1, parts_b = 1;
  for (size_t i = 0; i < tensor.size(); ++i) parts_a *= static_cast<double>(a[i]), parts_b *= static_cast<double>(b[i]);
  // Forward and backward each move the missing words once.
  return 2.0 * transfer_seconds(redistribution_words(tensor, a, b), std::max(parts_a, parts_b));
}

}  // namespace pase
