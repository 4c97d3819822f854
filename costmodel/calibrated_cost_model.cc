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
  peak_ = peak_flops_for(profile_, options_.training.dtype);
  bytes_ = static_cast<double>(dtype_bytes(options_.training.dtype));
}

Machine CalibratedCostModel::machine() const {
  Machine m;
  m.devices = devices_;
  m.flops_tflops = peak_ / 1e12;
  m.bandwidth_gbps = profile_.intra_node.bandwidth / 1e9;
  m.profile = profile_.name;
  return m;
}

double CalibratedCostModel::gemm_seconds(const GemmCall& call, double batch) const {
  const double flop = 2.0 * call.m * call.n * call.k;
  // A table measured in this dtype prices the GEMM as measured (its times
  // include the kernel's fixed cost). The instances of a batched GEMM are
  // tiles of one kernel, so they run at the rate of one GEMM of batch·M rows:
  // on an H100, 512 fp32 instances of (256, 256, 64) run at 30 TFLOP/s, where
  // one alone reaches 1.
  if (const GemmTable* table = gemm_table(profile_, options_.training.dtype))
    return batch * flop / interpolate_flops(*table, call.layout, batch * call.m, call.n, call.k);
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

double CalibratedCostModel::update_seconds(double elements) const {
  if (options_.training.optimizer == Optimizer::None) return 0.0;
  // One fused (multi-tensor) kernel steps all weights at once, streaming each
  // weight's state as the memory model lays it out (parameter_element_bytes):
  // it reads the gradient, the FP32 weight (the master copy under 16-bit
  // training) and the moments, and writes the FP32 weight, the moments and,
  // with a master copy, the 16-bit weight the next step computes with.
  // Everything but the 16-bit copy is read and everything but the gradient
  // written: 2·S − gradient − 16-bit copy bytes per weight. Under 16-bit
  // training the loss is scaled, so before the step every gradient is
  // unscaled and checked for inf/NaN (GradScaler.unscale_, apex amp): one
  // more pass reading and writing each gradient, 2·β.
  const double state = static_cast<double>(parameter_element_bytes(options_.training));
  const double copy16 = bytes_ < 4 ? bytes_ : 0.0;
  const double unscale = bytes_ < 4 ? 2 * bytes_ : 0.0;
  return elements * (2 * state - bytes_ - copy16 + unscale) / (profile_.memory_bandwidth * kMemoryEfficiency);
}

double CalibratedCostModel::layout_transpose_seconds(double x, double w, double y) const {
  // cuDNN's tensor-core convolutions (TF32, FP16, BF16) run on NHWC tensors;
  // given NCHW ones it transforms each operand of a call to NHWC and the
  // result back (its "NCHW-to-NHWC transformations"). FP32 convolutions run
  // on CUDA cores in NCHW as stored. A training step makes three calls,
  // forward (x, w -> y), data gradient (dy, w -> dx) and weight gradient
  // (x, dy -> dw), and a tensor of each size (x, w, y or its gradient) is in
  // every call: nine transposes, each a kernel reading and writing every element.
  if (options_.channels_last || options_.training.dtype == Dtype::Fp32) return 0.0;
  return 9 * kKernelSeconds + memory_seconds(3 * 2 * (x + w + y));
}

const LinkSpec& CalibratedCostModel::link(double group, double per_node) const {
  // Known: the group shares one node exactly when all its members are in one.
  if (per_node > 0) return per_node >= group ? profile_.intra_node : profile_.inter_node;
  // Devices are numbered node-major and a q-way group holds q consecutive
  // devices, so it stays inside one node exactly when q <= devices_per_node.
  return group <= static_cast<double>(profile_.devices_per_node) ? profile_.intra_node : profile_.inter_node;
}

double CalibratedCostModel::ring_seconds(double elements, double group, double latency_share, double per_node) const {
  if (group <= 1) return 0.0;
  // A ring: 2(q-1) steps, each sending one w/q chunk to the neighbour. A group
  // spanning nodes with r members in each (whole nodes, r = devices_per_node,
  // when not known): NCCL runs one ring per member (one per network adapter
  // share), each crossing the network once, so r adapters' bandwidth serves
  // the collective (the node's other adapters serve the node's other groups,
  // which run the same collective at the same time), capped by the intra-node
  // link every ring also crosses.
  const LinkSpec& l = link(group, per_node);
  double bandwidth = l.bandwidth;
  if (&l == &profile_.inter_node) {
    const double members = per_node > 0 ? per_node : static_cast<double>(profile_.devices_per_node);
    bandwidth = std::min(profile_.intra_node.bandwidth, members * l.bandwidth);
  }
  return 2.0 * (group - 1.0) * (latency_share * l.latency + elements / group * bytes_ / bandwidth);
}

double CalibratedCostModel::all_reduce_seconds(double elements, double group, double per_node) const {
  return ring_seconds(elements, group, 1.0, per_node);
}

double CalibratedCostModel::bucket_share(double elements) const {
  // Frameworks coalesce weight gradients into buckets and all-reduce each
  // bucket once: a small gradient (a batchnorm's γ and β) pays its share of
  // one bucket's latency, not a whole ring's.
  return std::min(1.0, elements * bytes_ / kGradientBucketBytes);
}

double CalibratedCostModel::gradient_all_reduce_seconds(double elements, double group, double per_node) const {
  return ring_seconds(elements, group, bucket_share(elements), per_node);
}

double CalibratedCostModel::half_ring_seconds(double elements, double group, double latency_share,
                                              double per_node) const {
  // A ring all-reduce is a reduce-scatter then an all-gather, each q-1 of its 2(q-1) steps.
  return 0.5 * ring_seconds(elements, group, latency_share, per_node);
}

double CalibratedCostModel::transfer_seconds(double elements, double group, double per_node) const {
  if (elements <= 0) return 0.0;
  const LinkSpec& l = link(group, per_node);
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

// A layer's price is described once, as its terms in order (`price_layer`
// below), and handed to a sink: layer() adds the costs up on the pricing hot
// path (no strings, no allocation); layer_terms() lists them for
// explanations. A term of zero cost that moves nothing is not emitted.
namespace {

// What layer() sums: the costs only, a micro-batch's terms once per
// micro-batch, and their forward parts again when the layer recomputes.
struct CostSum {
  double micro_batches = 1;
  double step_weight = 1;  // TrainingSetup::step_weight
  double total = 0, forward = 0;
  void operator()(CostTermKind, const char*, const char*, double cost, double, double, double, CostPhase phase,
                  double forward_part) {
    total += phase == CostPhase::Step ? step_weight * cost : micro_batches * cost;
    forward += forward_part;
  }
  [[nodiscard]] double step(bool recompute) const { return recompute ? total + micro_batches * forward : total; }
};

// What layer_terms() lists: each term named "<what><suffix>", over the step,
// and the recomputed forward as one more term.
struct TermList {
  double micro_batches = 1;
  double step_weight = 1;  // as CostSum's
  CostTerms terms;
  double forward = 0;
  void operator()(CostTermKind kind, const char* what, const char* suffix, double cost, double words, double group,
                  double times, CostPhase phase, double forward_part) {
    const double m = phase == CostPhase::Step ? step_weight : micro_batches;
    terms.push_back({kind, std::string(what) + suffix, m * cost, words, group, m * times, phase, m * forward_part});
    forward += forward_part;
  }
  CostTerms take(bool recompute) {
    if (recompute && forward > 0)
      terms.push_back({CostTermKind::Compute, "recomputed forward", micro_batches * forward, 0, 1, micro_batches,
                       CostPhase::MicroBatch, 0});
    return std::move(terms);
  }
};

// How many members of each of a layer's collective groups share one node,
// from the per-node splits of its configuration (a group over some dims of
// the domain has the product of their per-node splits in each node, as it
// has the product of their splits in all): the layer's work described on the
// per-node splits names them. Without per-node splits every count is 0 (not
// known), and the links follow the group's size.
struct NodeGroups {
  const int32_t* per_node = nullptr;
  LayerWork work;
  NodeGroups() = default;
  NodeGroups(const VertexModel& m, const int32_t* splits)
      : per_node(splits), work(splits ? describe_work(m, splits) : LayerWork{}) {}
  [[nodiscard]] double dim(int d) const { return per_node ? per_node[d] : 0.0; }
  [[nodiscard]] double of(double in_node_group) const { return per_node ? in_node_group : 0.0; }
};

constexpr const char* kNotHidden = " (not hidden by backward)";

// A layer's work; `forward` of it is the forward pass's.
template <typename Sink>
void compute_term(Sink& sink, double cost, double forward) {
  sink(CostTermKind::Compute, "compute", "", cost, 0, 1, 1, CostPhase::MicroBatch, forward);
}

// The optimizer's update of the weight tile a device holds (`weights`
// elements), once per step: every replica steps its own copy, a split weight
// is stepped in shards; under ZeRO each of the `replicas` steps its shard.
template <typename Sink>
void update_term(const CalibratedCostModel& model, Sink& sink, double weights, double replicas, int zero) {
  if (zero > 0) weights /= std::max(1.0, replicas);
  const double cost = model.update_seconds(weights);
  if (cost > 0) sink(CostTermKind::Compute, "optimizer update", "", cost, 0, 1, 1, CostPhase::Step, 0.0);
}

// A collective or transfer term, `forward_share` of it in the forward pass;
// one within a single device that costs nothing is left out.
template <typename Sink>
void communication_term(Sink& sink, CostTermKind kind, const char* what, const char* suffix, double cost, double words,
                        double group, double times, double forward_share, CostPhase phase = CostPhase::MicroBatch) {
  if (group > 1 || cost > 0) sink(kind, what, suffix, cost, words, group, times, phase, forward_share * cost);
}

// Fused pointwise ops (activations after a GEMM, a normalization or a
// softmax): 3 counted operations per element each, as the `pase` model counts
// a GEMM's, and one read and one write per counted operation.
double fused_pointwise_seconds(const CalibratedCostModel& model, double pointwise, double elements) {
  return model.memory_seconds(2 * 3 * pointwise * elements);
}

// The sum of a weight's gradient over its `group` replicas, as much of it as
// `backward` seconds do not hide: an all-reduce once per step (gradients
// accumulate over micro-batches). The B operand of a GEMM that is no weight
// (attention's keys) has its gradient summed the same way, per micro-batch.
// Under ZeRO (docs/training.md) the all-reduce becomes a reduce-scatter (per
// micro-batch from stage 2, where the gradient is held sharded) and an
// all-gather of the updated shards (stage 3: of the weight before its
// forward and its backward use, per micro-batch, hidden as the gradient is).
template <typename Sink>
void weight_gradient_term(const CalibratedCostModel& model, Sink& sink, double words, double group, double backward,
                          int layer_zero, double per_node, bool weight = true) {
  const int zero = weight ? layer_zero : 0;
  if (zero == 0) {
    communication_term(sink, CostTermKind::AllReduce, "weight-gradient all-reduce", kNotHidden,
                       model.exposed_gradient_seconds(model.gradient_all_reduce_seconds(words, group, per_node), backward),
                       words, group, 1, 0.0, weight ? CostPhase::Step : CostPhase::MicroBatch);
    return;
  }
  const double half = model.half_ring_seconds(words, group, model.bucket_share(words), per_node);
  communication_term(sink, CostTermKind::ReduceScatter, kGradientScatterTerm, kNotHidden,
                     model.exposed_gradient_seconds(half, backward), words, group, 1, 0.0,
                     zero >= 2 ? CostPhase::MicroBatch : CostPhase::Step);
  if (zero < 3)
    communication_term(sink, CostTermKind::AllGather, "updated-weight all-gather", "", half, words, group, 1, 0.0,
                       CostPhase::Step);
  else
    communication_term(sink, CostTermKind::AllGather, kWeightGatherTerm, " (before forward and backward)",
                       2 * model.exposed_gradient_seconds(half, backward), words, group, 2, 0.5);
}

// The sum of a GEMM's partial outputs over its contraction's `group` ways:
// an all-reduce in forward, or under sequence parallelism its two halves, a
// reduce-scatter in forward and an all-gather in backward
// (graphs/sequence_parallel.h).
template <typename Sink>
void output_sum_term(const CalibratedCostModel& model, Sink& sink, const char* what, double words, double group,
                     double per_node, SequenceParallel sequence_parallel) {
  const double cost = model.all_reduce_seconds(words, group, per_node);
  if (sequence_parallel == SequenceParallel::ScatterOutput)
    communication_term(sink, CostTermKind::ReduceScatter, kScatterOutputTerm, "", cost, words, group, 1, 0.5);
  else
    communication_term(sink, CostTermKind::AllReduce, what, "", cost, words, group, 1, 1.0);
}

// Memory-bound work of `accesses` element accesses (forward and backward
// kernels) plus `extra_compute`, then the work's GEMM (its three kernels and
// fused pointwise ops; the output and input-gradient all-reduces on the
// critical path, the weight gradient's hidden by the backward GEMMs where it
// can be), the halo and the transfers, each paying the link its group crosses.
//
// The forward part (what recomputation pays again): `extra_forward` of the
// extra compute, the first of the two memory-bound kernels and half their
// accesses, the forward GEMM and its fused pointwise ops' forward third (each
// counted operation is one of three: forward, and two in backward), the
// output all-reduce, and half of the halo, the listed all-reduces and the
// transfers (each moves once forward and once backward).
template <typename Sink>
void work_terms(const CalibratedCostModel& model, const LayerWork& work, const NodeGroups& nodes, bool weight_operand,
                int zero, double accesses, double extra_compute, double extra_forward, Sink& sink,
                SequenceParallel sequence_parallel = SequenceParallel::None) {
  double compute = extra_compute + (accesses > 0 ? 2 * kKernelSeconds + model.memory_seconds(accesses) : 0.0);
  double forward = extra_forward + (accesses > 0 ? kKernelSeconds + model.memory_seconds(accesses) / 2 : 0.0);
  double backward = 0;
  const GemmShape& g = work.gemm;
  if (work.has_gemm) {
    const std::array<GemmCall, 3> calls = training_gemms(g);
    backward = model.gemm_seconds(calls[1], g.batch) + model.gemm_seconds(calls[2], g.batch);
    const double forward_gemm = model.gemm_seconds(calls[0], g.batch);
    const double pointwise = fused_pointwise_seconds(model, g.pointwise, g.batch * g.m * g.n);
    compute += forward_gemm + backward + pointwise;
    forward += forward_gemm + pointwise / 3;
  }
  compute_term(sink, compute, forward);
  if (work.has_gemm && weight_operand) update_term(model, sink, g.batch * g.n * g.k, g.cm, zero);
  if (work.has_gemm) {
    // One collective per gradient carries all Bpp instances, so latency is paid once.
    const GemmShape& in_node = nodes.work.gemm;
    output_sum_term(model, sink, "output all-reduce", g.batch * g.m * g.n, g.ck, nodes.of(in_node.ck), sequence_parallel);
    if (sequence_parallel != SequenceParallel::GatherInput)
      communication_term(sink, CostTermKind::AllReduce, "input-gradient all-reduce", "",
                         model.all_reduce_seconds(g.batch * g.m * g.k, g.cn, nodes.of(in_node.cn)), g.batch * g.m * g.k,
                         g.cn, 1, 0.0);
    weight_gradient_term(model, sink, g.batch * g.n * g.k, g.cm, backward, zero, nodes.of(in_node.cm), weight_operand);
  }
  if (work.has_halo) {
    const double words = work.halo.batch * work.halo.channels * work.halo.added_area;
    const double halo = model.transfer_seconds(words, work.halo.group, nodes.of(nodes.work.halo.group));
    if (words > 0)
      sink(CostTermKind::Halo, "pooling halo", "", halo, words, work.halo.group, 1, CostPhase::MicroBatch, halo / 2);
  }
  for (int i = 0; i < work.all_reduces.count; ++i) {
    const AllReduceWork& ar = work.all_reduces.items[static_cast<size_t>(i)];
    const double per_node = nodes.of(nodes.work.all_reduces.items[static_cast<size_t>(i)].group);
    communication_term(sink, CostTermKind::AllReduce, ar.what, " all-reduce",
                       ar.times * model.all_reduce_seconds(ar.words, ar.group, per_node), ar.words, ar.group, ar.times,
                       0.5);
  }
  for (int i = 0; i < work.transfers.count; ++i)
    if (const TransferWork& t = work.transfers.items[static_cast<size_t>(i)]; t.words > 0) {
      const double per_node = nodes.of(nodes.work.transfers.items[static_cast<size_t>(i)].group);
      const double cost = t.times * model.transfer_seconds(t.words, t.group, per_node);
      sink(CostTermKind::Transfer, t.what, " transfer", cost, t.words, t.group, t.times, CostPhase::MicroBatch, cost / 2);
    }
}

template <typename Sink>
void embedding_terms(const CalibratedCostModel& model, const GemmShape& g, const GemmShape& in_node,
                     const NodeGroups& nodes, bool weight_operand, int zero, SequenceParallel sequence_parallel,
                     Sink& sink) {
  // A gather, not a one-hot GEMM: m looked-up rows of n features from a shard
  // of k vocabulary rows. Forward reads each row and writes it (2mn); backward
  // zeroes the shard's dense gradient (kn) and adds dy into it (read dy, read
  // and write the row: 3mn). Three kernels.
  const double forward = model.memory_seconds(2 * g.m * g.n);
  const double backward = model.memory_seconds(3 * g.m * g.n + g.k * g.n);
  compute_term(sink, g.batch * (3 * kKernelSeconds + forward + backward), g.batch * (kKernelSeconds + forward));
  if (weight_operand) update_term(model, sink, g.batch * g.n * g.k, g.cm, zero);
  // A vocabulary split (Megatron's VocabParallelEmbedding): each shard writes
  // the rows it owns and zeros elsewhere, and one all-reduce over the shards
  // completes the output; dy is already on every shard. The table's gradient
  // is all-reduced over the batch split like any weight gradient.
  output_sum_term(model, sink, "vocabulary-split output all-reduce", g.batch * g.m * g.n, g.ck, nodes.of(in_node.ck),
                  sequence_parallel);
  weight_gradient_term(model, sink, g.batch * g.n * g.k, g.cm, g.batch * backward, zero, nodes.of(in_node.cm),
                       weight_operand);
}

template <typename Sink>
void normalization_terms(const CalibratedCostModel& model, const VertexModel& m, const int32_t* c,
                         const NodeGroups& nodes, Sink& sink) {
  const double e = domain_elements(m, c);
  // Batchnorm runs in the training dtype (cuDNN keeps its statistics in FP32);
  // norm and rmsnorm are on autocast's FP32 list.
  const bool batchnorm = m.kind == OpKind::Batchnorm;
  const double compute = 2 * kKernelSeconds +
                         (batchnorm ? model.memory_seconds(kNormalizationAccesses * e)
                                    : model.fp32_op_seconds(kNormalizationAccesses * e, e)) +
                         fused_pointwise_seconds(model, m.work.pointwise, e);
  // Forward: 3 of the 8 accesses per element (above).
  compute_term(sink, compute, compute * 3 / kNormalizationAccesses);
  const double backward = kKernelSeconds + model.memory_seconds(5 * e);
  const int rank = static_cast<int>(m.domain.size());
  if (batchnorm) {
    // Statistics per channel (dim 1), summed over batch (dim 0) and space
    // (dims 2…): per-device statistics by default, as frameworks compute them
    // without SyncBatchNorm, so the batch split does not reduce; a spatial
    // split always does. Forward reduces (mean, sum of squares), backward
    // (Σdy, Σdy·x̂): two all-reduces of 2·C words. dγ, dβ (2·C words) are
    // weight gradients over every split but the channel's.
    const double channels = rank > 1 ? per_device(m, c, 1) : 1;
    double spatial = 1, spatial_in_node = 1;
    for (int d = 2; d < rank; ++d) spatial *= c[d], spatial_in_node *= nodes.dim(d);
    const double replicas = static_cast<double>(c[0]) * spatial, replicas_in_node = nodes.dim(0) * spatial_in_node;
    const bool sync = model.options().sync_batchnorm;
    const double statistics_group = sync ? replicas : spatial;
    communication_term(sink, CostTermKind::AllReduce, "batchnorm statistics all-reduce", "",
                       2 * model.all_reduce_seconds(2 * channels, statistics_group,
                                                    nodes.of(sync ? replicas_in_node : spatial_in_node)),
                       2 * channels, statistics_group, 2, 0.5);
    weight_gradient_term(model, sink, 2 * channels, replicas, backward, zero_stage_of(model.options().training, m.zero),
                         nodes.of(replicas_in_node));
    return;
  }
  // norm (LayerNorm) and rmsnorm over `axis`: statistics per row, reduced over
  // the axis's split (norm: two forward and two backward, rmsnorm: one each);
  // the parameters (norm: γ, β; rmsnorm: γ) follow the axis and are weight
  // gradients over the other splits.
  const int axis = m.work.axis;
  const double x_axis = per_device(m, c, axis);
  double others = 1, others_in_node = 1;
  for (int d = 0; d < rank; ++d)
    if (d != axis) others *= c[d], others_in_node *= nodes.dim(d);
  const double statistics = m.kind == OpKind::RmsNorm ? 2 : 4;
  const double parameters = m.kind == OpKind::RmsNorm ? 1 : 2;
  communication_term(sink, CostTermKind::AllReduce, "row statistics all-reduce", "",
                     statistics * model.all_reduce_seconds(e / x_axis, c[axis], nodes.of(nodes.dim(axis))), e / x_axis,
                     c[axis], statistics, 0.5);
  weight_gradient_term(model, sink, parameters * x_axis, others, backward, zero_stage_of(model.options().training, m.zero),
                       nodes.of(others_in_node));
}

// Per-device elements of a convolution's input x: its batch and channel
// dimensions follow the domain (as the input's split map says), its height
// and width are the input's (whole: a convolution's spatial dimensions are
// never split).
double convolution_input_elements(const VertexModel& m, const int32_t* c) {
  double x = m.work.in_h * m.work.in_w;
  for (size_t t = 0; t < 2 && t < m.inputs[0].size(); ++t)
    for (int d : m.inputs[0][t]) x *= per_device(m, c, d);
  return x;
}

// The one description of a layer's price, op by op.
template <typename Sink>
void price_layer(const CalibratedCostModel& model, const VertexModel& m, const int32_t* c, const NodeGroups& nodes,
                 Sink& sink) {
  switch (m.kind) {
    case OpKind::Batchnorm:
    case OpKind::Norm:
    case OpKind::RmsNorm: normalization_terms(model, m, c, nodes, sink); return;
    case OpKind::Embedding:
      embedding_terms(model, gemm_shape(m, c), nodes.per_node ? gemm_shape(m, nodes.per_node) : GemmShape{}, nodes,
                      m.work.weight_operand, zero_stage_of(model.options().training, m.zero), m.sequence_parallel, sink);
      return;
    case OpKind::Softmax: {
      // Statistics per row (max and sum forward, one sum backward), reduced over the axis's split.
      const double e = domain_elements(m, c);
      const int axis = m.work.axis;
      const double rows = e / per_device(m, c, axis);
      // Inside a fused attention kernel the scores stay in on-chip memory:
      // no kernel of its own, no traffic.
      const double compute = m.fused_scores ? 0.0
                                            : 2 * kKernelSeconds + model.fp32_op_seconds(kSoftmaxAccesses * e, e) +
                                                  fused_pointwise_seconds(model, m.work.pointwise, e);
      compute_term(sink, compute, compute / 2);  // forward: 3 of the 6 accesses
      communication_term(sink, CostTermKind::AllReduce, "softmax max and sum all-reduce", "",
                         3 * model.all_reduce_seconds(rows, c[axis], nodes.of(nodes.dim(axis))), rows, c[axis], 3,
                         2.0 / 3);
      return;
    }
    case OpKind::Elementwise: {
      // Forward reads every input and writes the output; backward reads dy
      // and writes each input's gradient; a fused op adds a read and a write.
      const double inputs = static_cast<double>(m.inputs.size());
      work_terms(model, LayerWork{}, nodes, false, zero_stage_of(model.options().training, m.zero), (2 * (inputs + 1) + 2 * m.work.pointwise) * domain_elements(m, c), 0.0, 0.0,
                 sink);
      return;
    }
    case OpKind::Conv2d: {
      // A GEMM layer, plus the layout transposes of its operands under NCHW.
      const LayerWork work = describe_work(m, c);
      const GemmShape& g = work.gemm;
      const double transposes = model.layout_transpose_seconds(convolution_input_elements(m, c), g.batch * g.n * g.k,
                                                               g.batch * g.m * g.n);
      // The forward call's operands are 3 of the 9 transposes.
      work_terms(model, work, nodes, m.work.weight_operand, zero_stage_of(model.options().training, m.zero), 2 * work.pointwise, transposes, transposes / 3, sink);
      return;
    }
    case OpKind::SoftmaxXent: {
      // The loss, on autocast's FP32 list: its counted operations as below.
      const LayerWork work = describe_work(m, c);
      const double loss = 2 * kKernelSeconds + model.fp32_op_seconds(2 * work.pointwise, domain_elements(m, c));
      work_terms(model, work, nodes, m.work.weight_operand, zero_stage_of(model.options().training, m.zero), 0, loss, loss / 2, sink);
      return;
    }
    default: {
      // Everything else as the `pase` model describes it; each counted
      // operation reads and writes one element.
      const LayerWork work = describe_work(m, c);
      work_terms(model, work, nodes, m.work.weight_operand, zero_stage_of(model.options().training, m.zero),
                 2 * work.pointwise, 0.0, 0.0, sink, m.sequence_parallel);
      // A fused attention kernel keeps no scores for backward: it computes
      // them again there (FlashAttention's backward), one more forward GEMM.
      if (m.fused_scores && work.has_gemm)
        sink(CostTermKind::Compute, "scores recomputed in backward (fused attention)", "",
             model.gemm_seconds(training_gemms(work.gemm)[0], work.gemm.batch), 0, 1, 1, CostPhase::MicroBatch, 0.0);
      return;
    }
  }
}

// A layer's step (its sum, or its terms as explain lists them) with its
// groups placed as `nodes` says (NodeGroups{}: each inside a node if it fits).
double step_cost(const CalibratedCostModel& calibrated, const VertexModel& model, const int32_t* config,
                 const NodeGroups& nodes) {
  CostSum sum;
  sum.micro_batches = static_cast<double>(calibrated.options().training.micro_batches);
  sum.step_weight = calibrated.options().training.step_weight;
  price_layer(calibrated, model, config, nodes, sum);
  return sum.step(model.recompute);
}

CostTerms step_terms(const CalibratedCostModel& calibrated, const VertexModel& model, const int32_t* config,
                     const NodeGroups& nodes) {
  TermList list;
  list.micro_batches = static_cast<double>(calibrated.options().training.micro_batches);
  list.step_weight = calibrated.options().training.step_weight;
  price_layer(calibrated, model, config, nodes, list);
  return list.take(model.recompute);
}

}  // namespace

double CalibratedCostModel::layer(const VertexModel& model, const int32_t* config) const {
  return step_cost(*this, model, config, NodeGroups{});
}

double CalibratedCostModel::layer_on_nodes(const VertexModel& model, const int32_t* config, const int32_t* per_node) const {
  return step_cost(*this, model, config, NodeGroups(model, per_node));
}

CostTerms CalibratedCostModel::layer_terms(const VertexModel& model, const int32_t* config) const {
  return step_terms(*this, model, config, NodeGroups{});
}

CostTerms CalibratedCostModel::layer_terms_on_nodes(const VertexModel& model, const int32_t* config,
                                                    const int32_t* per_node) const {
  return step_terms(*this, model, config, NodeGroups(model, per_node));
}

double CalibratedCostModel::fetch_cost_on_nodes(double words, double group, bool across_nodes) const {
  // A group's members in one node (group itself) or, across nodes, one per node.
  return static_cast<double>(options_.training.micro_batches) *
         (2.0 * transfer_seconds(words, group, across_nodes ? 1.0 : group));
}

double CalibratedCostModel::fetch_cost(double words, double group) const {
  // Activations move once per micro-batch, forward and backward.
  return static_cast<double>(options_.training.micro_batches) * (2.0 * transfer_seconds(words, group));
}

double CalibratedCostModel::redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const {
  double parts_a = 1, parts_b = 1;
  for (size_t i = 0; i < tensor.size(); ++i) parts_a *= static_cast<double>(a[i]), parts_b *= static_cast<double>(b[i]);
  return fetch_cost(redistribution_words(tensor, a, b), std::max(parts_a, parts_b));
}

}  // namespace pase
