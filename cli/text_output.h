#pragma once
// Text output shared by the subcommands that write tables (solve, evaluate, compare, batch, frontier).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pase {

/// `text` as one CSV field: quoted (quotes doubled) when it holds a comma, quote or newline.
[[nodiscard]] std::string csv_field(const std::string& text);

/// `value` formatted with a printf format for one double ("%.6f").
[[nodiscard]] std::string format_number(const char* format, double value);

/// A total cost as tables print it: FLOP are whole numbers worth printing in
/// full ("97098296512"); other units (seconds) get nine significant digits.
[[nodiscard]] std::string format_total(double cost, const std::string& unit);

/// A layer's device count in a strategy table, marked "*" when it is fewer
/// than the `devices` available (the others idle for that layer).
[[nodiscard]] std::string devices_cell(int64_t used, int64_t devices);

/// Columns `text` takes on a terminal: UTF-8 continuation bytes take none
/// ("·" is two bytes, one column).
[[nodiscard]] size_t display_width(const std::string& text);

/// `text` padded with spaces to `width` columns (display_width), on the left or right.
[[nodiscard]] std::string pad_left(const std::string& text, size_t width);
[[nodiscard]] std::string pad_right(const std::string& text, size_t width);

/// The footnote to the "*" marks, or "" when `marked` is 0.
[[nodiscard]] std::string fewer_devices_note(size_t marked, size_t layers, int64_t devices);

}  // namespace pase

#include "costmodel/training_setup.h"
#include "graphs/graph.h"
#include "dp/uniform_blocks.h"
#include "plans/build_plan.h"
#include "plans/plan.h"

namespace pase {

/// A mesh's axes as the tables print them: "dp=8 x tp=8".
[[nodiscard]] std::string mesh_shape_words(const Mesh& mesh);

/// One line per tied weight read in another layout than it is held in
/// (plans/tied_weights.h): what moving it costs a step, apart from the total.
[[nodiscard]] std::string weight_reshard_lines(const PlanResult& placed, const std::string& unit);

/// How a step runs, for a memory line: "" for the PaSE step, else e.g.
/// "; 32 micro-batches of 16, ZeRO-1 on 98 layers, recomputed 214 of 294 layers".
[[nodiscard]] std::string training_words(const Graph& graph, const TrainingSetup& setup, int64_t micro_batch_size);

/// A layer's techniques as a table cell under per-layer choices (`--zero
/// auto`, `--recompute auto`): "recompute", "ZeRO-3", "recompute ZeRO-1",
/// or "-" for neither (a layer without weights has no ZeRO stage).
[[nodiscard]] std::string techniques_cell(const Vertex& vertex, const TrainingSetup& setup);

/// The table's last column under per-layer choices: its header, then each
/// vertex's cell, each after two spaces; empty when the setup fixes both
/// techniques for every layer (the column would repeat one value).
[[nodiscard]] std::vector<std::string> techniques_column(const Graph& graph, const TrainingSetup& setup);

/// The runs --uniform-blocks made uniform: "31 blocks of 17 layers (from
/// 'model/layers.0/post_attention_layernorm', and one more cut in two by its
/// ends)", runs joined by "; "; "no run of identical blocks" when none.
[[nodiscard]] std::string uniform_runs_words(const Graph& graph, const std::vector<UniformRun>& runs);

}  // namespace pase
