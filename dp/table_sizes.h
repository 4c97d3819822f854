#pragma once
// Sizing the tables of a plan before anything is allocated, and refusing a
// plan past the limits (internal to the dp library; measure_tables and
// dp_threads are dp.h's).
#include <cstdint>
#include <string>
#include <vector>

#include "dp/dp.h"
#include "dp/table_job.h"

namespace pase {

/// Mixed-radix strides of the configurations of `scope`, the last fastest.
[[nodiscard]] std::vector<uint64_t> strides_of(const std::vector<int>& scope, const Objective& objective);

// For each pair, the first earlier pair it repeats (same ends, same matrix,
// same classes), or -1. A node that lists one tensor many times has one such
// pair per listing; the DP folds repeats into one factor, so 100,000 listings
// cost 100,000 row additions rather than 100,000 rows held at once.
[[nodiscard]] std::vector<int> repeated_pairs(const Objective& objective);

// The largest vertex's needs, which every thread's FillScratch is sized for:
// configurations, members of D(v), and factors (edges to later vertices plus
// tables waiting) that a sweep may add.
struct FillShape {
  size_t configs = 0, members = 0, factors = 0;
};

/// The largest vertex's needs in `plan`.
[[nodiscard]] FillShape fill_shape(const Objective& objective, const EliminationPlan& plan);

// Bytes of the buffers v's table is computed with, besides the tables: its
// edge rows, the class digit of each member of D(v) no waiting table reads,
// each edge's row per digit of its other end, and the compact costs (if
// compacted) and argmins. Counted in the peak while v is filled.
[[nodiscard]] uint64_t working_bytes(const std::vector<EdgeRows>& edges, const TableJob& job, bool compacted);

}  // namespace pase
