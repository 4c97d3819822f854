#include "memorycap/vertex_options.h"

#include <map>
#include <stdexcept>
#include <tuple>

namespace pase {
namespace {

struct Candidate {
  double cost;
  uint64_t weights, activations;
  int32_t variant;
  [[nodiscard]] uint64_t bytes() const { return weights + activations; }
};

// Whether `a` makes `b` needless: no dearer and no larger, and strictly
// better in one, or equal in both and the lower variant.
bool covers(const Candidate& a, const Candidate& b) {
  if (a.cost > b.cost || a.bytes() > b.bytes()) return false;
  if (a.cost < b.cost || a.bytes() < b.bytes()) return true;
  return a.variant < b.variant;
}

// One vertex's options, built once per kind.
struct VertexOptions {
  SharedArray<int32_t> first, config, variant;
  SharedArray<double> cost;
  size_t memory_offset = 0;
};

VertexOptions build_vertex(size_t v, size_t configs, const std::vector<VariantPrices>& variants, uint32_t allowed,
                           MemoryTables& memory) {
  std::vector<int32_t> first = {0}, config, variant;
  std::vector<double> cost;
  VertexOptions out;
  out.memory_offset = memory.weights.size();
  std::vector<Candidate> candidates;
  for (size_t s = 0; s < configs; ++s) {
    candidates.clear();
    for (size_t k = 0; k < variants.size(); ++k) {
      if (!(allowed >> k & 1U)) continue;
      const MemoryTables& bytes = *variants[k].memory;
      const size_t at = bytes.offset[v] + s;
      candidates.push_back({variants[k].objective->vertex_cost[v][s], bytes.weights[at], bytes.activations[at],
                            static_cast<int32_t>(k)});
    }
    for (const Candidate& c : candidates) {
      bool needless = false;
      for (const Candidate& other : candidates) needless = needless || (&other != &c && covers(other, c));
      if (needless) continue;
      config.push_back(static_cast<int32_t>(s));
      variant.push_back(c.variant);
      cost.push_back(c.cost);
      memory.weights.push_back(c.weights);
      memory.activations.push_back(c.activations);
    }
    first.push_back(static_cast<int32_t>(config.size()));
  }
  out.first = std::move(first);
  out.config = std::move(config);
  out.variant = std::move(variant);
  out.cost = std::move(cost);
  return out;
}

}  // namespace

std::vector<int32_t> OptionSpace::configs_of(const std::vector<int32_t>& options) const {
  std::vector<int32_t> out(options.size());
  for (size_t v = 0; v < options.size(); ++v) out[v] = config[v][static_cast<size_t>(options[v])];
  return out;
}

std::vector<int32_t> OptionSpace::variants_of(const std::vector<int32_t>& options) const {
  std::vector<int32_t> out(options.size());
  for (size_t v = 0; v < options.size(); ++v) out[v] = variant[v][static_cast<size_t>(options[v])];
  return out;
}

OptionSpace expand_options(const Objective& base, const std::vector<VariantPrices>& variants,
                           const std::vector<uint32_t>& allowed) {
  const size_t n = base.vertex_count();
  if (variants.empty() || variants.size() > 32 || allowed.size() != n)
    throw std::logic_error("expand_options: 1 to 32 variants and an allowed set per vertex");
  OptionSpace space;
  space.memory.options = variants[0].memory->options;
  space.memory.offset.assign(n + 1, 0);
  space.first.resize(n);
  space.config.resize(n);
  space.variant.resize(n);
  space.objective.vertex_cost.resize(n);
  // A vertex's kind: its allowed variants and, in each, its shared costs and bytes.
  std::map<std::vector<const void*>, VertexOptions> kinds;
  for (size_t v = 0; v < n; ++v) {
    if (allowed[v] == 0) throw std::logic_error("expand_options: a vertex with no variant");
    std::vector<const void*> key = {reinterpret_cast<const void*>(static_cast<uintptr_t>(allowed[v]))};
    for (size_t k = 0; k < variants.size(); ++k)
      if (allowed[v] >> k & 1U) {
        key.push_back(variants[k].objective->vertex_cost[v].storage_id());
        key.push_back(reinterpret_cast<const void*>(static_cast<uintptr_t>(variants[k].memory->offset[v])));
      }
    auto [it, inserted] = kinds.try_emplace(std::move(key));
    if (inserted) it->second = build_vertex(v, base.config_count(v), variants, allowed[v], space.memory);
    const VertexOptions& kind = it->second;
    space.first[v] = kind.first;
    space.config[v] = kind.config;
    space.variant[v] = kind.variant;
    space.objective.vertex_cost[v] = kind.cost;
    space.memory.offset[v] = kind.memory_offset;
  }
  space.memory.offset[n] = space.memory.weights.size();
  // Each end's class map through its option -> configuration map, once per pair of arrays.
  std::map<std::pair<const void*, const void*>, SharedArray<int32_t>> composed;
  auto compose = [&](const SharedArray<int32_t>& classes, const SharedArray<int32_t>& config) {
    auto [it, inserted] = composed.try_emplace({classes.storage_id(), config.storage_id()});
    if (inserted) {
      std::vector<int32_t> of(config.size());
      for (size_t o = 0; o < config.size(); ++o) of[o] = classes[static_cast<size_t>(config[o])];
      it->second = std::move(of);
    }
    return it->second;
  };
  space.objective.pairs = base.pairs;
  for (PairCost& pair : space.objective.pairs) {
    pair.u_class = compose(pair.u_class, space.config[static_cast<size_t>(pair.u)]);
    pair.v_class = compose(pair.v_class, space.config[static_cast<size_t>(pair.v)]);
  }
  return space;
}

}  // namespace pase
