#include "memorycap/cap_local_search.h"

#include <cmath>
#include <limits>

namespace pase {

CapLocalSearch::CapLocalSearch(const Objective& objective, const MemoryTables& memory)
    : objective_(objective), memory_(memory), incident_(objective.vertex_count()) {
  for (size_t e = 0; e < objective.pairs.size(); ++e) {
    incident_[objective.pairs[e].u].push_back(static_cast<int>(e));
    incident_[objective.pairs[e].v].push_back(static_cast<int>(e));
  }
}

double CapLocalSearch::delta_cost(const std::vector<int32_t>& choice, size_t v, size_t to) const {
  const size_t from = static_cast<size_t>(choice[v]);
  double delta = objective_.vertex_cost[v][to] - objective_.vertex_cost[v][from];
  for (int e : incident_[v]) {
    const PairCost& pair = objective_.pairs[e];
    const size_t u_config = static_cast<size_t>(choice[pair.u]), v_config = static_cast<size_t>(choice[pair.v]);
    const size_t u_to = static_cast<size_t>(pair.u) == v ? to : u_config;
    const size_t v_to = static_cast<size_t>(pair.v) == v ? to : v_config;
    delta += pair.at(u_to, v_to) - pair.at(u_config, v_config);
  }
  return delta;
}

bool CapLocalSearch::repair(std::vector<int32_t>& choice, uint64_t cap) const {
  const size_t n = objective_.vertex_count();
  uint64_t bytes = plan_memory(memory_, choice).total();
  // Each vertex's best saving move (least cost per byte saved), refreshed for
  // the moved vertex and its neighbours only: the others' moves are unchanged.
  struct Move {
    double ratio = std::numeric_limits<double>::infinity();
    int32_t to = -1;
  };
  std::vector<Move> best(n);
  auto refresh = [&](size_t v) {
    Move move;
    const uint64_t now = memory_.bytes(v, static_cast<size_t>(choice[v]));
    for (size_t t = 0; t < objective_.config_count(v); ++t) {
      const uint64_t then = memory_.bytes(v, t);
      if (then >= now) continue;
      const double ratio = delta_cost(choice, v, t) / static_cast<double>(now - then);
      if (ratio < move.ratio) move = {ratio, static_cast<int32_t>(t)};
    }
    best[v] = move;
  };
  for (size_t v = 0; v < n; ++v) refresh(v);
  while (bytes > cap) {
    size_t pick = n;
    for (size_t v = 0; v < n; ++v)
      if (best[v].to >= 0 && (pick == n || best[v].ratio < best[pick].ratio)) pick = v;
    if (pick == n) return false;
    bytes -= memory_.bytes(pick, static_cast<size_t>(choice[pick])) - memory_.bytes(pick, static_cast<size_t>(best[pick].to));
    choice[pick] = best[pick].to;
    refresh(pick);
    for (int e : incident_[pick]) refresh(static_cast<size_t>(objective_.pairs[e].u) == pick ? objective_.pairs[e].v : objective_.pairs[e].u);
  }
  return true;
}

void CapLocalSearch::improve(std::vector<int32_t>& choice, uint64_t cap, int max_sweeps) const {
  const size_t n = objective_.vertex_count();
  uint64_t bytes = plan_memory(memory_, choice).total();
  if (bytes > cap) return;  // only strategies that fit are improved
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    bool moved = false;
    for (size_t v = 0; v < n; ++v) {
      const uint64_t now = memory_.bytes(v, static_cast<size_t>(choice[v]));
      const uint64_t room = cap - (bytes - now);  // the most bytes v may take
      double best = 0.0;
      int32_t to = -1;
      for (size_t t = 0; t < objective_.config_count(v); ++t) {
        if (memory_.bytes(v, t) > room) continue;
        const double delta = delta_cost(choice, v, t);
        // A real saving, not rounding noise between equal-cost strategies.
        if (delta < best && -delta > 1e-12 * std::abs(objective_.vertex_cost[v][t])) {
          best = delta;
          to = static_cast<int32_t>(t);
        }
      }
      if (to < 0) continue;
      bytes = bytes - now + memory_.bytes(v, static_cast<size_t>(to));
      choice[v] = to;
      moved = true;
    }
    if (!moved) return;
  }
}

}  // namespace pase
