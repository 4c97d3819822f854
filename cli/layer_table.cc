#include "cli/layer_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "base/duration_text.h"
#include "cli/text_output.h"
#include "graphs/layer_work.h"
#include "strategy/strategy_file.h"

namespace pase {
namespace {

// What a row shows, cell by cell.
struct Row {
  std::string name, op, config, devices, cost, share, time, techniques;
  double cost_value = 0;
  bool fewer = false;
};

// The name with its digits as one mark: the rows of two blocks read alike.
std::string name_skeleton(const std::string& name) {
  std::string skeleton;
  for (size_t i = 0; i < name.size(); ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(name[i])) != 0;
    if (!digit) skeleton += name[i];
    else if (i == 0 || !std::isdigit(static_cast<unsigned char>(name[i - 1]))) skeleton += '#';
  }
  return skeleton;
}

// One id per distinct row as a block compares it: everything but the layer's number.
std::vector<int> row_ids(const std::vector<Row>& rows) {
  std::map<std::string, int> ids;
  std::vector<int> out;
  for (const Row& r : rows) {
    // The exact cost, not its rounded text: blocks alike to the last bit.
    const std::string key = name_skeleton(r.name) + '\n' + r.op + '\n' + r.config + '\n' + r.devices + '\n' +
                            r.techniques + '\n' + format_number("%a", r.cost_value);
    out.push_back(ids.emplace(key, static_cast<int>(ids.size())).first->second);
  }
  return out;
}

// A run of identical blocks from row `first`: `period` rows each, `count` blocks (count 1: none).
struct BlockRun {
  size_t period = 0, count = 1;
};

BlockRun block_run_at(const std::vector<int>& ids, size_t first) {
  const size_t n = ids.size();
  for (size_t period = 1; first + 2 * period <= n; ++period) {
    if (ids[first] != ids[first + period]) continue;
    auto same_block = [&](size_t block) {
      for (size_t j = 0; j < period; ++j)
        if (ids[first + j] != ids[first + block * period + j]) return false;
      return true;
    };
    if (!same_block(1)) continue;
    BlockRun run{period, 2};
    while (first + (run.count + 1) * period <= n && same_block(run.count)) ++run.count;
    if ((run.count - 1) * period >= 2) return run;  // folding one row into one line says nothing
  }
  return {};
}

// A block's name: its rows' common path ("model/layers.1"), else its first row's.
std::string block_label(const std::vector<Row>& rows, size_t first, size_t period) {
  std::string common = rows[first].name;
  for (size_t j = 1; j < period; ++j) {
    const std::string& name = rows[first + j].name;
    size_t k = 0;
    while (k < common.size() && k < name.size() && common[k] == name[k]) ++k;
    common.resize(k);
  }
  if (period == 1) return common;
  const size_t slash = common.rfind('/');
  return slash == std::string::npos || slash == 0 ? rows[first].name : common.substr(0, slash);
}

std::string folded_line(const std::vector<Row>& rows, size_t first, const BlockRun& run, double total,
                        const std::string& unit, const CostTables& tables) {
  double cost = 0;
  for (size_t i = first + run.period; i < first + run.count * run.period; ++i) cost += rows[i].cost_value;
  const std::string shown = block_label(rows, first, run.period);
  std::string from = block_label(rows, first + run.period, run.period);
  std::string to = block_label(rows, first + (run.count - 1) * run.period, run.period);
  if (from == to || from == shown) {  // names that do not tell the blocks apart
    from = rows[first + run.period].name;
    to = rows[first + run.count * run.period - 1].name;
  }
  const double seconds = step_seconds(tables, cost);
  return from + " to " + to + ": " + std::to_string(run.count - 1) + " blocks of " + std::to_string(run.period) +
         " layers, each as " + shown + " above (" + format_cost_text(cost, unit) + ", " +
         format_number("%.1f%%", total > 0 ? 100 * cost / total : 0.0) +
         (seconds >= 0 && unit != "seconds" ? ", " + format_duration(seconds) : "") + " together)\n";
}

std::vector<Row> table_rows(const LayerTableInput& in) {
  const std::vector<LayerReport> reports = layer_reports(*in.graph, *in.tables, *in.choice);
  const std::vector<std::string> techniques = techniques_column(*in.graph, *in.setup);
  const int64_t devices = in.tables->machine.devices;
  std::vector<Row> rows;
  for (size_t i = 0; i < reports.size(); ++i) {
    const LayerReport& r = reports[i];
    Row row{r.name, r.op, config_letters(r.dims, r.config), devices_cell(r.devices_used, devices),
            format_cost_text(r.cost, in.tables->unit),
            format_number("%.1f%%", in.total > 0 ? 100.0 * r.cost / in.total : 0.0), "",
            techniques.empty() ? "" : techniques[i + 1].substr(2), r.cost, r.devices_used < devices};
    const double seconds = step_seconds(*in.tables, r.cost);
    if (seconds >= 0) row.time = format_duration(seconds);
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

std::string format_flop(double flop) {
  static const char* const kPrefixes[] = {"", "k", "M", "G", "T", "P", "E", "Z"};
  size_t prefix = 0;
  double value = flop;
  while (std::fabs(value) >= 999.5 && prefix + 1 < std::size(kPrefixes)) {
    value /= 1000;
    ++prefix;
  }
  return format_number("%.3g", value) + " " + kPrefixes[prefix] + "FLOP";
}

std::string format_cost_text(double cost, const std::string& unit) {
  if (std::fabs(cost) < 1e-12) cost = 0;  // rounding in a difference of sums
  if (unit == "flop") return format_flop(cost);
  if (unit == "seconds") return cost < 0 ? "-" + format_duration(-cost) : format_duration(cost);
  return format_number("%.6g", cost) + " " + unit;
}

double step_seconds(const CostTables& tables, double cost) {
  if (tables.unit == "seconds") return cost;
  if (tables.unit == "flop" && tables.machine.flops_tflops > 0) return cost / (tables.machine.flops_tflops * 1e12);
  return -1;
}

namespace {

// The table of `rows` (table_rows of `in`).
std::string table_of_rows(const std::vector<Row>& rows, const LayerTableInput& in) {
  const bool in_seconds = in.tables->unit == "seconds";
  const bool timed = !in_seconds && step_seconds(*in.tables, 1) >= 0;
  const bool techniques = in.setup->per_layer_auto();  // techniques_column's condition
  Row header{"layer", "op", "config", "devices", in_seconds ? "time" : "cost", "share", timed ? "time" : "",
             techniques ? "techniques" : ""};
  size_t w[7] = {};
  auto widen = [&](const Row& r) {
    const std::string* cells[7] = {&r.name, &r.op, &r.config, &r.devices, &r.cost, &r.share, &r.time};
    for (size_t c = 0; c < 7; ++c) w[c] = std::max(w[c], display_width(*cells[c]));
  };
  widen(header);
  for (const Row& r : rows) widen(r);
  auto line = [&](const Row& r) {
    std::string text = pad_right(r.name, w[0]) + "  " + pad_right(r.op, w[1]) + "  " + pad_right(r.config, w[2]) + "  " +
                       pad_left(r.devices, w[3]) + "  " + pad_left(r.cost, w[4]) + "  " + pad_left(r.share, w[5]);
    if (timed) text += "  " + pad_left(r.time, w[6]);
    if (techniques) text += "  " + r.techniques;
    return text + "\n";
  };
  std::string out = line(header);
  const std::vector<int> ids = in.all_layers ? std::vector<int>() : row_ids(rows);
  size_t fewer = 0, folded = 0;
  for (size_t i = 0; i < rows.size();) {
    const BlockRun run = in.all_layers ? BlockRun{} : block_run_at(ids, i);
    const size_t shown = run.count > 1 ? run.period : 1;
    for (size_t j = i; j < i + shown; ++j) out += line(rows[j]);
    if (run.count > 1) {
      out += folded_line(rows, i, run, in.total, in.tables->unit, *in.tables);
      folded += (run.count - 1) * run.period;
    }
    for (size_t j = i; j < i + std::max<size_t>(shown, run.count * run.period); ++j) fewer += rows[j].fewer;
    i += std::max<size_t>(shown, run.count * run.period);
  }
  if (folded > 0)
    out += std::to_string(folded) + " of " + std::to_string(rows.size()) +
           " layers folded into the blocks they repeat (--all-layers prints every row)\n";
  return out + fewer_devices_note(fewer, rows.size(), in.tables->machine.devices);
}

}  // namespace

std::string layer_table(const LayerTableInput& in) { return table_of_rows(table_rows(in), in); }

std::string strategy_table(const LayerTableInput& in, const std::string& label, const std::string& after_total) {
  const CostTables& tables = *in.tables;
  std::ostringstream out;
  out << in.graph->name << " on " << tables.machine.devices << " devices (" << tables.machine.flops_tflops
      << " TFLOP/s, " << tables.machine.bandwidth_gbps << " GB/s), cost model " << tables.cost_model << " ("
      << tables.unit << ")" << label << "\n";
  const std::vector<Row> rows = table_rows(in);
  double layer_total = 0;
  for (const Row& r : rows) layer_total += r.cost_value;
  out << table_of_rows(rows, in) << total_words(tables, in.total, layer_total) << after_total << "\n";
  const std::string throughput = throughput_words(*in.graph, tables, *in.setup, in.total);
  if (!throughput.empty()) out << "language model: " << throughput << "\n";
  return out.str();
}

std::string total_words(const CostTables& tables, double total, double layer_total) {
  const std::string& unit = tables.unit;
  std::string text = "total cost " + format_total(total, unit) + " " + unit + " (" + format_cost_text(total, unit) +
                     "; layers " + format_cost_text(layer_total, unit) + ", redistribution " +
                     format_cost_text(total - layer_total, unit) + ")";
  if (unit == "flop" && step_seconds(tables, total) >= 0)
    text += ", " + format_duration(step_seconds(tables, total)) + " a step at " +
            format_number("%g", tables.machine.flops_tflops) + " TFLOP/s";
  return text;
}

std::string throughput_words(const Graph& graph, const CostTables& tables, const TrainingSetup& setup, double total) {
  double tokens = 0, model_flop = 0;
  for (size_t i = 0; i < graph.vertices.size(); ++i) {
    const Vertex& v = graph.vertices[i];
    if (v.op == "embedding" && !v.inputs.empty()) {
      double ids = 1;
      for (int64_t extent : v.inputs[0].shape) ids *= static_cast<double>(extent);
      tokens = std::max(tokens, ids);
    }
    const VertexModel& model = tables.models[i];  // as the tables priced it
    const std::vector<int32_t> whole(model.domain.size(), 1);
    const LayerWork work = describe_work(model, whole.data());
    if (work.has_gemm && v.op != "embedding") model_flop += 3 * work.gemm.batch * work.gemm.m * work.gemm.n * work.gemm.k;
  }
  // The pase model counts a multiply-add as one operation (its FLOP are the
  // paper's); a machine's peak, as every published MFU, counts two.
  if (tables.unit != "flop") model_flop *= 2;
  const double seconds = step_seconds(tables, total);
  if (tokens == 0 || seconds <= 0) return "";
  const double step_tokens = tokens * static_cast<double>(setup.micro_batches);
  const double peak = tables.machine.flops_tflops * 1e12 * static_cast<double>(tables.machine.devices);
  const double rate = step_tokens / seconds;
  const std::string rate_words = rate >= 1e6   ? format_number("%.3g", rate / 1e6) + "M"
                                 : rate >= 1e3 ? format_number("%.3g", rate / 1e3) + "k"
                                               : format_number("%.3g", rate);
  return rate_words + " tokens/s (" + format_number("%.0f", step_tokens) + " a step), MFU " +
         format_number("%.1f%%", 100 * model_flop * static_cast<double>(setup.micro_batches) / (seconds * peak)) +
         " of " + format_number("%g", tables.machine.flops_tflops) + " TFLOP/s per device";
}

}  // namespace pase
