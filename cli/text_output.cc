#include "cli/text_output.h"

#include <algorithm>
#include <array>
#include <cstdio>

#include "graphs/layer_weights.h"
#include "graphs/vertex_model.h"

namespace pase {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string format_number(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string format_total(double cost, const std::string& unit) {
  return format_number(unit == "flop" && cost < 1e17 ? "%.0f" : "%.9g", cost);
}

std::string devices_cell(int64_t used, int64_t devices) {
  return std::to_string(used) + (used < devices ? "*" : "");
}

size_t display_width(const std::string& text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string pad_left(const std::string& text, size_t width) {
  const size_t shown = display_width(text);
  return shown >= width ? text : std::string(width - shown, ' ') + text;
}

std::string pad_right(const std::string& text, size_t width) {
  const size_t shown = display_width(text);
  return shown >= width ? text : text + std::string(width - shown, ' ');
}

std::string fewer_devices_note(size_t marked, size_t layers, int64_t devices) {
  if (marked == 0) return "";
  return "* on fewer than the " + std::to_string(devices) + " devices (the others idle for that layer): " +
         std::to_string(marked) + " of " + std::to_string(layers) + " layers; `pase explain GRAPH --devices " +
         std::to_string(devices) + " --layer NAME` says why\n";
}

}  // namespace pase

namespace pase {

std::string training_words(const Graph& graph, const TrainingSetup& setup, int64_t micro_batch_size) {
  if (setup.plain_step()) return "";
  std::string text;
  auto add = [&](const std::string& part) { text += (text.empty() ? "; " : ", ") + part; };
  if (setup.micro_batches > 1)
    add(std::to_string(setup.micro_batches) + " micro-batches" +
        (micro_batch_size > 0 ? " of " + std::to_string(micro_batch_size) : ""));
  if (setup.zero != 0) {
    // The layers that hold a weight, whose state a stage shards, by stage
    // (each layer's own under --zero auto).
    std::array<size_t, kMaxZeroStage + 1> sharded{};
    for (const Vertex& v : graph.vertices)
      if (!layer_weights(v, build_vertex_model(v)).empty()) ++sharded[static_cast<size_t>(zero_stage_of(setup, v.zero))];
    std::string stages;
    for (int z = 1; z <= kMaxZeroStage; ++z)
      if (sharded[static_cast<size_t>(z)] > 0)
        stages += (stages.empty() ? "" : ", ") + std::string("ZeRO-") + std::to_string(z) + " on " +
                  std::to_string(sharded[static_cast<size_t>(z)]) + (sharded[static_cast<size_t>(z)] == 1 ? " layer" : " layers");
    if (setup.zero == kZeroAuto)
      add("ZeRO auto: " + (stages.empty() ? std::string("none") : stages) +
          (sharded[0] > 0 ? " (" + std::to_string(sharded[0]) + " unsharded)" : ""));
    else if (!stages.empty())
      add(stages);
  }
  if (setup.attention == Attention::Fused) add("fused attention");
  if (setup.recompute != Recompute::None) {
    size_t recomputed = 0;
    for (const Vertex& v : graph.vertices) recomputed += v.recompute;
    add("recomputed " + std::to_string(recomputed) + " of " + std::to_string(graph.vertices.size()) + " layers");
  }
  return text;
}

std::string techniques_cell(const Vertex& vertex, const TrainingSetup& setup) {
  std::string cell = vertex.recompute ? "recompute" : "";
  const int zero = zero_stage_of(setup, vertex.zero);
  if (zero > 0 && !layer_weights(vertex, build_vertex_model(vertex)).empty())
    cell += (cell.empty() ? "" : " ") + std::string("ZeRO-") + std::to_string(zero);
  return cell.empty() ? "-" : cell;
}

std::vector<std::string> techniques_column(const Graph& graph, const TrainingSetup& setup) {
  if (!setup.per_layer_auto()) return {};
  std::vector<std::string> column{"techniques"};
  for (const Vertex& v : graph.vertices) column.push_back(techniques_cell(v, setup));
  for (std::string& cell : column) cell = "  " + cell;
  return column;
}

std::string mesh_shape_words(const Mesh& mesh) {
  std::string text;
  for (size_t j = 0; j < mesh.shape.size(); ++j)
    text += (j ? " x " : "") + mesh.axes[j] + "=" + std::to_string(mesh.shape[j]);
  return text;
}

std::string weight_reshard_lines(const PlanResult& placed, const std::string& unit) {
  std::string out;
  for (const WeightReshard& r : placed.weight_reshards) {
    const std::string& holder = placed.plan.layers[r.holder].name;
    const std::string& reader = placed.plan.layers[r.reader].name;
    out += "tied weight '" + r.weight + "': held as layer '" + holder + "' lays it out, read by '" + reader + "' ";
    if (r.reshaped) {
      out += "with another shape: no framework export can hold it once\n";
      continue;
    }
    out += "in another layout: " + format_number("%.6g", r.realized_words) +
           " words each way a step; the tied weights' reshards cost " + format_total(placed.weight_reshard_cost, unit) +
           " " + unit + " more than the realized total (neither the search nor the placement weighs them)\n";
  }
  return out;
}

std::string uniform_runs_words(const Graph& graph, const std::vector<UniformRun>& runs) {
  if (runs.empty()) return "no run of identical blocks";
  std::string words;
  for (const UniformRun& run : runs)
    words += (words.empty() ? "" : "; ") + std::to_string(run.blocks) + " blocks of " + std::to_string(run.period) +
             " layers (from '" + graph.vertices[static_cast<size_t>(run.first)].name + "'" +
             (run.extended ? std::string(", and one more cut in two by its ends") : "") + ")";
  return words;
}

}  // namespace pase
