#include "cli/training_solve.h"

#include <cmath>
#include <exception>
#include <limits>

#include "base/error.h"
#include "cli/graph_input.h"
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

std::unique_ptr<TrainingSolve> solve_at(const GraphFileV1& file, const std::string& path, int64_t micro_batches,
                                        const ModelMaker& make_model, const SolveRequest& request) {
  auto solve = std::make_unique<TrainingSolve>();
  solve->setup = request.memory;
  solve->setup.micro_batches = micro_batches;
  solve->micro_batch_size = micro_batch_size(file, path, solve->setup);
  solve->graph = training_graph(file, path, solve->setup);
  solve->model = make_model(solve->setup);
  SolveRequest at = request;
  at.memory = solve->setup;
  solve->outcome = solve_request(solve->graph, *solve->model, at);
  return solve;
}

}  // namespace

TrainingSearch solve_training(const GraphFileV1& file, const std::string& path, const std::vector<int64_t>& counts,
                              const ModelMaker& make_model, const SolveRequest& request) {
  TrainingSearch search;
  if (counts.size() == 1) {
    search.best = solve_at(file, path, counts[0], make_model, request);
    search.trials.push_back({counts[0], search.best->outcome.solution.cost, ""});
    return search;
  }
  std::exception_ptr first_error;
  for (int64_t m : counts) {
    try {
      std::unique_ptr<TrainingSolve> solve = solve_at(file, path, m, make_model, request);
      const bool solved = solve->outcome.solved();
      search.trials.push_back({m, solved ? solve->outcome.solution.cost : std::nan(""),
                               solved ? "" : "nothing fits the memory cap"});
      if (!search.best || better(solve->outcome, search.best->outcome)) search.best = std::move(solve);
    } catch (const std::exception& error) {
      if (!dynamic_cast<const InputError*>(&error) && !dynamic_cast<const LimitError*>(&error) &&
          !dynamic_cast<const ResourceError*>(&error))
        throw;
      if (!first_error) first_error = std::current_exception();
      search.trials.push_back({m, std::nan(""), error.what()});
    }
  }
  if (!search.best) std::rethrow_exception(first_error);
  return search;
}

std::string micro_batch_search_words(const TrainingSearch& search) {
  size_t priced = 0;
  for (const MicroBatchTrial& t : search.trials) priced += t.refused.empty();
  const TrainingSolve& best = *search.best;
  return "micro-batches auto: " + std::to_string(priced) + " of " + std::to_string(search.trials.size()) +
         " divisors of the batch solved, best " + std::to_string(best.setup.micro_batches) + " (" +
         std::to_string(best.micro_batch_size) + " per micro-batch)";
}

}  // namespace pase
