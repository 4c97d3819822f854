#pragma once
// The strategies PaSE is compared with (paper Fig. 6 and Table I). Each is a
// configuration index per vertex, priced by the same Objective as the DP, so
// the DP optimum is never worse than any of them. docs/compare.md has the
// exact rules; in short:
//  - data-parallel: split each vertex's batch dimension (batch_dimension) p ways;
//  - owt: data parallel, except that `fc` layers split their output units N p ways;
//  - megatron: batch m ways and attention heads / ff / vocab n ways, m * n = p, best m;
//    over a graph whose GEMMs carry sequence-parallel roles (graphs/sequence_parallel.h)
//    the norms and residual adds between them follow their inputs' sequence split;
//  - mcmc: FlexFlow's Markov chain search (mcmc.h), started from data-parallel;
//  - fsdp: data-parallel, priced by its caller under ZeRO-3 (not in baseline_names).
// A wish "split dim d w ways" becomes the largest allowed split of d that
// divides w (1 always qualifies), so every baseline is a valid configuration.
#include <string>
#include <vector>

#include "costmodel/cost_tables.h"
#include "graphs/graph.h"
#include "strategy/mcmc.h"

namespace pase {

struct BaselineResult {
  std::string name;
  bool applicable = true;      ///< false: skipped (note says why)
  std::string note;            ///< what it chose ("m = 4, n = 2") or why it was skipped
  std::vector<int32_t> choice; ///< configuration index per vertex
  double cost = 0.0;
  double seconds = 0.0;        ///< time spent choosing (the search time for mcmc)
};

/// Batch dimension split p ways (or the largest allowed divisor of p).
[[nodiscard]] std::vector<int32_t> data_parallel_choice(const Graph& graph, const CostTables& tables);

/// data_parallel_choice's configuration index for one vertex.
[[nodiscard]] int32_t data_parallel_config(const Graph& graph, const CostTables& tables, int vertex);

/// Krizhevsky's "one weird trick": data parallel, but fc layers split their units N p ways.
[[nodiscard]] std::vector<int32_t> owt_choice(const Graph& graph, const CostTables& tables);

/// True if some einsum has the attention-head letter 'h' (megatron applies).
[[nodiscard]] bool is_transformer_like(const Graph& graph);

/// Megatron-LM layout with the batch split `batch_ways` and heads / ff / vocab split `model_ways`.
[[nodiscard]] std::vector<int32_t> megatron_choice(const Graph& graph, const CostTables& tables, int64_t batch_ways,
                                                   int64_t model_ways);

/// "data-parallel", "owt", "megatron", "mcmc".
[[nodiscard]] const std::vector<std::string>& baseline_names();

/// Builds and prices one named baseline; InputError (with a "did you mean") for an unknown name.
/// megatron takes `tensor_parallel` ways of tensor parallelism (0: the best
/// divisor of the devices; OptionError "tensor_parallel" when it does not
/// divide them). fsdp is the data-parallel strategy, to be priced under
/// ZeRO-3 (docs/training.md): its caller prices the tables so.
[[nodiscard]] BaselineResult run_baseline(const std::string& name, const Graph& graph, const CostTables& tables,
                                          const McmcOptions& mcmc, int64_t tensor_parallel = 0);

}  // namespace pase
