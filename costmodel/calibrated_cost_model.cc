#include "costmodel/calibrated_cost_model.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "costmodel/costs.h"

namespace pase {
namespace {

// Per-device elements of a vertex's whole domain.
double domain_elements(const VertexModel& model, const int32_t* config) {
  double e = 1;
  for (int d = 0; d < static_cast<int>(model.domain.size()); ++d) e *= per_device(model, config, d);
  return e;
}

// Element reads and writes per element of a norm, batchnorm or rmsnorm over
// forward and backward, as fused framework kernels run them: forward reads x
// for the statistics and again to normalise, and writes y (3); backward
// reads x and dy for its two reductions, reads both again and writes dx (5).
constexpr double kNormalizationAccesses = 8;
// Softmax: forward reads x for max and sum, reads it again and writes y (3);
// backward reads y and dy and writes dx (3).
constexpr double kSoftmaxAccesses = 6;

}  // namespace

std::array<GemmCall, 3> training_gemms(const GemmShape& g) {
  // Y[m,n] = X[m,k]·W[k,n]; dX = dY·Wᵀ; dW = Xᵀ·dY.
  return {GemmCall{GemmLayout::NN, g.m, g.n, g.k}, GemmCall{GemmLayout::NT, g.m, g.k, g.n},
          GemmCall{GemmLayout::TN, g.k, g.n, g.m}};
}

double default_gemm_efficiency(double m, double n, double k) {
  auto fill = [](double x) { return x / (x + kGemmHalfSize); };
  return kGemmPeakEfficiency * fill(m) * fill(n) * fill(k);
}

CalibratedCostModel::CalibratedCostModel(MachineProfile profile, int64_t devices, CalibratedOptions options)
    : profile_(std::move(profile)), devices_(devices), options_(options) {
  peak_ = peak_flops_for(profile_, options_.dtype);
  bytes_ = static_cast<double>(dtype_bytes(options_.dtype));
}

Machine CalibratedCostModel::machine() const {
  Machine m;
  m.devices = devices_;
  m.flops_tflops = peak_ / 1e12;
  m.bandwidth_gbps = profile_.intra_node.bandwidth / 1e9;
  return m;
}

double CalibratedCostModel::gemm_seconds(const GemmCall& call, double batch) const {
  const double flop = 2.0 * call.m * call.n * call.k;
  // A measured table holds SGEMM rates: it prices fp32 exactly as measured.
  if (profile_.gemm && options_.dtype == Dtype::Fp32)
    return batch * flop / achieved_flops(profile_, call.layout, call.m, call.n, call.k);
  // Otherwise a roofline on the default curve: the kernel is bound by its
  // arithmetic or by reading A and B and writing C, plus its fixed cost. The
  // instances of a batched GEMM (attention's heads) are tiles of one kernel,
  // so they fill the device as more rows would.
  const double compute = batch * flop / (peak_ * default_gemm_efficiency(batch * call.m, call.n, call.k));
  const double traffic = batch * memory_seconds(call.m * call.k + call.k * call.n + call.m * call.n);
  return kKernelSeconds + std::max(compute, traffic);
}

double CalibratedCostModel::memory_seconds(double accesses) const {
  return accesses * bytes_ / (profile_.memory_bandwidth * kMemoryEfficiency);
}

double CalibratedCostModel::fp32_op_seconds(double accesses, double elements) const {
  if (bytes_ >= 4) return memory_seconds(accesses);
  // PyTorch's autocast keeps normalization, softmax and the loss in FP32
  // (its "autocast to float32" list): a 2-byte input is cast to 4 bytes
  // (read 2, write 4), the op runs on 4-byte elements, and its output is cast
  // back for the next GEMM; backward casts the gradients the same two ways.
  return 4 * kKernelSeconds +
         (accesses * 4 + 4 * (2 + 4) * elements) / (profile_.memory_bandwidth * kMemoryEfficiency);
}

const LinkSpec& CalibratedCostModel::link(double group) const {
  // Devices are numbered node-major and a q-way group holds q consecutive
  // devices, so it stays inside one node exactly when q <= devices_per_node.
  return group <= static_cast<double>(profile_.devices_per_node) ? profile_.intra_node : profile_.inter_node;
}

double CalibratedCostModel::ring_seconds(double elements, double group, double latency_share) const {
  if (group <= 1) return 0.0;
  // A ring: 2(q-1) steps, each sending one w/q chunk to the neighbour. A group
  // spanning nodes holds whole nodes; NCCL then runs one ring per GPU of a node
  // (one per network adapter share), each crossing the network once, so the
  // node's whole network bandwidth serves the collective, capped by the
  // intra-node link every ring also crosses.
  const LinkSpec& l = link(group);
  double bandwidth = l.bandwidth;
  if (&l == &profile_.inter_node)
    bandwidth = std::min(profile_.intra_node.bandwidth, static_cast<double>(profile_.devices_per_node) * l.bandwidth);
  return 2.0 * (group - 1.0) * (latency_share * l.latency + elements / group * bytes_ / bandwidth);
}

double CalibratedCostModel::all_reduce_seconds(double elements, double group) const {
  return ring_seconds(elements, group, 1.0);
}

double CalibratedCostModel::gradient_all_reduce_seconds(double elements, double group) const {
  // Frameworks coalesce weight gradients into buckets and all-reduce each
  // bucket once: a small gradient (a batchnorm's γ and β) pays its share of
  // one bucket's latency, not a whole ring's.
  return ring_seconds(elements, group, std::min(1.0, elements * bytes_ / kGradientBucketBytes));
}

double CalibratedCostModel::transfer_seconds(double elements, double group) const {
  if (elements <= 0) return 0.0;
  const LinkSpec& l = link(group);
  return l.latency + elements * bytes_ / l.bandwidth;
}

double CalibratedCostModel::exposed_gradient_seconds(double all_reduce, double backward) const {
  // Frameworks (PyTorch DDP, Horovod, Megatron) start a weight gradient's
  // all-reduce as soon as it is computed and run it beside the rest of the
  // backward pass. Per layer that is approximated by hiding it behind this
  // layer's own backward work: layers of a network are alike enough that the
  // next layer's backward is about as long.
  if (!options_.overlap_gradients) return all_reduce;
  return std::max(0.0, all_reduce - backward);
}

double CalibratedCostModel::gemm_layer_seconds(const GemmShape& g) const {
  const std::array<GemmCall, 3> calls = training_gemms(g);
  const double forward = gemm_seconds(calls[0], g.batch);
  const double backward = gemm_seconds(calls[1], g.batch) + gemm_seconds(calls[2], g.batch);
  // Fused pointwise ops: one read and one write per counted operation.
  const double pointwise = memory_seconds(2 * 3 * g.pointwise * g.batch * g.m * g.n);
  // One collective per gradient carries all Bpp instances, so latency is paid once.
  return forward + backward + pointwise + all_reduce_seconds(g.batch * g.m * g.n, g.ck) +
         all_reduce_seconds(g.batch * g.m * g.k, g.cn) +
         exposed_gradient_seconds(gradient_all_reduce_seconds(g.batch * g.n * g.k, g.cm), backward);
}

double CalibratedCostModel::embedding_seconds(const GemmShape& g) const {
  // A gather, not a one-hot GEMM: m looked-up rows of n features from a shard
  // of k vocabulary rows. Forward reads each row and writes it (2mn); backward
  // zeroes the shard's dense gradient (kn) and adds dy into it (read dy, read
  // and write the row: 3mn). Three kernels.
  const double forward = memory_seconds(2 * g.m * g.n);
  const double backward = memory_seconds(3 * g.m * g.n + g.k * g.n);
  // A vocabulary split (Megatron's VocabParallelEmbedding): each shard writes
  // the rows it owns and zeros elsewhere, and one all-reduce over the shards
  // completes the output; dy is already on every shard. The table's gradient
  // is all-reduced over the batch split like any weight gradient.
  return g.batch * (3 * kKernelSeconds + forward + backward) + all_reduce_seconds(g.batch * g.m * g.n, g.ck) +
         exposed_gradient_seconds(gradient_all_reduce_seconds(g.batch * g.n * g.k, g.cm), g.batch * backward);
}

double CalibratedCostModel::normalization_seconds(const VertexModel& m, const int32_t* c) const {
  const double e = domain_elements(m, c);
  // Batchnorm runs in the training dtype (cuDNN keeps its statistics in FP32);
  // norm and rmsnorm are on autocast's FP32 list.
  const double work = 2 * kKernelSeconds + (m.kind == OpKind::Batchnorm ? memory_seconds(kNormalizationAccesses * e)
                                                                        : fp32_op_seconds(kNormalizationAccesses * e, e));
  const double backward = kKernelSeconds + memory_seconds(5 * e);
  const int rank = static_cast<int>(m.domain.size());
  if (m.kind == OpKind::Batchnorm) {
    // Statistics per channel (dim 1), summed over batch (dim 0) and space
    // (dims 2…): per-device statistics by default, as frameworks compute them
    // without SyncBatchNorm, so the batch split does not reduce; a spatial
    // split always does. Forward reduces (mean, sum of squares), backward
    // (Σdy, Σdy·x̂): two all-reduces of 2·C words. dγ, dβ (2·C words) are
    // weight gradients over every split but the channel's.
    const double channels = rank > 1 ? per_device(m, c, 1) : 1;
    double spatial = 1;
    for (int d = 2; d < rank; ++d) spatial *= c[d];
    const double replicas = static_cast<double>(c[0]) * spatial;
    const double statistics_group = options_.sync_batchnorm ? replicas : spatial;
    return work + 2 * all_reduce_seconds(2 * channels, statistics_group) +
           exposed_gradient_seconds(gradient_all_reduce_seconds(2 * channels, replicas), backward);
  }
  // norm (LayerNorm) and rmsnorm over `axis`: statistics per row, reduced over
  // the axis's split (norm: two forward and two backward, rmsnorm: one each);
  // the parameters (norm: γ, β; rmsnorm: γ) follow the axis and are weight
  // gradients over the other splits.
  const int axis = m.work.axis;
  const double x_axis = per_device(m, c, axis);
  double others = 1;
  for (int d = 0; d < rank; ++d)
    if (d != axis) others *= c[d];
  const double statistics = m.kind == OpKind::RmsNorm ? 2 : 4;
  const double parameters = m.kind == OpKind::RmsNorm ? 1 : 2;
  return work + statistics * all_reduce_seconds(e / x_axis, c[axis]) +
         exposed_gradient_seconds(gradient_all_reduce_seconds(parameters * x_axis, others), backward);
}

double CalibratedCostModel::work_seconds(const LayerWork& work, double accesses) const {
  // Memory-bound work as forward and backward kernels; the halo and
  // transfers pay the latency and bandwidth of the link their group crosses.
  double time = accesses > 0 ? 2 * kKernelSeconds + memory_seconds(accesses) : 0.0;
  if (work.has_gemm) time += gemm_layer_seconds(work.gemm);
  if (work.has_halo)
    time += transfer_seconds(work.halo.batch * work.halo.channels * work.halo.added_area, work.halo.group);
  for (const AllReduceWork& ar : work.all_reduces) time += ar.times * all_reduce_seconds(ar.words, ar.group);
  for (const TransferWork& t : work.transfers) time += t.times * transfer_seconds(t.words, t.group);
  return time;
}

double CalibratedCostModel::layer(const VertexModel& model, const int32_t* config) const {
  switch (model.kind) {
    case OpKind::Batchnorm:
    case OpKind::Norm:
    case OpKind::RmsNorm: return normalization_seconds(model, config);
    case OpKind::Embedding: return embedding_seconds(gemm_shape(model, config));
    case OpKind::Softmax: {
      // Statistics per row (max and sum forward, one sum backward), reduced over the axis's split.
      const double e = domain_elements(model, config);
      const int axis = model.work.axis;
      return 2 * kKernelSeconds + fp32_op_seconds(kSoftmaxAccesses * e, e) +
             3 * all_reduce_seconds(e / per_device(model, config, axis), config[axis]);
    }
    case OpKind::Elementwise: {
      // Forward reads every input and writes the output; backward reads dy
      // and writes each input's gradient; a fused op adds a read and a write.
      const double inputs = static_cast<double>(model.inputs.size());
      const double e = domain_elements(model, config);
      return work_seconds(LayerWork{}, (2 * (inputs + 1) + 2 * model.work.pointwise) * e);
    }
    case OpKind::SoftmaxXent: {
      // The loss, on autocast's FP32 list: its counted operations as below.
      const LayerWork work = describe_work(model, config);
      return work_seconds(work, 0) + 2 * kKernelSeconds +
             fp32_op_seconds(2 * work.pointwise, domain_elements(model, config));
    }
    default: {
      // Everything else as the `pase` model describes it; each counted
      // operation reads and writes one element.
      const LayerWork work = describe_work(model, config);
      return work_seconds(work, 2 * work.pointwise);
    }
  }
}

// layer() split into its parts, branch by branch in the same order (the
// `pase` model's work_terms names them alike). A gradient all-reduce counts
// only what the backward pass does not hide.
namespace {

void add_communication(CostTerms& terms, CostTermKind kind, const std::string& what, double cost, double words,
                       double group, double times) {
  if (group > 1 || cost > 0) terms.push_back({kind, what, cost, words, group, times});
}

}  // namespace

void CalibratedCostModel::append_work_terms(const LayerWork& work, double accesses, double extra_compute,
                                            CostTerms& terms) const {
  double compute = extra_compute + (accesses > 0 ? 2 * kKernelSeconds + memory_seconds(accesses) : 0.0);
  double backward = 0;
  if (work.has_gemm) {
    const GemmShape& g = work.gemm;
    const std::array<GemmCall, 3> calls = training_gemms(g);
    backward = gemm_seconds(calls[1], g.batch) + gemm_seconds(calls[2], g.batch);
    compute += gemm_seconds(calls[0], g.batch) + backward + memory_seconds(2 * 3 * g.pointwise * g.batch * g.m * g.n);
  }
  terms.push_back({CostTermKind::Compute, "compute", compute, 0, 1, 1});
  if (work.has_gemm) {
    const GemmShape& g = work.gemm;
    add_communication(terms, CostTermKind::AllReduce, "output all-reduce",
                      all_reduce_seconds(g.batch * g.m * g.n, g.ck), g.batch * g.m * g.n, g.ck, 1);
    add_communication(terms, CostTermKind::AllReduce, "input-gradient all-reduce",
                      all_reduce_seconds(g.batch * g.m * g.k, g.cn), g.batch * g.m * g.k, g.cn, 1);
    add_communication(terms, CostTermKind::AllReduce, "weight-gradient all-reduce (not hidden by backward)",
                      exposed_gradient_seconds(gradient_all_reduce_seconds(g.batch * g.n * g.k, g.cm), backward),
                      g.batch * g.n * g.k, g.cm, 1);
  }
  if (work.has_halo) {
    const double words = work.halo.batch * work.halo.channels * work.halo.added_area;
    if (words > 0)
      terms.push_back({CostTermKind::Halo, "pooling halo", transfer_seconds(words, work.halo.group), words,
                       work.halo.group, 1});
  }
  for (const AllReduceWork& ar : work.all_reduces)
    add_communication(terms, CostTermKind::AllReduce, std::string(ar.what) + " all-reduce",
                      ar.times * all_reduce_seconds(ar.words, ar.group), ar.words, ar.group, ar.times);
  for (const TransferWork& t : work.transfers)
    if (t.words > 0)
      terms.push_back({CostTermKind::Transfer, std::string(t.what) + " transfer",
                       t.times * transfer_seconds(t.words, t.group), t.words, t.group, t.times});
}

CostTerms CalibratedCostModel::layer_terms(const VertexModel& model, const int32_t* config) const {
  CostTerms terms;
  switch (model.kind) {
    case OpKind::Batchnorm:
    case OpKind::Norm:
    case OpKind::RmsNorm: {
      // As normalization_seconds.
      const double e = domain_elements(model, config);
      const bool batchnorm = model.kind == OpKind::Batchnorm;
      const double compute = 2 * kKernelSeconds + (batchnorm ? memory_seconds(kNormalizationAccesses * e)
                                                             : fp32_op_seconds(kNormalizationAccesses * e, e));
      const double backward = kKernelSeconds + memory_seconds(5 * e);
      terms.push_back({CostTermKind::Compute, "compute", compute, 0, 1, 1});
      const int rank = static_cast<int>(model.domain.size());
      if (batchnorm) {
        const double channels = rank > 1 ? per_device(model, config, 1) : 1;
        double spatial = 1;
        for (int d = 2; d < rank; ++d) spatial *= config[d];
        const double replicas = static_cast<double>(config[0]) * spatial;
        const double statistics_group = options_.sync_batchnorm ? replicas : spatial;
        add_communication(terms, CostTermKind::AllReduce, "batchnorm statistics all-reduce",
                          2 * all_reduce_seconds(2 * channels, statistics_group), 2 * channels, statistics_group, 2);
        add_communication(terms, CostTermKind::AllReduce, "weight-gradient all-reduce (not hidden by backward)",
                          exposed_gradient_seconds(gradient_all_reduce_seconds(2 * channels, replicas), backward),
                          2 * channels, replicas, 1);
        return terms;
      }
      const int axis = model.work.axis;
      const double x_axis = per_device(model, config, axis);
      double others = 1;
      for (int d = 0; d < rank; ++d)
        if (d != axis) others *= config[d];
      const double statistics = model.kind == OpKind::RmsNorm ? 2 : 4;
      const double parameters = model.kind == OpKind::RmsNorm ? 1 : 2;
      add_communication(terms, CostTermKind::AllReduce, "row statistics all-reduce",
                        statistics * all_reduce_seconds(e / x_axis, config[axis]), e / x_axis, config[axis],
                        statistics);
      add_communication(terms, CostTermKind::AllReduce, "weight-gradient all-reduce (not hidden by backward)",
                        exposed_gradient_seconds(gradient_all_reduce_seconds(parameters * x_axis, others), backward),
                        parameters * x_axis, others, 1);
      return terms;
    }
    case OpKind::Embedding: {
      // As embedding_seconds.
      const GemmShape g = gemm_shape(model, config);
      const double forward = memory_seconds(2 * g.m * g.n);
      const double backward = memory_seconds(3 * g.m * g.n + g.k * g.n);
      terms.push_back({CostTermKind::Compute, "compute", g.batch * (3 * kKernelSeconds + forward + backward), 0, 1, 1});
      add_communication(terms, CostTermKind::AllReduce, "vocabulary-split output all-reduce",
                        all_reduce_seconds(g.batch * g.m * g.n, g.ck), g.batch * g.m * g.n, g.ck, 1);
      add_communication(terms, CostTermKind::AllReduce, "weight-gradient all-reduce (not hidden by backward)",
                        exposed_gradient_seconds(gradient_all_reduce_seconds(g.batch * g.n * g.k, g.cm),
                                                 g.batch * backward),
                        g.batch * g.n * g.k, g.cm, 1);
      return terms;
    }
    case OpKind::Softmax: {
      const double e = domain_elements(model, config);
      const int axis = model.work.axis;
      const double rows = e / per_device(model, config, axis);
      terms.push_back({CostTermKind::Compute, "compute", 2 * kKernelSeconds + fp32_op_seconds(kSoftmaxAccesses * e, e), 0, 1, 1});
      add_communication(terms, CostTermKind::AllReduce, "softmax max and sum all-reduce",
                        3 * all_reduce_seconds(rows, config[axis]), rows, config[axis], 3);
      return terms;
    }
    case OpKind::Elementwise: {
      const double inputs = static_cast<double>(model.inputs.size());
      const double e = domain_elements(model, config);
      append_work_terms(LayerWork{}, (2 * (inputs + 1) + 2 * model.work.pointwise) * e, 0.0, terms);
      return terms;
    }
    case OpKind::SoftmaxXent: {
      const LayerWork work = describe_work(model, config);
      append_work_terms(work, 0, 2 * kKernelSeconds + fp32_op_seconds(2 * work.pointwise, domain_elements(model, config)),
                        terms);
      return terms;
    }
    default: {
      const LayerWork work = describe_work(model, config);
      append_work_terms(work, 2 * work.pointwise, 0.0, terms);
      return terms;
    }
  }
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
