#include "strategy/mcmc.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace pase {
namespace {

// SplitMix64: tiny, and unlike std::uniform_*_distribution its output is the
// same on every standard library, so a seed reproduces a run everywhere.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n); the modulo bias is below 2^-40 for the n used here.
  uint64_t below(uint64_t n) { return next() % n; }
  /// Uniform in [0, 1).
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

 private:
  uint64_t state_;
};

}  // namespace

std::string mcmc_stop_name(McmcStop stop) {
  switch (stop) {
    case McmcStop::Iterations: return "iterations";
    case McmcStop::Seconds: return "seconds";
    case McmcStop::NoImprovement: return "no improvement";
  }
  return "";
}

namespace {

// The DP's objective: a move prices its vertex's cost and its incident edges.
class AdditiveObjective final : public ChainObjective {
 public:
  explicit AdditiveObjective(const Objective& objective) : objective_(objective), incident_(objective.vertex_count()) {
    for (size_t e = 0; e < objective.pairs.size(); ++e) {
      incident_[objective.pairs[e].u].push_back(e);
      incident_[objective.pairs[e].v].push_back(e);
    }
  }
  size_t vertex_count() const override { return objective_.vertex_count(); }
  uint64_t config_count(size_t v) const override { return objective_.config_count(v); }
  double evaluate(const std::vector<int32_t>& choice) override { return objective_.evaluate(choice); }
  double move_delta(const std::vector<int32_t>& current, int v, int32_t to) override {
    int32_t from = current[v];
    double delta = objective_.vertex_cost[v][to] - objective_.vertex_cost[v][from];
    for (size_t e : incident_[v]) {
      const PairCost& pair = objective_.pairs[e];
      int32_t cu = current[pair.u], cv = current[pair.v];
      double before = pair.at(cu, cv);
      if (pair.u == v) cu = to;
      else cv = to;
      delta += pair.at(cu, cv) - before;
    }
    return delta;
  }

 private:
  const Objective& objective_;
  std::vector<std::vector<size_t>> incident_;  // edges incident to each vertex
};

}  // namespace

McmcResult mcmc_search(const Objective& objective, const std::vector<int32_t>& start, const McmcOptions& options) {
  AdditiveObjective additive(objective);
  return mcmc_search(additive, start, options);
}

McmcResult mcmc_search(ChainObjective& objective, const std::vector<int32_t>& start, const McmcOptions& options) {
  auto begin = std::chrono::steady_clock::now();
  const size_t n = objective.vertex_count();
  std::vector<int> movable;  // vertices with a choice to make
  for (size_t v = 0; v < n; ++v)
    if (objective.config_count(v) > 1) movable.push_back(static_cast<int>(v));

  McmcResult result;
  std::vector<int32_t> current = start;
  double current_cost = objective.begin(current);
  double best_cost = current_cost;
  result.choice = current;
  // The temperature is relative to the best cost so far, so the chain cools as it
  // finds cheaper strategies (costs span orders of magnitude across graphs and p).
  double scale = options.temperature * std::max(std::fabs(best_cost), 1.0);
  uint64_t last_improvement = 0;
  Random random(options.seed);

  uint64_t i = 0;
  for (; i < options.max_iterations && !movable.empty(); ++i) {
    if (options.max_seconds > 0 && (i & 255) == 0 &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count() >= options.max_seconds) {
      result.stop = McmcStop::Seconds;
      break;
    }
    // FlexFlow's rule: give up once the best is as old as half the search.
    if (i >= options.min_iterations && i - last_improvement >= i / 2) {
      result.stop = McmcStop::NoImprovement;
      break;
    }
    int v = movable[random.below(movable.size())];
    uint64_t count = objective.config_count(v);
    auto to = static_cast<int32_t>(random.below(count - 1));
    if (to >= current[v]) ++to;  // any configuration but the current one
    double delta = objective.move_delta(current, v, to);
    if (delta > 0 && random.unit() >= std::exp(-delta / scale)) {
      objective.reject();
      continue;
    }
    objective.accept();
    current[v] = to;
    current_cost += delta;
    ++result.accepted;
    // The running sum drifts by rounding; demand a real improvement before copying.
    if (current_cost < best_cost - 1e-12 * std::fabs(best_cost)) {
      best_cost = current_cost;
      scale = options.temperature * std::max(std::fabs(best_cost), 1.0);
      result.choice = current;
      last_improvement = i;
      ++result.improvements;
    }
  }
  result.iterations = i;
  result.cost = objective.evaluate(result.choice);
  double start_cost = objective.evaluate(start);
  if (result.cost > start_cost) {  // only rounding drift can get here
    result.choice = start;
    result.cost = start_cost;
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
  return result;
}

}  // namespace pase
