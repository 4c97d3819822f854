#pragma once
// Planning one vertex's table (internal to the dp library): its edges as rows,
// the waiting tables it reads, and the space it is computed over (class
// digits for the members of D(v) that only edges read).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "dp/objective.h"

namespace pase {

// A factor of v's table that depends on one member w of D(v) through the
// class of w's configuration: rows[class * Cv + s] over v's configurations.
struct EdgeRows {
  int scope_index = 0;
  const SharedArray<int32_t>* w_class = nullptr;
  std::vector<double> rows;
};

// A table of an earlier vertex that v consumes: its offset for an assignment
// of D(v), then Cv contiguous entries (v is its fastest digit).
struct MessageRead {
  const double* cost = nullptr;
  std::vector<std::pair<int, uint64_t>> terms;  // (index in D(v), stride in the message)
};

// How one vertex's table is computed. A member of D(v) that no message reads
// enters only through edge costs, so the table depends on it only through the
// classes of its configuration: those members get a "virtual" digit per
// distinct class combination, the table is computed over that smaller space,
// then expanded.
struct TableJob {
  size_t configs = 0;
  const double* own = nullptr;
  std::vector<uint64_t> radix;                 // virtual radix per member of D(v)
  std::vector<uint64_t> stride;                // virtual strides, last member fastest
  uint64_t entries = 1;                        // virtual entries
  std::vector<std::vector<int32_t>> virtual_of;  // per member: config -> virtual digit (empty: identity)
  struct Edge {
    int scope_index;
    std::vector<const double*> row;            // virtual digit -> row over v's configurations
  };
  std::vector<Edge> edges;
  std::vector<const MessageRead*> reads;
};

// Plans v's table: which members of D(v) get a class digit, the virtual
// radices and strides, and each edge's row per virtual digit.
[[nodiscard]] TableJob plan_job(const Objective& objective, const std::vector<int>& scope, size_t configs,
                                const double* own, const std::vector<EdgeRows>& edges,
                                const std::vector<MessageRead>& reads);

}  // namespace pase
