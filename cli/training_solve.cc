#include "cli/training_solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>

#include "base/error.h"
#include "cli/graph_input.h"
#include "cli/progress_line.h"
#include "solve/solve_request.h"

namespace pase {
namespace {

// Whether `a` is a better answer than `b`: solved beats unsolved; then the
// lower cost, or under a cap nothing fits, the lower least memory.
bool better(const SolveOutcome& a, const SolveOutcome& b) {
  if (a.solved() != b.solved()) return a.solved();
  if (a.solved()) return a.solution.cost < b.solution.cost;
  if (a.capped && b.capped) return a.capped->least_memory < b.capped->least_memory;
  return false;
}

// Count `m`'s setup, graph (at its micro-batch size) and model, unsolved.
std::unique_ptr<TrainingSolve> setup_at(const GraphFileV1& file, const std::string& path, int64_t micro_batches,
                                        const ModelMaker& make_model, const SolveRequest& request) {
  auto solve = std::make_unique<TrainingSolve>();
  solve->setup = request.memory;
  solve->setup.micro_batches = micro_batches;
  solve->micro_batch_size = micro_batch_size(file, solve->setup);
  solve->graph = training_graph(file, path, solve->setup);
  if (request.source == StrategySource::Given)
    apply_layer_techniques(solve->graph, *request.given, solve->setup,
                           request.given_path.empty() ? "the strategy file" : request.given_path);
  solve->model = make_model(solve->setup);
  return solve;
}

std::unique_ptr<TrainingSolve> solve_at(const GraphFileV1& file, const std::string& path, int64_t micro_batches,
                                        const ModelMaker& make_model, const SolveRequest& request) {
  std::unique_ptr<TrainingSolve> solve = setup_at(file, path, micro_batches, make_model, request);
  SolveRequest at = request;
  at.memory = solve->setup;
  solve->outcome = solve_request(solve->graph, *solve->model, at);
  if (solve->outcome.graph) {
    solve->graph = std::move(*solve->outcome.graph);
    solve->outcome.graph.reset();
  }
  return solve;
}

// Runs `work` for count `m`. A refusal (InputError: the graph does not build
// at that batch; ResourceError: past the DP's limits) is recorded as m's
// trial, the first kept to throw if no count answers.
template <typename Work>
void unless_refused(TrainingSearch& search, int64_t m, std::exception_ptr& first_error, Work work) {
  auto refuse = [&](const std::exception& error) {
    if (!first_error) first_error = std::current_exception();
    search.trials.push_back({m, std::nan(""), error.what()});
  };
  try {
    work();
  } catch (const InputError& error) {
    refuse(error);
  } catch (const ResourceError& error) {
    refuse(error);
  }
}

// Solves count `m` under `request`, records its trial and keeps it if it is the best so far.
void try_count(TrainingSearch& search, int64_t m, const GraphFileV1& file, const std::string& path,
               const ModelMaker& make_model, const SolveRequest& request, std::exception_ptr& first_error) {
  unless_refused(search, m, first_error, [&] {
    std::unique_ptr<TrainingSolve> solve = solve_at(file, path, m, make_model, request);
    const std::optional<CappedSolution>& capped = solve->outcome.capped;
    if (capped && capped->cut_off) {  // its bound under the cap reached the cost to beat
      search.trials.push_back({m, std::nan(""), "", true});
      search.least_bound = std::fmin(search.least_bound, capped->lower_bound);
      return;
    }
    const bool solved = solve->outcome.solved();
    search.trials.push_back({m, solved ? solve->outcome.solution.cost : std::nan(""),
                             solved ? "" : "nothing fits the memory cap"});
    if (solved) search.least_bound = std::fmin(search.least_bound, solve->outcome.capped ? solve->outcome.capped->lower_bound
                                                                                         : solve->outcome.solution.cost);
    if (!search.best || better(solve->outcome, search.best->outcome)) search.best = std::move(solve);
  });
}

// The counts in the order to try them under a cap, each with a lower bound
// on its capped optimum, least first: each layer at its least cost, edges at
// nothing (least_cost_bound). It needs no DP, so a count it rules out costs
// only its pricing; one it does not is searched under the cap, whose first
// DP, the optimum without the cap, may still rule it out (the cutoff).
struct Candidate {
  int64_t micro_batches = 1;
  double lower_bound = 0;
};

std::vector<Candidate> least_cost_bounds(const GraphFileV1& file, const std::string& path,
                                         const std::vector<int64_t>& counts, const ModelMaker& make_model,
                                         const SolveRequest& request, TrainingSearch& search,
                                         std::exception_ptr& first_error) {
  std::vector<Candidate> candidates;
  for (int64_t m : counts)
    unless_refused(search, m, first_error, [&] {
      set_progress_stage("bounding micro-batches " + std::to_string(m) + " (" + std::to_string(candidates.size() + 1) +
                         " of " + std::to_string(counts.size()) + ")");
      const std::unique_ptr<TrainingSolve> at = setup_at(file, path, m, make_model, request);
      SolveRequest bound = request;
      bound.memory = at->setup;
      candidates.push_back({m, least_cost_bound(at->graph, *at->model, bound)});
    });
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const Candidate& a, const Candidate& b) { return a.lower_bound < b.lower_bound; });
  return candidates;
}

// Whether the request's time limit has passed with an answer in hand: then
// the counts not yet started are left out.
bool out_of_time(const TrainingSearch& search, const SolveRequest& request) {
  return search.best && search.best->outcome.solved() &&
         std::chrono::steady_clock::now() >= request.cap_search.deadline;
}

// Under a cap: the capped search only where a count's bound could beat the
// best found, told the cost to beat. A count whose optimum without the cap
// fits is found by the capped search's first DP, so the answer records the
// cap and its gap.
void search_under_cap(TrainingSearch& search, const GraphFileV1& file, const std::string& path,
                      const std::vector<int64_t>& counts, const ModelMaker& make_model, const SolveRequest& request,
                      double incumbent, std::exception_ptr& first_error) {
  const std::vector<Candidate> candidates = least_cost_bounds(file, path, counts, make_model, request, search, first_error);
  for (const Candidate& c : candidates) {
    const double to_beat = search.best && search.best->outcome.solved()
                               ? std::min(incumbent, search.best->outcome.solution.cost) : incumbent;
    if (c.lower_bound >= to_beat || out_of_time(search, request)) {  // its bound stands for it
      const bool pruned = c.lower_bound >= to_beat;
      search.trials.push_back({c.micro_batches, std::nan(""), "", pruned, !pruned});
      search.least_bound = std::fmin(search.least_bound, c.lower_bound);
      continue;
    }
    set_progress_stage("micro-batches " + std::to_string(c.micro_batches) + " under the cap (" +
                       std::to_string(search.trials.size() + 1) + " of " + std::to_string(candidates.size()) + ")");
    SolveRequest bounded = request;
    bounded.cap_search.cutoff = to_beat;
    // The best count's root price: at it, a count that cannot win is often bounded out by one DP.
    if (search.best && search.best->outcome.capped) bounded.cap_search.first_price = search.best->outcome.capped->root_price;
    try_count(search, c.micro_batches, file, path, make_model, bounded, first_error);
  }
}

}  // namespace

TrainingSearch solve_training(const GraphFileV1& file, const std::string& path, const std::vector<int64_t>& counts,
                              const ModelMaker& make_model, const SolveRequest& request, double incumbent) {
  TrainingSearch search;
  if (counts.size() == 1) {
    search.best = solve_at(file, path, counts[0], make_model, request);
    search.trials.push_back({counts[0], search.best->outcome.solution.cost, ""});
    return search;
  }
  std::exception_ptr first_error;
  if (request.cap && request.source == StrategySource::Optimum && !request.plan_only)
    search_under_cap(search, file, path, counts, make_model, request, incumbent, first_error);
  else
    for (int64_t m : counts) {
      if (out_of_time(search, request)) {
        search.trials.push_back({m, std::nan(""), "", false, true});
        continue;
      }
      set_progress_stage("micro-batches " + std::to_string(m) + " (" + std::to_string(search.trials.size() + 1) + " of " +
                         std::to_string(counts.size()) + ")");
      try_count(search, m, file, path, make_model, request, first_error);
    }
  if (!search.best && !search.bounded_out()) std::rethrow_exception(first_error);
  return search;
}

std::string micro_batch_search_words(const TrainingSearch& search) {
  size_t priced = 0, pruned = 0;
  for (const MicroBatchTrial& t : search.trials) {
    pruned += t.pruned;
    priced += t.refused.empty() && !t.pruned && !t.out_of_time;
  }
  const size_t late = search.out_of_time();
  const TrainingSolve& best = *search.best;
  return "micro-batches auto: " + std::to_string(priced) + " of " + std::to_string(search.trials.size()) +
         " divisors of the batch solved" +
         (pruned ? " (" + std::to_string(pruned) + " bounded out: their bounds reached the best cost found)" : "") +
         (late ? ", " + std::to_string(late) + " not searched: the time limit had passed" : "") + ", best " +
         std::to_string(best.setup.micro_batches) + " (" + std::to_string(best.micro_batch_size) + " per micro-batch)";
}

}  // namespace pase
