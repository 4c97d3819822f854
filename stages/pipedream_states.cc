#include "stages/pipedream_states.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "base/error.h"

namespace pase {
namespace {

using Antichain = std::vector<int>;

// A set of layers, one bit each: the closures of a chain of n layers hold
// n²/2 members in all.
class LayerSet {
 public:
  explicit LayerSet(size_t layers = 0) : bits_((layers + 63) / 64, 0) {}
  void insert(int layer) { bits_[static_cast<size_t>(layer) / 64] |= uint64_t{1} << (layer % 64); }
  void insert_all(const LayerSet& other) {
    for (size_t w = 0; w < bits_.size(); ++w) bits_[w] |= other.bits_[w];
  }
  [[nodiscard]] bool count(int layer) const { return bits_[static_cast<size_t>(layer) / 64] >> (layer % 64) & 1; }
  [[nodiscard]] std::vector<int> members() const {
    std::vector<int> out;
    for (size_t w = 0; w < bits_.size(); ++w)
      for (uint64_t word = bits_[w]; word; word &= word - 1)
        out.push_back(static_cast<int>(w * 64 + static_cast<size_t>(__builtin_ctzll(word))));
    return out;
  }

 private:
  std::vector<uint64_t> bits_;
};

// The profile graph as the optimizer holds it after its removals: node
// order and edge order as in the file.
class LayerGraph {
 public:
  explicit LayerGraph(const ProfileGraph& profile) : profile_(profile), alive_(profile.nodes.size(), 1) {
    out_.resize(profile.nodes.size());
    in_.resize(profile.nodes.size());
    for (const auto& [from, to] : profile.edges) {
      out_[from].push_back(to);
      in_[to].push_back(from);
    }
  }

  void remove(int node) {
    alive_[node] = 0;
    for (int to : out_[node]) in_[to].erase(std::find(in_[to].begin(), in_[to].end(), node));
    for (int from : in_[node]) out_[from].erase(std::find(out_[from].begin(), out_[from].end(), node));
    out_[node].clear();
    in_[node].clear();
  }

  std::vector<int> sources() const { return ends(in_); }
  std::vector<int> sinks() const { return ends(out_); }
  const std::vector<int>& out(int node) const { return out_[node]; }
  const ProfileNode& node(int n) const { return profile_.nodes[n]; }

  // Every node before `node` (its predecessors, transitively), memoised.
  const LayerSet& ancestors(int node) { return closure(node, in_, ancestors_); }
  const LayerSet& descendants(int node) { return closure(node, out_, descendants_); }

  // Depth-first from every node, to refuse a cycle before the closures recurse into it.
  bool has_cycle() const {
    std::vector<int> state(profile_.nodes.size(), 0);  // 0 new, 1 on the path, 2 done
    for (size_t start = 0; start < state.size(); ++start) {
      if (state[start]) continue;
      std::vector<std::pair<int, size_t>> stack = {{static_cast<int>(start), 0}};
      state[start] = 1;
      while (!stack.empty()) {
        auto& [n, next] = stack.back();
        if (next < out_[n].size()) {
          const int to = out_[n][next++];
          if (state[to] == 1) return true;
          if (state[to] == 0) {
            state[to] = 1;
            stack.push_back({to, 0});
          }
        } else {
          state[n] = 2;
          stack.pop_back();
        }
      }
    }
    return false;
  }

 private:
  std::vector<int> ends(const std::vector<std::vector<int>>& edges) const {
    std::vector<int> out;
    for (size_t n = 0; n < alive_.size(); ++n)
      if (alive_[n] && edges[n].empty()) out.push_back(static_cast<int>(n));
    return out;
  }

  // Every layer reachable from `node` along `edges`, memoised; depth first
  // with a stack of its own (a chain of thousands of layers).
  const LayerSet& closure(int node, const std::vector<std::vector<int>>& edges, std::map<int, LayerSet>& memo) {
    std::vector<std::pair<int, size_t>> stack = {{node, 0}};
    while (!stack.empty()) {
      const int n = stack.back().first;
      if (memo.count(n)) {
        stack.pop_back();
        continue;
      }
      const size_t next = stack.back().second++;
      if (next < edges[n].size()) {
        if (!memo.count(edges[n][next])) stack.push_back({edges[n][next], 0});
        continue;
      }
      LayerSet all(profile_.nodes.size());
      for (int to : edges[n]) {
        all.insert(to);
        all.insert_all(memo.at(to));
      }
      memo.emplace(n, std::move(all));
      stack.pop_back();
    }
    return memo.at(node);
  }

  const ProfileGraph& profile_;
  std::vector<char> alive_;
  std::vector<std::vector<int>> out_, in_;
  std::map<int, LayerSet> ancestors_, descendants_;
};

// The antichain DAG, as graph.py's antichain_dag builds it.
class AntichainDag {
 public:
  AntichainDag(LayerGraph& graph, ResourceError too_many_states) : graph_(graph), too_many_states_(std::move(too_many_states)) {}

  void build(int source) {
    Antichain start = {source};
    node_of(start);
    std::vector<Antichain> queue = {start};
    std::set<std::vector<std::string>> expanded;
    for (size_t head = 0; head < queue.size(); ++head) {
      const Antichain antichain = queue[head];
      if (!expanded.insert(key(antichain)).second) continue;
      const int from = node_of(antichain);
      if (augmented_.size() > kMaxPipeDreamStates) throw too_many_states_;
      for (const Antichain& next : next_antichains(antichain)) {
        const int to = node_of(next);
        add_edge(from, to);
        queue.push_back(next);
      }
    }
  }

  // The DAG's nodes in graph.py's topological order: depth first from each
  // node in insertion order, children in edge order, reverse post-order.
  std::vector<int> topological_order() const {
    std::vector<int> order;
    std::vector<char> marked(augmented_.size(), 0);
    for (int start : inserted_) {
      if (marked[start]) continue;
      std::vector<std::pair<int, size_t>> stack = {{start, 0}};
      marked[start] = 1;
      while (!stack.empty()) {
        auto& [n, next] = stack.back();
        if (next < edges_[n].size()) {
          const int to = edges_[n][next++];
          if (!marked[to]) {
            marked[to] = 1;
            stack.push_back({to, 0});
          }
        } else {
          order.push_back(n);
          stack.pop_back();
        }
      }
    }
    std::reverse(order.begin(), order.end());
    return order;
  }

  const Antichain& augmented(int node) const { return augmented_[node]; }
  size_t size() const { return inserted_.size(); }
  const std::vector<int>& edges(int node) const { return edges_[node]; }

 private:
  std::vector<std::string> key(const Antichain& antichain) const {
    std::vector<std::string> ids;
    for (int n : antichain) ids.push_back(graph_.node(n).id);
    std::sort(ids.begin(), ids.end());
    return ids;
  }

  int node_of(const Antichain& antichain) {
    auto [it, inserted] = nodes_.emplace(key(antichain), static_cast<int>(augmented_.size()));
    if (inserted) {
      augmented_.push_back(augment(antichain));
      edges_.emplace_back();
      in_dag_.push_back(0);
    }
    return it->second;
  }

  void add_edge(int from, int to) {
    for (int n : {from, to})
      if (!in_dag_[n]) {
        in_dag_[n] = 1;
        inserted_.push_back(n);
      }
    edges_[from].push_back(to);
  }

  // The antichain with the earlier nodes that still feed a node outside it
  // (graph.py's augment_antichain; its set of them taken in id order).
  Antichain augment(const Antichain& antichain) {
    std::set<int> extra;
    for (int a : antichain) {
      const LayerSet& before = graph_.ancestors(a);
      for (int p : before.members())
        for (int o : graph_.out(p))
          if (!before.count(o) && o != a) extra.insert(p);
    }
    std::vector<int> sorted(extra.begin(), extra.end());
    std::sort(sorted.begin(), sorted.end(), [&](int x, int y) { return graph_.node(x).id < graph_.node(y).id; });
    sorted.insert(sorted.end(), antichain.begin(), antichain.end());
    return sorted;
  }

  // Drops the nodes another node of the list comes after (deaugment).
  Antichain deaugment(const Antichain& augmented) {
    Antichain out;
    for (int n : augmented) {
      bool before_another = false;
      for (int m : augmented) before_another = before_another || graph_.descendants(n).count(m);
      if (!before_another && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
    }
    return out;
  }

  std::vector<Antichain> next_antichains(const Antichain& antichain) {
    std::vector<Antichain> out;
    const Antichain augmented = augment(antichain);
    for (int node : augmented)
      for (int next : graph_.out(node)) {
        if (std::find(antichain.begin(), antichain.end(), next) != antichain.end()) continue;
        bool reaches_augmented = false;
        for (int m : augmented) reaches_augmented = reaches_augmented || graph_.descendants(next).count(m);
        if (reaches_augmented) continue;
        Antichain replaced = augmented;
        std::replace(replaced.begin(), replaced.end(), node, next);
        out.push_back(deaugment(replaced));
      }
    return out;
  }

  LayerGraph& graph_;
  ResourceError too_many_states_;
  std::map<std::vector<std::string>, int> nodes_;
  std::vector<Antichain> augmented_;
  std::vector<std::vector<int>> edges_;
  std::vector<char> in_dag_;
  std::vector<int> inserted_;  // the DAG's nodes in the order edges first named them
};

bool starts_with(const std::string& text, const std::string& prefix) { return text.compare(0, prefix.size(), prefix) == 0; }

}  // namespace

std::vector<PipeDreamState> pipedream_states(const ProfileGraph& profile, const std::string& source) {
  if (profile.nodes.size() > kMaxPipeDreamStates)
    throw ResourceError(source + ": " + std::to_string(profile.nodes.size()) + " layers, more than the " +
                        std::to_string(kMaxPipeDreamStates) + " states the planner takes");
  LayerGraph graph(profile);
  if (graph.has_cycle()) throw InputError(source + ": the profile's graph has a cycle");
  for (int n : graph.sources())
    if (starts_with(profile.nodes[n].description, "Input")) graph.remove(n);
  for (int n : graph.sinks())
    if (starts_with(profile.nodes[n].description, "__getitem__")) graph.remove(n);
  const std::vector<int> sources = graph.sources();
  if (sources.empty()) throw InputError(source + ": no layer is left once the inputs are set aside");
  AntichainDag dag(graph, ResourceError(source + ": the profile's branches make more than " +
                                         std::to_string(kMaxPipeDreamStates) +
                                         " antichains; PipeDream compresses a branchy graph's branches before it "
                                         "plans (its optimizer/scripts/compress_graph_branches.py)"));
  dag.build(sources[0]);
  if (dag.size() < 2)
    throw InputError(source + ": one layer after the inputs (" + profile.nodes[sources[0]].id +
                     "): there is nothing to partition");

  const std::vector<int> order = dag.topological_order();
  std::vector<int> position(order.size());
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int>(i);
  std::vector<PipeDreamState> states(order.size());
  for (size_t i = 0; i < order.size(); ++i) {
    PipeDreamState& state = states[i];
    const Antichain& antichain = dag.augmented(order[i]);
    std::set<int> covered;
    for (int a : antichain) {
      state.antichain.push_back(profile.nodes[a].id);
      state.output_activation_bytes += profile.nodes[a].activation_bytes;
      covered.insert(a);
      for (int b : graph.ancestors(a).members()) covered.insert(b);
    }
    for (int n : covered) {
      const ProfileNode& layer = profile.nodes[n];
      state.compute_seconds += (layer.forward_ms + layer.backward_ms) / 1000.0;
      state.activation_bytes += layer.activation_bytes;
      state.parameter_bytes += layer.parameter_bytes;
    }
  }
  // Every state before each one in the DAG, by position: in a topological
  // order a state's direct predecessors come earlier, their sets first (one
  // bit per state, or-ed along the edges).
  const size_t words = (order.size() + 63) / 64;
  std::vector<std::vector<uint64_t>> before(order.size(), std::vector<uint64_t>(words, 0));
  std::vector<std::vector<int>> direct(order.size());
  for (size_t j = 0; j < order.size(); ++j)
    for (int to : dag.edges(order[j])) direct[static_cast<size_t>(position[to])].push_back(static_cast<int>(j));
  for (size_t i = 0; i < order.size(); ++i) {
    for (int p : direct[i]) {
      before[i][static_cast<size_t>(p) / 64] |= uint64_t{1} << (p % 64);
      for (size_t w = 0; w < words; ++w) before[i][w] |= before[static_cast<size_t>(p)][w];
    }
    for (size_t p = 0; p < i; ++p)
      if (before[i][p / 64] >> (p % 64) & 1) states[i].predecessors.push_back(static_cast<int>(p));
  }
  return states;
}

}  // namespace pase
