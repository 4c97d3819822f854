#include "costmodel/costs.h"

namespace pase {

double all_reduce(double words, double devices, double r) {
  if (devices <= 1) return 0.0;
  return r * (words / devices) * 2.0 * (devices - 1.0);
}

double half_all_reduce(double words, double devices, double r) {
  if (devices <= 1) return 0.0;
  return r * (words / devices) * (devices - 1.0);
}

double redistribution_cost(const Shape& tensor, const int64_t* a, const int64_t* b, double r) {
  return r * 2.0 * redistribution_words(tensor, a, b);
}

// The sum runs in a fixed order, the same for every op, so equal work
// costs the same bits: pointwise, GEMM, halo, all-reduces, transfers.
double work_cost(const LayerWork& work, double r) {
  double cost = work.pointwise;
  if (work.has_gemm) {
    const GemmShape& g = work.gemm;
    cost += g.batch * (3 * g.m * g.n * g.k + 3 * g.pointwise * g.m * g.n + all_reduce(g.m * g.n, g.ck, r) +
                       all_reduce(g.m * g.k, g.cn, r) + all_reduce(g.n * g.k, g.cm, r));
  }
  if (work.has_halo) cost += r * work.halo.batch * work.halo.channels * work.halo.added_area;
  for (const AllReduceWork& ar : work.all_reduces) cost += ar.times * all_reduce(ar.words, ar.group, r);
  for (const TransferWork& t : work.transfers) cost += t.times * r * t.words;
  return cost;
}

// The same items, in the same order, as work_cost above: a change to one
// is a change to the other (layer_terms_test checks they add up alike).
namespace {

// A weight's gradient sum over its `group` replicas under ZeRO stage `zero`
// (docs/training.md): stage 0 all-reduces once per step; 1 reduce-scatters
// once per step and all-gathers the updated shards; 2 reduce-scatters per
// micro-batch; 3 also all-gathers the weight before forward and backward of
// every micro-batch instead of after the update.
void weight_sync_terms(CostTerms& terms, double words, double group, double r, int zero) {
  if (group <= 1) return;
  if (zero == 0) {
    terms.push_back({CostTermKind::AllReduce, "weight-gradient all-reduce", all_reduce(words, group, r), words, group, 1,
                     CostPhase::Step});
    return;
  }
  const double half = half_all_reduce(words, group, r);
  terms.push_back({CostTermKind::ReduceScatter, kGradientScatterTerm, half, words, group, 1,
                   zero >= 2 ? CostPhase::MicroBatch : CostPhase::Step});
  if (zero < 3)
    terms.push_back({CostTermKind::AllGather, "updated-weight all-gather", half, words, group, 1, CostPhase::Step});
  else
    terms.push_back({CostTermKind::AllGather, std::string(kWeightGatherTerm) + " (before forward and backward)", 2 * half, words, group,
                     2, CostPhase::MicroBatch, half});
}

}  // namespace

// Each term's forward part (what a recomputing layer pays again): a third of
// the compute (a GEMM's forward is one of its three products, and the
// pointwise work is counted the same way), the output all-reduce, and half of
// the halo, the listed all-reduces and the transfers (once each way).
CostTerms work_terms(const LayerWork& work, double r, const TrainingSetup& setup, bool weight_operand, int zero,
                     bool recompute, bool fused_scores, SequenceParallel sequence_parallel) {
  CostTerms terms;
  double compute = work.pointwise;
  if (work.has_gemm) compute += work.gemm.batch * (3 * work.gemm.m * work.gemm.n * work.gemm.k + 3 * work.gemm.pointwise * work.gemm.m * work.gemm.n);
  terms.push_back({CostTermKind::Compute, "compute", compute, 0, 1, 1, CostPhase::MicroBatch, compute / 3});
  auto add_all_reduce = [&](const std::string& what, double words, double group, double times, double forward_share) {
    const double cost = times * all_reduce(words, group, r);
    if (group > 1) terms.push_back({CostTermKind::AllReduce, what + " all-reduce", cost, words, group, times, CostPhase::MicroBatch, forward_share * cost});
  };
  if (work.has_gemm) {
    const GemmShape& g = work.gemm;
    // A GEMM's collectives carry its Bpp instances together: words scale by batch.
    if (sequence_parallel == SequenceParallel::ScatterOutput) {
      const double words = g.batch * g.m * g.n;
      if (g.ck > 1)
        terms.push_back({CostTermKind::ReduceScatter, std::string(kScatterOutputTerm), all_reduce(words, g.ck, r), words,
                         g.ck, 1, CostPhase::MicroBatch, half_all_reduce(words, g.ck, r)});
    } else {
      add_all_reduce("output", g.batch * g.m * g.n, g.ck, 1, 1.0);
    }
    if (sequence_parallel != SequenceParallel::GatherInput)
      add_all_reduce("input-gradient", g.batch * g.m * g.k, g.cn, 1, 0.0);
    if (weight_operand)
      weight_sync_terms(terms, g.batch * g.n * g.k, g.cm, r, zero);
    else
      add_all_reduce("weight-gradient", g.batch * g.n * g.k, g.cm, 1, 0.0);
  }
  if (work.has_halo) {
    const double words = work.halo.batch * work.halo.channels * work.halo.added_area;
    if (words > 0) terms.push_back({CostTermKind::Halo, "pooling halo", r * words, words, work.halo.group, 1, CostPhase::MicroBatch, r * words / 2});
  }
  for (const AllReduceWork& ar : work.all_reduces) {
    if (!ar.weight_gradient) {
      add_all_reduce(ar.what, ar.words, ar.group, ar.times, 0.5);
    } else if (zero == 0) {
      add_all_reduce(ar.what, ar.words, ar.group, ar.times, 0.0);
      if (ar.group > 1) terms.back().phase = CostPhase::Step;
    } else {
      weight_sync_terms(terms, ar.times * ar.words, ar.group, r, zero);
    }
  }
  for (const TransferWork& t : work.transfers)
    if (t.words > 0) terms.push_back({CostTermKind::Transfer, std::string(t.what) + " transfer", t.times * r * t.words, t.words, t.group, t.times, CostPhase::MicroBatch, t.times * r * t.words / 2});
  // A fused attention kernel computes the scores again in backward: one more product.
  if (fused_scores && work.has_gemm)
    terms.push_back({CostTermKind::Compute, "scores recomputed in backward (fused attention)",
                     work.gemm.batch * work.gemm.m * work.gemm.n * work.gemm.k, 0, 1, 1});
  double forward = 0;
  for (const CostTerm& term : terms) forward += term.forward;
  if (recompute && forward > 0) terms.push_back({CostTermKind::Compute, "recomputed forward", forward, 0, 1, 1});
  // A micro-batch's terms, once per micro-batch.
  const double m = static_cast<double>(setup.micro_batches);
  for (CostTerm& term : terms)
    if (term.phase == CostPhase::MicroBatch) term.cost *= m, term.times *= m, term.forward *= m;
    else if (setup.step_weight != 1.0) term.cost *= setup.step_weight, term.forward *= setup.step_weight;
  return terms;
}

double layer_cost(const VertexModel& model, const int32_t* config, double r) {
  return work_cost(describe_work(model, config), r);
}

}  // namespace pase

#include "costmodel/cost_model.h"

#include <algorithm>

namespace pase {

uint64_t default_memory_reserve(uint64_t device_bytes) {
  const uint64_t fixed = uint64_t{1} << 30;
  const uint64_t reserve = device_bytes > fixed ? fixed + (device_bytes - fixed) / 20 : device_bytes / 4;
  return std::min(reserve, device_bytes / 4);
}

double PaseCostModel::layer(const VertexModel& model, const int32_t* config) const {
  // The PaSE step keeps its own sum (and its golden bits); a training setup
  // that reshapes the step sums its terms.
  if (training_.micro_batches == 1 && training_.step_weight == 1.0 && zero_stage_of(training_, model.zero) == 0 && !model.recompute &&
      !model.fused_scores && model.sequence_parallel == SequenceParallel::None)
    return layer_cost(model, config, machine_.word_cost());
  double total = 0;
  for (const CostTerm& term : layer_terms(model, config)) total += term.cost;
  return total;
}

CostTerms PaseCostModel::layer_terms(const VertexModel& model, const int32_t* config) const {
  return work_terms(describe_work(model, config), machine_.word_cost(), training_, model.work.weight_operand,
                    zero_stage_of(training_, model.zero), model.recompute, model.fused_scores, model.sequence_parallel);
}

CostTerms CostModel::layer_terms(const VertexModel& model, const int32_t* config) const {
  return {{CostTermKind::Compute, "compute", layer(model, config), 0, 1, 1}};
}

double PaseCostModel::redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const {
  return fetch_cost(redistribution_words(tensor, a, b), 0);
}

double PaseCostModel::fetch_cost(double words, double) const {
  // Activations move once per micro-batch, forward and backward.
  return static_cast<double>(training_.micro_batches) * (machine_.word_cost() * 2.0 * words);
}

void CostModel::redistribution_matrix(const Shape& tensor, const std::vector<std::vector<int64_t>>& a,
                                      const std::vector<std::vector<int64_t>>& b, double* out) const {
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j) out[i * b.size() + j] = redistribution(tensor, a[i].data(), b[j].data());
}

void PaseCostModel::redistribution_matrix(const Shape& tensor, const std::vector<std::vector<int64_t>>& a,
                                          const std::vector<std::vector<int64_t>>& b, double* out) const {
  // Per-split extents and products once per class, so a pair costs `rank`
  // mins and multiplies; the rule itself is fetched_words, as for one pair.
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
  const double r = machine_.word_cost(), m = static_cast<double>(training_.micro_batches);
  for (size_t i = 0; i < a.size(); ++i)
    for (size_t j = 0; j < b.size(); ++j)
      out[i * b.size() + j] =
          m * (r * 2.0 * fetched_words(&a_ext[i * rank], &b_ext[j * rank], need[j], a_parts[i], b_parts[j], rank));
}

}  // namespace pase
