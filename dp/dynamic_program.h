#pragma once
// One run of the DP over a plan (internal to the dp library; solve_dp and
// eliminate_dp in dp.h drive it): it schedules the vertices, fills each table
// from its costs, edges and the tables waiting for it, sends it on, and reads
// the strategy back.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include <tbb/enumerable_thread_specific.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

#include "dp/dp.h"
#include "dp/table_fill.h"
#include "dp/table_job.h"
#include "dp/table_sizes.h"
#include "dp/table_storage.h"

namespace pase {

// One run of the DP over a plan. Each vertex's table is built from its own
// costs, its edges to later vertices and the tables waiting for it, then
// sent to the vertex that consumes it; back-substitution reads the argmins.
class DynamicProgram {
 public:
  DynamicProgram(const Objective& objective, const EliminationPlan& plan, const TablePlan& sizes,
                 std::function<void(const DpProgress&)> progress, const std::vector<int>& same_as, size_t kept = 0);

  // Fills every table; returns the optimum and the strategy.
  DpResult run();

  // Fills every table but the kept vertices'; returns the table the kept
  // vertices are left with, over their configurations (the first kept in
  // plan order slowest): their own costs, the edges among them and every
  // table waiting for them, summed in plan order, plus the optimum of any
  // component without a kept vertex.
  std::vector<double> run_keeping(const std::vector<int>& kept);

  [[nodiscard]] DpStats stats() const;

  // The argmin tables, for back-substitution after the DP is gone.
  std::vector<ArgminTable> take_argmins() { return std::move(argmins_); }

 private:
  // A vertex can be processed once every table waiting for it has arrived;
  // vertices whose tables do not depend on each other run concurrently.
  void fill_all_tables();

  void report_progress(int v);

  // Every table was consumed: no vertex still waits, no table is left unread.
  void check_all_consumed() const;

  // Builds v's table and sends it on. Returns the consumer it completed, if
  // any, for the serial driver to run next (in parallel it is started as a
  // task instead).
  int process(int v);

  [[nodiscard]] bool follows(int v) const { return !same_as_.empty() && same_as_[static_cast<size_t>(v)] >= 0; }

  // Whether a follower's table is read: by its consumer unless that follows
  // too (a follower reads no messages), or as a component's cost.
  [[nodiscard]] bool reads_copy(int v) const;

  // A template keeps a copy of its table for the followers that send theirs on.
  void retain(int v, const Message& table);

  // A follower's table: its template's entries (the template is done: the
  // follower waited for it), or none when nobody reads them.
  std::unique_ptr<Message> copied_table(int v);

  // A follower's template is done: one less thing to wait for.
  void release(int follower);

  // v's edges to vertices not yet processed, each as rows over v's
  // configurations, one row per class of the other end's configuration.
  std::vector<EdgeRows> edge_rows(int v) const;

  // How v reads each table waiting for it: the members of D(v) its entries
  // depend on, with their strides.
  std::vector<MessageRead> waiting_reads(int v);

  // Allocates v's cost table (sent on) and argmin table (kept).
  std::unique_ptr<Message> new_table(int v);

  // Fills v's table: over class combinations where that is smaller, then
  // expanded to every assignment of D(v).
  void compute_table(int v, const std::vector<EdgeRows>& edges, const std::vector<MessageRead>& reads, Message& table);

  // Fills a job's table: on this thread when it is small or the DP serial,
  // else in chunks across the arena. The wait for the chunks is isolated: a
  // waiting thread takes only this table's chunks, not another vertex, so at
  // most one vertex per thread holds its working buffers (the plan's bound).
  void fill(const TableJob& job, double* out_cost, uint32_t* out_arg);

  // Frees the tables v has read.
  void release_inbox(int v);

  // Hands v's table to its consumer, the earliest-processed member of D(v);
  // a table over nothing ends a connected component.
  int send(int v, std::unique_ptr<Message> table);

  // Back-substitution, latest vertex first: each argmin table is indexed by
  // the choices already made for D(v).
  void read_back_strategy(std::vector<int32_t>& choice) const;

  // A thread's fill buffers, allocated where it first fills (allocating them
  // up front, before the first table, made a one-thread Transformer p = 64
  // solve about 7% slower: placement, not size).
  FillScratch new_scratch();

  void add_live(uint64_t bytes);

  const Objective& objective_;
  const EliminationPlan& plan_;
  const TablePlan& sizes_;
  const size_t n_;
  const bool serial_;
  const FillShape shape_;
  std::vector<ArgminTable> argmins_;
  std::vector<std::vector<int>> incident_;  // pair indices per vertex, repeats left out
  std::vector<std::vector<int>> repeats_;   // per pair, the later pairs that repeat it
  std::vector<std::vector<std::unique_ptr<Message>>> inbox_;
  std::unique_ptr<std::mutex[]> inbox_mutex_;
  std::vector<int> pending_;
  std::vector<double> component_cost_;
  std::atomic<uint64_t> live_bytes_{0}, peak_bytes_{0};
  std::function<void(const DpProgress&)> progress_callback_;
  std::mutex progress_mutex_;
  DpProgress progress_;
  const std::vector<int>& same_as_;                          // followers' templates (empty: none)
  std::vector<std::vector<int>> followers_;                  // per template
  std::vector<int> argmin_owner_;                            // whose argmin table v reads back
  std::vector<std::unique_ptr<RawBuffer<double>>> retained_;  // templates' tables, while followers copy them
  std::vector<int> readers_left_;                            // followers still to copy each retained table
  std::vector<char> kept_;                                   // vertices left uneliminated (eliminate_dp)
  std::vector<int> serial_ready_;                            // serial path: vertices ready to run
  std::optional<tbb::task_arena> arena_;
  std::optional<tbb::task_group> group_;
  // Fill buffers: one on the serial path, else one per thread that fills,
  // kept across chunks and tables (a chunk can be a few microseconds of work).
  std::optional<FillScratch> serial_scratch_;
  std::optional<tbb::enumerable_thread_specific<FillScratch>> thread_scratch_;
};

}  // namespace pase
