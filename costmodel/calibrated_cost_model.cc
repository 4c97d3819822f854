#include "costmodel/calibrated_cost_model.h"

#include <algorithm>
#include <utility>

#include "costmodel/costs.h"

namespace pase {
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

double CalibratedCostModel::gemm_seconds(const GemmShape& g) const {
  double compute = 0;
  for (const GemmCall& call : training_gemms(g)) compute += gemm_seconds(call);
  compute += pointwise_seconds(3 * g.pointwise * g.m * g.n);
  // One collective per gradient carries all Bpp instances, so latency is paid once.
  return g.batch * compute + all_reduce_seconds(g.batch * g.m * g.n, g.ck) +
         all_reduce_seconds(g.batch * g.m * g.k, g.cn) + all_reduce_seconds(g.batch * g.n * g.k, g.cm);
}

double CalibratedCostModel::work_seconds(const LayerWork& work) const {
  // Pointwise work is memory-bound; the halo and transfers pay the latency
  // and bandwidth of the link their group crosses.
  double time = pointwise_seconds(work.pointwise);
  if (work.has_gemm) time += gemm_seconds(work.gemm);
  if (work.has_halo)
    time += transfer_seconds(work.halo.batch * work.halo.channels * work.halo.added_area, work.halo.group);
  for (const AllReduceWork& ar : work.all_reduces) time += ar.times * all_reduce_seconds(ar.words, ar.group);
  for (const TransferWork& t : work.transfers) time += t.times * transfer_seconds(t.words, t.group);
  return time;
}

double CalibratedCostModel::layer(const VertexModel& model, const int32_t* config) const {
  return work_seconds(describe_work(model, config));
}

// The items of work_seconds one by one, in its order (the `pase` model's
// work_terms names them alike).
CostTerms CalibratedCostModel::layer_terms(const VertexModel& model, const int32_t* config) const {
  const LayerWork work = describe_work(model, config);
  CostTerms terms;
  double compute = pointwise_seconds(work.pointwise);
  if (work.has_gemm) {
    double gemm = 0;
    for (const GemmCall& call : training_gemms(work.gemm)) gemm += gemm_seconds(call);
    gemm += pointwise_seconds(3 * work.gemm.pointwise * work.gemm.m * work.gemm.n);
    compute += work.gemm.batch * gemm;
  }
  terms.push_back({CostTermKind::Compute, "compute", compute, 0, 1, 1});
  auto add_all_reduce = [&](const std::string& what, double words, double group, double times) {
    if (group > 1) terms.push_back({CostTermKind::AllReduce, what + " all-reduce", times * all_reduce_seconds(words, group), words, group, times});
  };
  if (work.has_gemm) {
    const GemmShape& g = work.gemm;
    add_all_reduce("output", g.batch * g.m * g.n, g.ck, 1);
    add_all_reduce("input-gradient", g.batch * g.m * g.k, g.cn, 1);
    add_all_reduce("weight-gradient", g.batch * g.n * g.k, g.cm, 1);
  }
  if (work.has_halo) {
    const double words = work.halo.batch * work.halo.channels * work.halo.added_area;
    if (words > 0) terms.push_back({CostTermKind::Halo, "pooling halo", transfer_seconds(words, work.halo.group), words, work.halo.group, 1});
  }
  for (const AllReduceWork& ar : work.all_reduces) add_all_reduce(ar.what, ar.words, ar.group, ar.times);
  for (const TransferWork& t : work.transfers)
    if (t.words > 0)
      terms.push_back({CostTermKind::Transfer, std::string(t.what) + " transfer", t.times * transfer_seconds(t.words, t.group), t.words, t.group, t.times});
  return terms;
}

double CalibratedCostModel::fetch_cost(double words, double group) const {
  return 2.0 * transfer_seconds(words, group);
}

double CalibratedCostModel::redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const {
  double parts_a = 1, parts_b = 1;
  for (size_t i = 0; i < tensor.size(); ++i) parts_a *= static_cast<double>(a[i]), parts_b *= static_cast<double>(b[i]);
  return fetch_cost(redistribution_words(tensor, a, b), std::max(parts_a, parts_b));
}

}  // namespace pase
