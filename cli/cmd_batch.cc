// `pase batch DIR_OR_FILES... --devices 8,32`: solves a whole zoo for CI. One
// line per graph and device count, a JSON/CSV summary, and a check against a
// recorded summary (--expect). Keeps going after a failure; exits 1 if any
// graph failed to load or solve, or an optimum moved.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <new>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/byte_size.h"
#include "cli/commands.h"
#include "cli/text_output.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/memory_options.h"
#include "cli/model_options.h"
#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "graphs/error.h"
#include "graphs/graph_file.h"
#include "graphs/json_document.h"
#include "graphs/json_reader.h"
#include "solver/memory_cap.h"
#include "solver/solve.h"

namespace pase {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

struct BatchCliOptions {
  std::vector<std::string> inputs;
  std::vector<int64_t> devices;
  CostModelOptions model;
  MemoryCliOptions memory;
  std::string summary;
  std::string expect;
};

/// One graph at one device count.
struct BatchResult {
  std::string graph;  ///< the graph's name (the file stem if it did not load)
  std::string file;
  int64_t devices = 0;
  std::string status;  ///< ok, error, refused, mismatch
  double cost = 0.0;
  uint64_t memory = 0;  ///< bytes per device of the strategy
  double gap = 0.0;     ///< under a cap: its proven gap
  double seconds = 0.0;
  std::string message;  ///< the error, or the expected cost on a mismatch
};

constexpr double kExpectTolerance = 1e-9;  // relative, as docs/formats.md promises between implementations

std::string extension_of(const std::string& path) { return fs::path(path).extension().string(); }

// Directories contribute their *.json files (sorted, not recursive); anything else is taken as a file.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code error;
    if (!fs::is_directory(input, error)) {
      files.push_back(input);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(input, error))
      if (entry.is_regular_file(error) && entry.path().extension() == ".json") found.push_back(entry.path().string());
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

json machine_json(const Machine& machine) {
  return {{"flops_tflops", machine.flops_tflops}, {"bandwidth_gbps", machine.bandwidth_gbps}};
}

json summary_json(const std::vector<BatchResult>& results, const CostModel& model, const MemoryOptions& memory,
                  std::optional<uint64_t> cap) {
  json doc;
  doc["format"] = "pase-batch-summary";
  doc["version"] = 1;
  doc["cost_model"] = model.name();
  doc["cost_unit"] = model.unit();
  doc["machine"] = machine_json(model.machine());
  doc["dtype"] = dtype_name(memory.dtype);
  doc["optimizer"] = optimizer_name(memory.optimizer);
  doc["cap_bytes"] = cap ? json(*cap) : json(nullptr);
  doc["results"] = json::array();
  for (const BatchResult& r : results) {
    json entry = {{"graph", r.graph}, {"file", r.file}, {"devices", r.devices}, {"status", r.status}};
    const bool solved = r.status == "ok" || r.status == "mismatch";
    entry["cost"] = solved ? json(r.cost) : json(nullptr);
    entry["per_device_bytes"] = solved ? json(r.memory) : json(nullptr);
    entry["gap"] = solved && cap ? json(r.gap) : json(nullptr);
    entry["seconds"] = r.seconds;
    if (!r.message.empty()) entry["message"] = r.message;
    doc["results"].push_back(entry);
  }
  return doc;
}

std::string summary_csv(const std::vector<BatchResult>& results) {
  // The memory columns come last: columns that existed keep their places.
  std::ostringstream csv;
  csv << "graph,file,devices,status,cost,seconds,message,per_device_bytes,gap\n";
  for (const BatchResult& r : results) {
    const bool solved = r.status == "ok" || r.status == "mismatch";
    csv << csv_field(r.graph) << "," << csv_field(r.file) << "," << r.devices << "," << r.status << ","
        << (solved ? format_number("%.17g", r.cost) : "") << "," << format_number("%.6f", r.seconds) << ","
        << csv_field(r.message) << "," << (solved ? std::to_string(r.memory) : "") << ","
        << (solved ? format_number("%.9g", r.gap) : "") << "\n";
  }
  return csv.str();
}

using ExpectKey = std::pair<std::string, int64_t>;  // (graph, devices)

// Reads a summary written by --summary (JSON): the recorded optimum of every ok entry.
std::map<ExpectKey, double> read_expectations(const std::string& path, const CostModel& model) {
  const std::string text = read_text_file(path);
  nlohmann::json document;
  try {
    document = parse_json_document(text, path);
  } catch (const InputError& error) {
    throw InputError(std::string(error.what()) + " (--expect takes a summary written by --summary FILE.json)");
  }
  JsonReader root(document, path);
  root.expect_object("a JSON object at the top level");
  const std::string kFormat = "pase-batch-summary";
  if (auto format = root.optional("format"); !format || format->value() != kFormat)
    root.required("format").fail("expected \"" + kFormat + "\"");
  root.check_header(kFormat, 1);
  const auto cost_model = root.optional("cost_model");
  const std::string recorded_model = cost_model ? cost_model->as_string() : "pase";
  if (recorded_model != model.name())
    cost_model->fail("recorded with '" + recorded_model + "', this run uses '" + model.name() + "'");
  if (auto machine = root.optional("machine")) {
    const Machine here = model.machine();
    auto recorded = [&](const std::string& key, double otherwise) {
      auto field = machine->optional(key);
      return field ? field->as_number() : otherwise;
    };
    if (recorded("flops_tflops", here.flops_tflops) != here.flops_tflops ||
        recorded("bandwidth_gbps", here.bandwidth_gbps) != here.bandwidth_gbps)
      machine->fail("recorded with " + json_excerpt(machine->value()) + ", this run uses " + machine_json(here).dump());
  }
  std::map<ExpectKey, double> expected;
  std::vector<JsonReader> results = root.required("results").items("results");
  for (size_t i = 0; i < results.size(); ++i) {
    JsonReader entry = results[i].as_subject("results[" + std::to_string(i) + "]");
    std::string graph = entry.required("graph").as_string();
    int64_t devices = entry.required("devices").as_int();
    auto cost = entry.optional("cost");
    if (!cost || !cost->value().is_number()) continue;  // a recorded failure: nothing to compare
    expected[{graph, devices}] = cost->value().get<double>();
  }
  return expected;
}

}  // namespace

CommandRunner register_batch(CLI::App& app) {
  auto o = std::make_shared<BatchCliOptions>();
  CLI::App* cmd = app.add_subcommand("batch", "Solve every graph of a directory (or a list of files) at several device counts");
  cmd->add_option("inputs", o->inputs, "Graph files, or directories of *.json graph files")->required();
  cmd->add_option("--devices,-p", o->devices, "Device counts, comma-separated (8,32)")->required()->delimiter(',');
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/true);
  cmd->add_option("--summary", o->summary, "Write a summary: FILE.json or FILE.csv");
  cmd->add_option("--expect", o->expect, "Fail if an optimum differs (rel. 1e-9) from this summary JSON");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    std::vector<std::unique_ptr<CostModel>> models;
    for (int64_t p : o->devices) models.push_back(make_cost_model(o->model, p));
    const MemoryOptions memory_model = memory_options(o->memory);
    const std::optional<uint64_t> cap = memory_cap(o->memory);
    const CapOptions search = cap_options(o->memory);
    std::string summary_kind = extension_of(o->summary);
    if (!o->summary.empty() && summary_kind != ".json" && summary_kind != ".csv")
      throw InputError("--summary: expected a file name ending in .json or .csv, got '" + o->summary + "'");
    std::map<ExpectKey, double> expected;
    if (!o->expect.empty()) expected = read_expectations(o->expect, *models[0]);

    const std::vector<std::string> files = expand_inputs(o->inputs);
    if (files.empty()) throw InputError("batch: no *.json graph files found in the given inputs");
    const bool progress = isatty(STDERR_FILENO) != 0;
    const size_t steps = files.size() * o->devices.size();
    size_t step = 0, failed = 0, mismatched = 0, checked = 0;
    std::vector<BatchResult> results;
    const bool whole = models[0]->unit() == "flop";  // FLOP counts print whole; seconds need digits
    auto report = [&](const BatchResult& r) {
      if (progress) std::cerr << "\r\033[K" << std::flush;  // clear the progress line first
      char line[256];
      std::string cost = r.status == "ok" || r.status == "mismatch" ? format_number(r.cost < 1e17 && whole ? "%.0f" : "%.9g", r.cost) : "-";
      const bool solved = r.status == "ok" || r.status == "mismatch";
      std::string memory = solved ? format_gib(r.memory) + " GiB" : "-";
      if (solved && cap) memory += r.gap == 0 ? " (gap 0)" : " (gap " + format_number("%.3g", 100 * r.gap) + "%)";
      std::snprintf(line, sizeof line, "%-14s p=%-6lld %20s  %-22s %9.3f s  ", r.graph.c_str(), static_cast<long long>(r.devices),
                    cost.c_str(), memory.c_str(), r.seconds);
      std::cout << line << r.status << (r.message.empty() ? "" : ": " + r.message) << std::endl;
      results.push_back(r);
    };

    for (const std::string& file : files) {
      std::string load_error;
      Graph graph;
      try {
        graph = load_graph_input(file);
      } catch (const InputError& error) {
        load_error = error.what();
      }
      std::string name = load_error.empty() ? graph.name : fs::path(file).stem().string();
      for (size_t i = 0; i < o->devices.size(); ++i) {
        const int64_t p = o->devices[i];
        ++step;
        if (progress) std::cerr << "\r\033[K[" << step << "/" << steps << "] " << name << " p=" << p << " ..." << std::flush;
        BatchResult r{name, file, p, "ok", 0.0, 0, 0.0, 0.0, ""};
        auto start = std::chrono::steady_clock::now();
        if (!load_error.empty()) {
          r.status = "error";
          r.message = load_error;
        } else {
          try {
            CostTables tables = build_cost_tables(graph, *models[i]);
            const MemoryTables memory = build_memory_tables(graph, tables, memory_model);
            if (!cap) {
              Solution solution = solve(graph, tables, SolveOptions{});
              r.cost = solution.cost;
              r.memory = plan_memory(memory, solution.choice).total();
            } else {
              MemoryPricedDp dp(graph, tables, memory, SolveOptions{});
              CappedSolution capped = solve_under_cap(dp, tables.objective, memory, *cap, search);
              if (!capped.feasible) {
                r.status = "refused";
                r.message = "no strategy fits in " + std::to_string(*cap) + " bytes per device: the least any needs is " +
                            std::to_string(capped.least_memory) + " bytes (" + format_gib(capped.least_memory) + " GiB)";
              }
              r.cost = capped.cost;
              r.memory = capped.memory;
              r.gap = capped.gap;
            }
          } catch (const InputError& error) {
            r.status = "error";
            r.message = error.what();
          } catch (const ResourceError& error) {
            r.status = "refused";
            r.message = error.what();
          } catch (const std::bad_alloc&) {
            r.status = "refused";
            r.message = "out of memory";
          }
        }
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (r.status == "ok") {
          auto it = expected.find({r.graph, p});
          if (it != expected.end()) {
            ++checked;
            if (std::fabs(r.cost - it->second) > kExpectTolerance * std::fabs(it->second)) {
              r.status = "mismatch";
              r.message = "expected " + format_number("%.17g", it->second);
              ++mismatched;
            }
          }
        } else {
          ++failed;
        }
        report(r);
      }
    }
    if (progress) std::cerr << "\r\033[K" << std::flush;
    if (!o->summary.empty()) {
      std::string text = summary_kind == ".json" ? summary_json(results, *models[0], memory_model, cap).dump(2) + "\n" : summary_csv(results);
      write_text_file(o->summary, text);
    }
    std::cout << "batch: " << results.size() - failed - mismatched << " ok, " << failed << " failed, " << mismatched
              << " mismatched";
    if (!o->expect.empty()) std::cout << " (" << checked << " of " << expected.size() << " expected optima checked)";
    std::cout << "\n";
    return failed || mismatched ? kExitInputError : kExitOk;
  };
}

}  // namespace pase
