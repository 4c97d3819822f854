#include "random_objective.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <tuple>

namespace pase::test {

std::vector<int32_t> class_map(std::mt19937& rng, size_t configs, bool merge, int32_t& classes) {
  std::vector<int32_t> map(configs);
  if (!merge || configs == 1) {
    for (size_t s = 0; s < configs; ++s) map[s] = static_cast<int32_t>(s);
    classes = static_cast<int32_t>(configs);
    return map;
  }
  classes = 1 + static_cast<int32_t>(rng() % (configs - 1));  // 1 .. configs - 1
  for (size_t s = 0; s < configs; ++s) map[s] = s < static_cast<size_t>(classes) ? static_cast<int32_t>(s) : static_cast<int32_t>(rng() % static_cast<uint32_t>(classes));
  std::shuffle(map.begin(), map.end(), rng);
  return map;
}

Objective random_objective(std::mt19937& rng, int n, uint32_t max_configs, bool merge) {
  Objective objective;
  for (int v = 0; v < n; ++v) {
    std::vector<double> cost(1 + rng() % max_configs);
    for (double& c : cost) c = static_cast<double>(rng() % 1000);
    objective.vertex_cost.push_back(cost);
  }
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v)
      for (int copies = static_cast<int>(rng() % 3) - 1; copies > 0 || (copies == 0 && rng() % 2); --copies) {
        PairCost pair;
        pair.u = u;
        pair.v = v;
        pair.u_class = class_map(rng, objective.config_count(u), merge && rng() % 4 != 0, pair.u_classes);
        pair.v_class = class_map(rng, objective.config_count(v), merge && rng() % 4 != 0, pair.v_classes);
        const PairCost* previous = objective.pairs.empty() ? nullptr : &objective.pairs.back();
        if (merge && previous && previous->u_classes == pair.u_classes && previous->v_classes == pair.v_classes &&
            rng() % 2) {
          pair.cost = previous->cost;
        } else {
          auto matrix = std::make_shared<std::vector<double>>();
          for (int32_t i = 0; i < pair.u_classes * pair.v_classes; ++i) matrix->push_back(static_cast<double>(rng() % 500));
          pair.cost = std::move(matrix);
        }
        objective.pairs.push_back(pair);
        if (copies == 0) break;
      }
  return objective;
}

double brute_force(const Objective& objective, std::vector<int32_t>& best_choice) {
  size_t n = objective.vertex_count();
  std::vector<int32_t> choice(n, 0);
  double best = std::numeric_limits<double>::infinity();
  while (true) {
    double cost = objective.evaluate(choice);
    if (cost < best) {
      best = cost;
      best_choice = choice;
    }
    if (!next_assignment(choice, [&](size_t v) { return objective.config_count(v); })) return best;
  }
}

std::vector<std::string> vertex_names(size_t n) {
  std::vector<std::string> names;
  for (size_t v = 0; v < n; ++v) names.push_back("v" + std::to_string(v));
  return names;
}

bool next_assignment(std::vector<int32_t>& digits, const std::function<size_t(size_t)>& radix) {
  for (size_t i = 0; i < digits.size(); ++i) {
    if (++digits[i] < static_cast<int32_t>(radix(i))) return true;
    digits[i] = 0;
  }
  return false;
}

Objective repeated_blocks(std::mt19937& rng, int size, int blocks, int separators) {
  Objective objective;
  std::vector<std::vector<double>> block_costs(static_cast<size_t>(size));
  for (auto& cost : block_costs) {
    cost.resize(2 + rng() % 3);
    for (double& c : cost) c = static_cast<double>(rng() % 1000);
  }
  auto matrix = [&](size_t rows, size_t cols) {
    auto m = std::make_shared<std::vector<double>>(rows * cols);
    for (double& c : *m) c = static_cast<double>(rng() % 500);
    return m;
  };
  auto identity = [](size_t configs) {
    std::vector<int32_t> map(configs);
    for (size_t i = 0; i < configs; ++i) map[i] = static_cast<int32_t>(i);
    return map;
  };
  objective.vertex_cost.push_back({5, 1, 7});  // prefix
  for (int b = 0; b < blocks; ++b)
    for (const auto& cost : block_costs) objective.vertex_cost.push_back(cost);
  objective.vertex_cost.push_back({3, 9});  // suffix
  const int suffix = 1 + size * blocks;
  auto add = [&](int u, int v, std::shared_ptr<const std::vector<double>> cost) {
    PairCost pair;
    pair.u = u;
    pair.v = v;
    pair.u_class = identity(objective.config_count(static_cast<size_t>(u)));
    pair.v_class = identity(objective.config_count(static_cast<size_t>(v)));
    pair.u_classes = static_cast<int32_t>(pair.u_class.size());
    pair.v_classes = static_cast<int32_t>(pair.v_class.size());
    pair.cost = std::move(cost);
    objective.pairs.push_back(std::move(pair));
  };
  // Inside a block: a path plus random forward edges.
  std::vector<std::tuple<int, int, std::shared_ptr<const std::vector<double>>>> inner, across;
  for (int i = 0; i + 1 < size; ++i) inner.emplace_back(i, i + 1, nullptr);
  for (int extra = 0; extra < size / 2; ++extra) {
    int a = static_cast<int>(rng() % static_cast<uint32_t>(size)), b = static_cast<int>(rng() % static_cast<uint32_t>(size));
    if (a != b) inner.emplace_back(std::min(a, b), std::max(a, b), nullptr);
  }
  for (int s = 0; s < separators; ++s) {
    const int from = size - 1 - s;
    across.emplace_back(from, static_cast<int>(rng() % static_cast<uint32_t>(size)), nullptr);
    if (rng() % 2) across.emplace_back(from, static_cast<int>(rng() % static_cast<uint32_t>(size)), nullptr);
  }
  for (auto& [a, b, m] : inner) m = matrix(block_costs[static_cast<size_t>(a)].size(), block_costs[static_cast<size_t>(b)].size());
  for (auto& [a, b, m] : across) m = matrix(block_costs[static_cast<size_t>(a)].size(), block_costs[static_cast<size_t>(b)].size());
  auto first_in = matrix(3, block_costs[0].size());
  auto last_out = matrix(block_costs[static_cast<size_t>(size - 1)].size(), 2);
  add(0, 1, first_in);
  for (int b = 0; b < blocks; ++b) {
    const int base = 1 + b * size;
    for (auto& [a, c, m] : inner) add(base + a, base + c, m);
    if (b + 1 < blocks)
      for (auto& [a, c, m] : across) add(base + a, base + size + c, m);
  }
  add(suffix - 1, suffix, last_out);
  return objective;
}


MemoryTables random_memory(std::mt19937& rng, const Objective& objective, uint32_t weights, uint32_t activations) {
  MemoryTables memory;
  memory.offset.push_back(0);
  for (size_t v = 0; v < objective.vertex_count(); ++v) {
    for (size_t s = 0; s < objective.config_count(v); ++s) {
      memory.weights.push_back(rng() % weights);
      memory.activations.push_back(rng() % activations);
    }
    memory.offset.push_back(memory.weights.size());
  }
  return memory;
}

}  // namespace pase::test
