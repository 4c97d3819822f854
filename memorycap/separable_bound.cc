#include "memorycap/separable_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "base/checked_math.h"

namespace pase {
namespace {

// A vertex's costs and bytes, and how many vertices share both (equal blocks
// share their arrays and their memory entries).
struct Priced {
  const double* cost = nullptr;
  const uint64_t* weights = nullptr;
  const uint64_t* activations = nullptr;
  size_t configs = 0;
  size_t count = 0;
};

std::vector<Priced> distinct_vertices(const Objective& objective, const MemoryTables& memory) {
  std::map<std::pair<const double*, size_t>, size_t> seen;
  std::vector<Priced> vertices;
  for (size_t v = 0; v < objective.vertex_count(); ++v) {
    const SharedArray<double>& cost = objective.vertex_cost[v];
    const auto [at, fresh] = seen.try_emplace({cost.data(), memory.offset[v]}, vertices.size());
    if (fresh)
      vertices.push_back({cost.data(), memory.weights.data() + memory.offset[v],
                          memory.activations.data() + memory.offset[v], cost.size(), 0});
    vertices[at->second].count += 1;
  }
  return vertices;
}

// At a price per byte: the sum of each vertex's least cost + price x bytes,
// and the bytes of those least configurations (the dual's slope, plus cap).
struct AtPrice {
  double value = 0, bytes = 0;
};

AtPrice at_price(const std::vector<Priced>& vertices, double price) {
  AtPrice at;
  for (const Priced& v : vertices) {
    double least = std::numeric_limits<double>::infinity(), bytes = 0;
    for (size_t s = 0; s < v.configs; ++s) {
      const double b = static_cast<double>(v.weights[s]) + static_cast<double>(v.activations[s]);
      const double priced = v.cost[s] + price * b;
      if (priced < least || (priced == least && b < bytes)) least = priced, bytes = b;
    }
    at.value += static_cast<double>(v.count) * least;
    at.bytes += static_cast<double>(v.count) * bytes;
  }
  return at;
}

}  // namespace

PricedBound separable_cap_bound(const Objective& objective, const MemoryTables& memory, uint64_t cap) {
  const std::vector<Priced> vertices = distinct_vertices(objective, memory);
  // Whether anything fits, in whole bytes (no rounding decides it).
  uint64_t least_bytes = 0;
  for (const Priced& v : vertices) {
    uint64_t least = kSaturated;
    for (size_t s = 0; s < v.configs; ++s) least = std::min(least, saturating_add(v.weights[s], v.activations[s]));
    least_bytes = saturating_add(least_bytes, saturating_mul(least, v.count));
  }
  if (least_bytes > cap) return {std::numeric_limits<double>::infinity(), 0};
  const double limit = static_cast<double>(cap);
  const AtPrice free = at_price(vertices, 0.0);
  if (free.bytes <= limit) return {free.value, 0};
  // The slope bytes(mu) - cap falls as mu grows: bisect (geometrically) for
  // where it crosses zero, keeping the best bound read on the way.
  PricedBound best{free.value, 0};
  const auto keep = [&](double price, const AtPrice& at) {
    if (at.value - price * limit > best.bound) best = {at.value - price * limit, price};
  };
  double low = 0, high = 1e-15;
  for (int k = 0; k < 400; ++k, high *= 4) {
    const AtPrice at = at_price(vertices, high);
    keep(high, at);
    if (at.bytes <= limit) break;
    low = high;
  }
  for (int k = 0; k < 48; ++k) {
    const double mid = low > 0 ? std::sqrt(low * high) : high / 2;
    const AtPrice at = at_price(vertices, mid);
    keep(mid, at);
    (at.bytes > limit ? low : high) = mid;
  }
  return best;
}

double rounded_price(double price) { return price > 0 ? std::exp2(std::floor(std::log2(price))) : 0.0; }

Objective priced_by_bytes(const Objective& objective, const MemoryTables& memory, double price) {
  Objective priced = objective;
  std::map<std::pair<const void*, size_t>, SharedArray<double>> made;
  for (size_t v = 0; v < objective.vertex_count(); ++v) {
    const SharedArray<double>& costs = objective.vertex_cost[v];
    auto [it, fresh] = made.try_emplace({costs.storage_id(), memory.offset[v]});
    if (fresh) {
      std::vector<double> with_bytes(costs.size());
      for (size_t s = 0; s < costs.size(); ++s) with_bytes[s] = costs[s] + price * static_cast<double>(memory.bytes(v, s));
      it->second = SharedArray<double>(std::move(with_bytes));
    }
    priced.vertex_cost[v] = it->second;
  }
  return priced;
}

}  // namespace pase
