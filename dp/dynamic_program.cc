#include "dp/dynamic_program.h"

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include "base/check.h"
#include "dp/table_expansion.h"

namespace pase {
namespace {

// An edge's classes index its cost matrix: one class per configuration of
// each end, each below that end's class count.
void check_classes(const Objective& objective, const PairCost& pair) {
  auto check_end = [&](int vertex, const SharedArray<int32_t>& classes, int32_t count) {
    PASE_ASSERT(classes.size() == objective.config_count(vertex), vertex, classes.size(), objective.config_count(vertex));
    if (classes.empty()) return;
    auto [low, high] = std::minmax_element(classes.begin(), classes.end());
    PASE_ASSERT(*low >= 0 && *high < count, vertex, *low, *high, count);
  };
  check_end(pair.u, pair.u_class, pair.u_classes);
  check_end(pair.v, pair.v_class, pair.v_classes);
  PASE_ASSERT(pair.cost && pair.cost->size() == static_cast<size_t>(pair.u_classes) * static_cast<size_t>(pair.v_classes),
              pair.u, pair.v, pair.u_classes, pair.v_classes, pair.cost ? pair.cost->size() : 0);
}

// The position of `w` in the dependent set `scope` (a member by construction).
int scope_index(const std::vector<int>& scope, int w, int v) {
  const size_t index = static_cast<size_t>(std::find(scope.begin(), scope.end(), w) - scope.begin());
  PASE_ASSERT(index < scope.size(), v, w, scope.size());
  return static_cast<int>(index);
}

}  // namespace

DynamicProgram::DynamicProgram(const Objective& objective, const EliminationPlan& plan, const TablePlan& sizes,
                               std::function<void(const DpProgress&)> progress, const std::vector<int>& same_as, size_t kept)
    : objective_(objective), plan_(plan), sizes_(sizes), n_(objective.vertex_count()), serial_(sizes.threads == 1),
      shape_(fill_shape(objective, plan)), argmins_(n_), incident_(n_), repeats_(objective.pairs.size()), inbox_(n_),
      inbox_mutex_(new std::mutex[n_]), pending_(n_, 0), component_cost_(n_, 0.0),
      progress_callback_(std::move(progress)), same_as_(same_as), followers_(n_), argmin_owner_(n_), retained_(n_),
      readers_left_(n_, 0), kept_(n_, 0) {
  PASE_ASSERT(kept <= n_ && (kept == 0 || same_as_.empty()), kept, n_, same_as_.size());
  for (size_t i = n_ - kept; i < n_; ++i) kept_[static_cast<size_t>(plan_.order[i])] = 1;
  const std::vector<int> repeat_of = repeated_pairs(objective_);
  for (size_t e = 0; e < objective_.pairs.size(); ++e) {
    if (repeat_of[e] >= 0) {
      repeats_[static_cast<size_t>(repeat_of[e])].push_back(static_cast<int>(e));
      continue;
    }
    incident_[objective_.pairs[e].u].push_back(static_cast<int>(e));
    incident_[objective_.pairs[e].v].push_back(static_cast<int>(e));
  }
  for (int v : plan_.order)
    if (!plan_.dependent[v].empty()) ++pending_[plan_.dependent[v].back()];
  for (size_t v = 0; v < n_; ++v) argmin_owner_[v] = static_cast<int>(v);
  for (int v : plan_.order)  // in order: a template's own owner is known first
    if (follows(v)) {
      const int model = same_as_[static_cast<size_t>(v)];
      // A template precedes its followers and follows nothing: it is computed
      // before any follower waits for it, and its table is its own.
      PASE_ASSERT(model >= 0 && static_cast<size_t>(model) < n_ && plan_.position[model] < plan_.position[v] &&
                      same_as_[static_cast<size_t>(model)] < 0 &&
                      sizes_.entries[v] == sizes_.entries[model] &&
                      objective_.config_count(v) == objective_.config_count(model) &&
                      plan_.dependent[v].size() == plan_.dependent[model].size(),
                  v, model);
      followers_[model].push_back(v);
      ++pending_[v];  // waits for its template too
      argmin_owner_[v] = argmin_owner_[model];
      if (reads_copy(v)) ++readers_left_[model];
    }
  progress_.tables = n_;
  progress_.work = sizes_.total_work;
  // On one thread the DP does not touch TBB at all: starting its scheduler
  // costs about 2 ms, as much as a whole small solve.
  if (!serial_) {
    arena_.emplace(sizes.threads);
    group_.emplace();
    thread_scratch_.emplace([this] { return new_scratch(); });
  }
}

DpResult DynamicProgram::run() {
  fill_all_tables();
  check_all_consumed();
  DpResult result;
  for (int v : plan_.order) result.cost += component_cost_[v];  // in plan order: deterministic
  result.choice = std::vector<int32_t>(n_, 0);
  read_back_strategy(result.choice);
  result.stats = stats();
  return result;
}

std::vector<double> DynamicProgram::run_keeping(const std::vector<int>& kept) {
  fill_all_tables();
  check_all_consumed();
  double constant = 0;
  for (int v : plan_.order) constant += component_cost_[v];
  std::vector<uint64_t> stride = strides_of(kept, objective_);
  uint64_t entries = 1;
  for (int w : kept) entries *= objective_.config_count(w);
  std::vector<double> table(entries, constant);
  std::vector<int32_t> choice(n_, 0);
  std::vector<const Message*> waiting;
  for (int w : kept)
    for (const auto& message : inbox_[w]) waiting.push_back(message.get());
  std::sort(waiting.begin(), waiting.end(),
            [](const Message* a, const Message* b) { return a->producer_position < b->producer_position; });
  std::vector<int> kept_pairs;
  for (size_t e = 0; e < objective_.pairs.size(); ++e)
    if (kept_[static_cast<size_t>(objective_.pairs[e].u)] && kept_[static_cast<size_t>(objective_.pairs[e].v)])
      kept_pairs.push_back(static_cast<int>(e));
  for (uint64_t index = 0; index < entries; ++index) {
    for (size_t i = 0; i < kept.size(); ++i)
      choice[static_cast<size_t>(kept[i])] = static_cast<int32_t>(index / stride[i] % objective_.config_count(kept[i]));
    double sum = table[index];
    for (int w : kept) sum += objective_.vertex_cost[w][choice[w]];
    for (int e : kept_pairs) {
      const PairCost& pair = objective_.pairs[static_cast<size_t>(e)];
      sum += pair.at(choice[pair.u], choice[pair.v]);
    }
    for (const Message* message : waiting) {
      uint64_t at = 0;
      for (size_t i = 0; i < message->scope.size(); ++i)
        at += static_cast<uint64_t>(choice[message->scope[i]]) * message->stride[i];
      sum += message->cost[at];
    }
    table[index] = sum;
  }
  return table;
}

DpStats DynamicProgram::stats() const {
  DpStats stats;
  stats.peak_table_bytes = peak_bytes_.load();
  for (int v : plan_.order) {
    stats.max_dependent_set = std::max(stats.max_dependent_set, plan_.dependent[v].size());
    stats.table_entries += sizes_.entries[v];
  }
  return stats;
}

void DynamicProgram::fill_all_tables() {
  // The vertices that wait for no table, listed before any task starts:
  // once tasks run, they count `pending_` down, and a consumer that reached
  // zero is started by its last producer. Reading `pending_` while spawning
  // raced with that and could start such a consumer twice, the second time
  // without its inbox, which wrote wrong argmins (found by the thread-count
  // determinism test failing about one run in ten).
  std::vector<int> leaves;
  for (int v : plan_.order)
    if (pending_[v] == 0 && !kept_[static_cast<size_t>(v)]) leaves.push_back(v);
  if (serial_) {
    // Depth first, as a one-thread task pool would go: a consumer runs as
    // soon as its last table arrives, so few tables wait at once.
    for (int leaf : leaves) {
      serial_ready_.push_back(leaf);
      while (!serial_ready_.empty()) {
        int v = serial_ready_.back();
        serial_ready_.pop_back();
        while (v >= 0) v = process(v);
      }
    }
    return;
  }
  arena_->execute([&] {
    for (int v : leaves) group_->run([this, v] { process(v); });
    group_->wait();
  });
}

void DynamicProgram::report_progress(int v) {
  if (!progress_callback_) return;
  std::lock_guard<std::mutex> lock(progress_mutex_);
  ++progress_.tables_done;
  progress_.work_done += sizes_.entries[v] * objective_.config_count(v);
  progress_callback_(progress_);
}

void DynamicProgram::check_all_consumed() const {
  for (int v : plan_.order)
    if (!kept_[static_cast<size_t>(v)]) PASE_ASSERT(pending_[v] == 0 && inbox_[v].empty(), v, pending_[v], inbox_[v].size());
}

int DynamicProgram::process(int v) {
  std::unique_ptr<Message> table;
  if (follows(v)) {
    table = copied_table(v);
    release_inbox(v);
  } else {
    std::vector<EdgeRows> edges = edge_rows(v);
    std::vector<MessageRead> reads = waiting_reads(v);
    table = new_table(v);
    compute_table(v, edges, reads, *table);
    release_inbox(v);
    if (readers_left_[v] > 0) retain(v, *table);
  }
  report_progress(v);
  int next = send(v, std::move(table));
  for (int follower : followers_[v]) release(follower);
  return next;
}

bool DynamicProgram::reads_copy(int v) const {
  const std::vector<int>& scope = plan_.dependent[v];
  return scope.empty() || !follows(scope.back());
}

void DynamicProgram::retain(int v, const Message& table) {
  retained_[v] = std::make_unique<RawBuffer<double>>(table.cost.size());
  std::copy(table.cost.data(), table.cost.data() + table.cost.size(), retained_[v]->data());
  add_live(table.cost.size() * sizeof(double));
}

std::unique_ptr<Message> DynamicProgram::copied_table(int v) {
  const int model = same_as_[static_cast<size_t>(v)];
  auto table = std::make_unique<Message>();
  table->scope = plan_.dependent[v];
  table->stride = strides_of(table->scope, objective_);
  table->producer_position = plan_.position[v];
  if (!reads_copy(v)) return table;
  const RawBuffer<double>& source = *retained_[model];
  table->cost = RawBuffer<double>(source.size());
  std::copy(source.data(), source.data() + source.size(), table->cost.data());
  add_live(source.size() * sizeof(double));
  std::lock_guard<std::mutex> lock(inbox_mutex_[model]);
  if (--readers_left_[model] == 0) {
    live_bytes_.fetch_sub(source.size() * sizeof(double));
    retained_[model].reset();
  }
  return table;
}

void DynamicProgram::release(int follower) {
  bool ready = false;
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_[follower]);
    PASE_ASSERT(pending_[follower] > 0, follower, pending_[follower]);
    ready = --pending_[follower] == 0;
  }
  if (!ready) return;
  if (serial_) serial_ready_.push_back(follower);
  else group_->run([this, follower] { process(follower); });
}

std::vector<EdgeRows> DynamicProgram::edge_rows(int v) const {
  const std::vector<int>& scope = plan_.dependent[v];
  const size_t configs = objective_.config_count(v);
  std::vector<EdgeRows> edges;
  for (int e : incident_[v]) {
    const PairCost& pair = objective_.pairs[e];
    int w = pair.u == v ? pair.v : pair.u;
    if (plan_.position[w] < plan_.position[v]) continue;  // already counted when w was processed
    check_classes(objective_, pair);
    EdgeRows rows;
    rows.scope_index = scope_index(scope, w, v);
    bool v_produces = pair.u == v;
    rows.w_class = v_produces ? &pair.v_class : &pair.u_class;
    int32_t w_classes = v_produces ? pair.v_classes : pair.u_classes;
    rows.rows.resize(static_cast<size_t>(w_classes) * configs);
    const std::vector<double>& matrix = *pair.cost;
    for (int32_t c = 0; c < w_classes; ++c)
      for (size_t s = 0; s < configs; ++s)
        rows.rows[static_cast<size_t>(c) * configs + s] =
            v_produces ? matrix[static_cast<size_t>(pair.u_class[s]) * pair.v_classes + c]
                       : matrix[static_cast<size_t>(c) * pair.v_classes + pair.v_class[s]];
    if (!repeats_[static_cast<size_t>(e)].empty()) {
      // Each repeat adds the same cost again: one addition per repeat, in pair order.
      const std::vector<double> once = rows.rows;
      for (size_t k = 0; k < repeats_[static_cast<size_t>(e)].size(); ++k)
        for (size_t i = 0; i < once.size(); ++i) rows.rows[i] += once[i];
    }
    edges.push_back(std::move(rows));
  }
  return edges;
}

std::vector<MessageRead> DynamicProgram::waiting_reads(int v) {
  const std::vector<int>& scope = plan_.dependent[v];
  // Tables arrive in any order; summing them in plan order keeps the result
  // identical bit for bit whatever the thread count.
  std::vector<std::unique_ptr<Message>>& waiting = inbox_[v];
  std::sort(waiting.begin(), waiting.end(),
            [](const auto& a, const auto& b) { return a->producer_position < b->producer_position; });
  std::vector<MessageRead> reads;
  for (const auto& message : waiting) {
    PASE_ASSERT(!message->scope.empty() && message->scope.back() == v, v, message->scope.size(), message->producer_position);
    MessageRead read;
    read.cost = message->cost.data();
    for (size_t i = 0; i + 1 < message->scope.size(); ++i)
      read.terms.emplace_back(scope_index(scope, message->scope[i], v), message->stride[i]);
    reads.push_back(std::move(read));
  }
  return reads;
}

std::unique_ptr<Message> DynamicProgram::new_table(int v) {
  const uint64_t entries = sizes_.entries[v];
  auto table = std::make_unique<Message>();
  table->scope = plan_.dependent[v];
  table->stride = strides_of(table->scope, objective_);
  table->producer_position = plan_.position[v];
  table->cost = RawBuffer<double>(entries);
  argmins_[v] = ArgminTable(entries, objective_.config_count(v));
  add_live(entries * sizeof(double) + argmins_[v].bytes());
  return table;
}

void DynamicProgram::compute_table(int v, const std::vector<EdgeRows>& edges, const std::vector<MessageRead>& reads, Message& table) {
  const uint64_t entries = sizes_.entries[v];
  TableJob job = plan_job(objective_, table.scope, objective_.config_count(v), objective_.vertex_cost[v].data(), edges, reads);
  PASE_ASSERT(job.entries >= 1 && job.entries <= entries, v, job.entries, entries);  // class digits never outnumber configurations
  const bool compacted = job.entries != entries;
  RawBuffer<double> compact_cost(compacted ? job.entries : 0);
  RawBuffer<uint32_t> compact_arg(job.entries);
  const uint64_t working = working_bytes(edges, job, compacted);
  add_live(working);
  double* out_cost = table.cost.data();
  fill(job, compacted ? compact_cost.data() : out_cost, compact_arg.data());
  const TableExpansion expand(objective_, table.scope, table.stride, job, compacted, compact_cost.data(),
                              compact_arg.data(), out_cost, argmins_[v]);
  if (serial_ || entries < 4096) expand(tbb::blocked_range<uint64_t>(0, entries));
  else tbb::this_task_arena::isolate([&] { tbb::parallel_for(tbb::blocked_range<uint64_t>(0, entries, 4096), expand); });
  live_bytes_.fetch_sub(working);
}

void DynamicProgram::fill(const TableJob& job, double* out_cost, uint32_t* out_arg) {
  // Every thread's buffers are sized for the largest vertex (fill_shape).
  PASE_ASSERT(job.configs <= shape_.configs && job.radix.size() <= shape_.members &&
                  job.edges.size() + job.reads.size() <= shape_.factors,
              job.configs, shape_.configs, job.radix.size(), shape_.members, job.edges.size(), job.reads.size(),
              shape_.factors);
  const TableFill table(job, out_cost, out_arg);
  if (serial_) {
    if (!serial_scratch_) serial_scratch_.emplace(new_scratch());
    table.fill(tbb::blocked_range<uint64_t>(0, table.items()), *serial_scratch_);
    return;
  }
  auto fill_items = [&](const tbb::blocked_range<uint64_t>& items) { table.fill(items, thread_scratch_->local()); };
  if (table.items() <= table.grain()) {
    fill_items(tbb::blocked_range<uint64_t>(0, table.items()));
    return;
  }
  tbb::this_task_arena::isolate(
      [&] { tbb::parallel_for(tbb::blocked_range<uint64_t>(0, table.items(), table.grain()), fill_items); });
}

void DynamicProgram::release_inbox(int v) {
  uint64_t consumed = 0;
  for (const auto& message : inbox_[v]) consumed += message->cost.size() * sizeof(double);
  inbox_[v].clear();
  live_bytes_.fetch_sub(consumed);
}

int DynamicProgram::send(int v, std::unique_ptr<Message> table) {
  if (table->scope.empty()) {
    component_cost_[v] = table->cost[0];
    live_bytes_.fetch_sub(sizeof(double));
    return -1;
  }
  int consumer = table->scope.back();
  bool ready = false;
  {
    std::lock_guard<std::mutex> lock(inbox_mutex_[consumer]);
    inbox_[consumer].push_back(std::move(table));
    PASE_ASSERT(pending_[consumer] > 0, v, consumer, pending_[consumer]);  // a consumer is started once
    ready = --pending_[consumer] == 0;
  }
  if (!ready || kept_[static_cast<size_t>(consumer)]) return -1;  // a kept vertex is never eliminated
  if (serial_) return consumer;
  group_->run([this, consumer] { process(consumer); });
  return -1;
}

void DynamicProgram::read_back_strategy(std::vector<int32_t>& choice) const {
  for (size_t i = plan_.order.size(); i-- > 0;) {
    int v = plan_.order[i];
    if (kept_[static_cast<size_t>(v)]) continue;  // given
    const std::vector<int>& scope = plan_.dependent[v];
    std::vector<uint64_t> stride = strides_of(scope, objective_);
    uint64_t index = 0;
    for (size_t j = 0; j < scope.size(); ++j) index += static_cast<uint64_t>(choice[scope[j]]) * stride[j];
    PASE_ASSERT(index < sizes_.entries[v], v, index, sizes_.entries[v]);
    choice[v] = static_cast<int32_t>(argmins_[static_cast<size_t>(argmin_owner_[v])].get(index));
    PASE_ASSERT(static_cast<size_t>(choice[v]) < objective_.config_count(v), v, choice[v], objective_.config_count(v));
  }
}

FillScratch DynamicProgram::new_scratch() {
  add_live(FillScratch::bytes(shape_.configs, shape_.members, shape_.factors));
  return FillScratch(shape_.configs, shape_.members, shape_.factors);
}

void DynamicProgram::add_live(uint64_t bytes) {
  uint64_t now = live_bytes_.fetch_add(bytes) + bytes;
  uint64_t peak = peak_bytes_.load();
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace pase
