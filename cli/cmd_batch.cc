// `pase batch DIR_OR_FILES... --devices 8,32`: solves a whole zoo for CI. One
// line per graph and device count, a JSON/CSV summary, and a check against a
// recorded summary (--expect) keyed by file and p. Keeps going after a
// failure; exits 1 if any graph failed to load or solve, an optimum moved, or
// the coverage of the record changed (a graph or device count missing, a
// graph new).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include <nlohmann/json.hpp>

#include "base/byte_size.h"
#include "cli/batch_expectations.h"
#include "cli/count_option.h"
#include "cli/commands.h"
#include "base/duration_text.h"
#include "cli/layer_table.h"
#include "cli/text_output.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/memory_options.h"
#include "cli/training_solve.h"
#include "cli/mesh_choice.h"
#include "graphs/rebatch.h"
#include "cli/model_options.h"
#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "base/error.h"
#include "base/json_document.h"
#include "base/json_reader.h"
#include "memorycap/memory_cap.h"
#include "solve/solve_request.h"
#include "base/text_file.h"

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
  int threads = 0;
  uint64_t max_table_bytes = 0;  // the policy's (half of physical memory) unless given
  CLI::Option* max_table_bytes_option = nullptr;
  bool exact = false;
  uint64_t max_work = DpOptions{}.max_work;
  double timeout = 0.0;  // seconds per solve; 0: none
  int jobs = 1;
  std::string shard;     // "I/N"; empty: every graph
  bool timings = false;  // seconds in the summary (they vary from run to run)
  std::string mesh;      // empty: unplaced costs; search, auto or a shape: each optimum's cost as placed
  bool uniform_blocks = false;  // every block of a run one configuration per layer
};

/// One graph at one device count.
struct BatchResult {
  std::string graph;  ///< the graph's name (the file stem if it did not load)
  std::string file;   ///< as given, lexically normalized: with p, the key of --expect
  int64_t devices = 0;
  std::string status;  ///< ok, error, refused, timeout, mismatch
  double cost = 0.0;
  uint64_t memory = 0;  ///< bytes per device of the strategy
  double gap = 0.0;     ///< under a cap, or from a bounded solve: its proven gap
  bool bounded = false; ///< past the DP's limits: a bounded solve's answer
  double seconds = 0.0;
  std::string message;  ///< the error, or the expected cost on a mismatch
  std::string mesh;     ///< with --mesh: the mesh its cost is placed on ("dp=8 x tp=8")
};

/// Thrown from the DP's progress callback once a solve is past --timeout.
class BatchTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string extension_of(const std::string& path) { return fs::path(path).extension().string(); }

// One spelling per file, so that "./data/graphs/a.json" and "data/graphs/a.json" are one key.
std::string normalized_file(const std::string& path) { return fs::path(path).lexically_normal().generic_string(); }

// Directories contribute their *.json graph files and *.onnx models (sorted,
// not recursive); anything else is taken as a file.
std::vector<std::string> expand_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> files;
  for (const std::string& input : inputs) {
    std::error_code error;
    if (!fs::is_directory(input, error)) {
      files.push_back(normalized_file(input));
      continue;
    }
    std::vector<std::string> found;
    for (const auto& entry : fs::directory_iterator(input, error))
      if (entry.is_regular_file(error) && (entry.path().extension() == ".json" || entry.path().extension() == ".onnx"))
        found.push_back(normalized_file(entry.path().string()));
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

/// `--shard I/N`: this job's share of the graphs, 1 <= I <= N.
struct Shard {
  int64_t index = 1, count = 1;
};

Shard parse_shard(const std::string& text) {
  Shard shard;
  const size_t slash = text.find('/');
  auto whole = [](const std::string& digits, int64_t& value) {
    if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos) return false;
    value = std::stoll(digits);
    return true;
  };
  if (slash == std::string::npos || !whole(text.substr(0, slash), shard.index) ||
      !whole(text.substr(slash + 1), shard.count) || shard.index < 1 || shard.index > shard.count)
    throw UsageError("--shard: expected I/N with 1 <= I <= N (2/4: the second of four jobs), got '" + text + "'");
  return shard;
}

json machine_json(const Machine& machine) {
  return {{"flops_tflops", machine.flops_tflops}, {"bandwidth_gbps", machine.bandwidth_gbps}};
}

// Without `timings` the summary is the same bytes on every run and thread count.
json summary_json(const std::vector<BatchResult>& results, const CostModel& model, const TrainingSetup& memory,
                  const MemoryCliOptions& options, std::optional<uint64_t> cap, bool timings, const std::string& mesh,
                  bool uniform) {
  json doc;
  doc["format"] = "pase-batch-summary";
  doc["version"] = 1;
  doc["cost_model"] = model.name();
  doc["cost_unit"] = model.unit();
  doc["machine"] = machine_json(model.machine());
  doc["dtype"] = dtype_name(memory.dtype);
  doc["optimizer"] = optimizer_name(memory.optimizer);
  doc["cap_bytes"] = cap ? json(*cap) : json(nullptr);
  if (!memory.plain_step() || micro_batches_auto(options)) doc["training"] = training_json(memory, options);
  if (!mesh.empty()) doc["mesh"] = mesh;  // every cost as placed on its result's mesh
  if (uniform) doc["uniform_blocks"] = true;  // every optimum over strategies with one plan per block
  doc["results"] = json::array();
  for (const BatchResult& r : results) {
    json entry = {{"graph", r.graph}, {"file", r.file}, {"devices", r.devices}, {"status", r.status}};
    const bool solved = r.status == "ok" || r.status == "mismatch";
    entry["cost"] = solved ? json(r.cost) : json(nullptr);
    entry["per_device_bytes"] = solved ? json(r.memory) : json(nullptr);
    entry["gap"] = solved && (cap || r.bounded) ? json(r.gap) : json(nullptr);
    if (timings) entry["seconds"] = r.seconds;
    if (!r.message.empty()) entry["message"] = r.message;
    if (!r.mesh.empty()) entry["mesh"] = r.mesh;
    doc["results"].push_back(entry);
  }
  return doc;
}

std::string summary_csv(const std::vector<BatchResult>& results, bool timings) {
  // The memory columns come last: columns that existed keep their places
  // (seconds stays a column, empty without --timings).
  std::ostringstream csv;
  // The mesh column only with --mesh: files without it keep their bytes.
  const bool placed = std::any_of(results.begin(), results.end(), [](const BatchResult& r) { return !r.mesh.empty(); });
  csv << "graph,file,devices,status,cost,seconds,message,per_device_bytes,gap" << (placed ? ",mesh" : "") << "\n";
  for (const BatchResult& r : results) {
    const bool solved = r.status == "ok" || r.status == "mismatch";
    csv << csv_field(r.graph) << "," << csv_field(r.file) << "," << r.devices << "," << r.status << ","
        << (solved ? format_number("%.17g", r.cost) : "") << "," << (timings ? format_number("%.6f", r.seconds) : "") << ","
        << csv_field(r.message) << "," << (solved ? std::to_string(r.memory) : "") << ","
        << (solved ? format_number("%.9g", r.gap) : "") << (placed ? "," + csv_field(r.mesh) : "") << "\n";
  }
  return csv.str();
}

/// What a batch run shares between its workers; read-only while they run.
struct BatchSetup {
  const BatchCliOptions* options = nullptr;
  std::vector<std::unique_ptr<CostModel>> models;  ///< one per device count
  SolveRequest request;  ///< every solve's: memory model, cap, DP options (no placement)
  Expectations expected;
  std::vector<std::string> all_files;  ///< every file given (--expect matches by file name among them)
  std::vector<MeshPlan> meshes;  ///< with --mesh: one per device count
};

// One graph at one p (models[i] validated the options); `graph` read, or `load_error` says why not.
BatchResult solve_one(const BatchSetup& setup, const std::string& file, const GraphFileV1& graph,
                      const std::string& load_error, size_t i) {
  const int64_t p = setup.options->devices[i];
  BatchResult r{load_error.empty() ? graph.name : fs::path(file).stem().string(), file, p, "ok", 0.0, 0, 0.0, false, 0.0, "", ""};
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  if (!load_error.empty()) {
    r.status = "error";
    r.message = load_error;
    return r;
  }
  SolveOptions options = setup.request.solve;
  const double timeout = setup.options->timeout;
  if (timeout > 0) {
    // Checked after each DP table: a solve stops within one table of its time.
    const auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
    options.dp.progress = [deadline](const DpProgress&) {
      if (Clock::now() > deadline) throw BatchTimeout("over --timeout");
    };
  }
  try {
    SolveRequest request = setup.request;
    request.solve.dp.progress = options.dp.progress;
    const MemoryCliOptions& memory = setup.options->memory;
    const std::vector<int64_t> counts =
        micro_batch_counts(memory, request.memory, micro_batches_auto(memory) ? graph_batch(graph, file) : 1);
    const ModelMaker make_model = [&](const TrainingSetup& training) {
      return make_cost_model(setup.options->model, p, training);
    };
    TrainingSearch search;
    if (setup.options->mesh.empty()) {
      search = solve_training(graph, file, counts, make_model, request);
      if (counts.size() > 1) r.message = micro_batch_search_words(search);
    } else {  // the optimum placed on the mesh (search: the cheapest mesh), its cost the plan's
      Mesh mesh;
      search.best = solve_on_meshes(graph, file, counts, make_model, request, setup.meshes[i], mesh);
      r.mesh = mesh_shape_words(mesh);
    }
    const SolveOutcome& out = search.best->outcome;
    r.graph = search.best->graph.name;
    if (out.capped && !out.capped->feasible) {
      r.status = "refused";
      r.message = "no strategy fits in " + std::to_string(out.capped->cap) + " bytes per device: the least any needs is " +
                  std::to_string(out.capped->least_memory) + " bytes (" + format_gib(out.capped->least_memory) + " GiB)";
    }
    r.cost = placed_cost(out);
    r.memory = out.bytes.total();
    if (out.uniform && !out.uniform->runs.empty())
      r.message += (r.message.empty() ? "" : "; ") + std::string("uniform blocks, the free ") +
                   (out.uniform->free_exact ? "optimum " : "search's best ") + format_number("%.9g", out.uniform->free_cost);
    if (out.capped) r.gap = out.capped->gap;
    if (out.bounded) {
      r.bounded = true;
      r.gap = out.bounded->proven_optimal() ? 0.0 : out.bounded->gap();
      r.message = out.bounded->proven_optimal() ? "bounded solve, proven optimal"
                                                : "bounded solve, at most " + format_number("%.3g", 100 * r.gap) +
                                                      "% above the optimum";
    }
    if (const std::string over = over_machine_memory_words(*setup.models[i], r.memory, memory_reserve(memory, *setup.models[i]));
        !over.empty() && r.status != "refused")
      r.message += (r.message.empty() ? "" : "; ") + over;
  } catch (const BatchTimeout&) {
    r.status = "timeout";
    r.message = "stopped after --timeout " + format_number("%g", timeout) + " s";
  } catch (const InputError& error) {
    r.status = "error";
    r.message = error.what();
  } catch (const LimitError& error) {
    const std::string& option = error.words().option;
    r.status = "refused";
    r.message = error.words().with(option == "max_work" ? "--max-work" : option == "max_table_bytes" ? "--max-table-bytes" : error.words().name);
  } catch (const ResourceError& error) {
    r.status = "refused";
    r.message = error.what();
  } catch (const std::bad_alloc&) {
    r.status = "refused";
    r.message = "out of memory";
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  if (r.status == "ok")
    if (const ExpectRecord* record = setup.expected.match(file, r.graph, p, files_named(setup.all_files, file))) {
      r.message = expectation_mismatch(*record, r.cost);
      if (!r.message.empty()) r.status = "mismatch";
    }
  return r;
}

// Every device count of one graph file, the graph loaded once.
std::vector<BatchResult> solve_file(const BatchSetup& setup, const std::string& file) {
  std::string load_error;
  GraphFileV1 graph;
  try {
    graph = read_graph_input(file);
    graph.name = build_graph(graph, file).name;  // its errors once, before any device count
  } catch (const InputError& error) {
    load_error = error.what();
  } catch (const ResourceError& error) {
    load_error = error.what();
  }
  std::vector<BatchResult> results;
  for (size_t i = 0; i < setup.options->devices.size(); ++i) results.push_back(solve_one(setup, file, graph, load_error, i));
  return results;
}

// The request every solve of the batch shares, after the options are checked.
BatchSetup make_setup(const BatchCliOptions& o) {
  BatchSetup setup;
  setup.options = &o;
  for (int64_t p : o.devices) setup.models.push_back(make_cost_model(o.model, p, memory_options(o.memory)));
  setup.request.memory = memory_options(o.memory);
  setup.request.min_row = search_min_row(o.model);
  setup.request.cap = memory_cap(o.memory, *setup.models.front());
  if (o.memory.time_limit < 1e9)
    throw UsageError("--time-limit: not with batch, whose solves each take --timeout SECONDS (a limit for the whole "
                     "batch would leave its last graphs no time)");
  setup.request.cap_search = cap_options(o.memory);
  setup.request.place = false;
  setup.request.exact = o.exact;
  setup.request.uniform_blocks = o.uniform_blocks;
  if (o.threads < 0) throw UsageError("--threads: expected a non-negative count, got " + std::to_string(o.threads));
  if (o.jobs < 1) throw UsageError("--jobs: expected a positive count, got " + std::to_string(o.jobs));
  if (!(o.timeout >= 0) || !std::isfinite(o.timeout))
    throw UsageError("--timeout: expected a number of seconds of at least 0, got " + format_number("%g", o.timeout));
  if (o.max_table_bytes_option->count() > 0 && o.max_table_bytes == 0)
    throw UsageError("--max-table-bytes: expected a positive number of bytes, got 0");
  if (o.max_work == 0) throw UsageError("--max-work: expected a positive number of steps, got 0");
  setup.request.solve.dp.threads = o.threads;
  if (o.max_table_bytes_option->count() > 0) setup.request.solve.dp.max_table_bytes = o.max_table_bytes;
  setup.request.solve.dp.max_work = o.max_work;
  if (!o.mesh.empty())
    for (size_t i = 0; i < o.devices.size(); ++i) setup.meshes.push_back(mesh_plan(o.mesh, o.devices[i], *setup.models[i]));
  if (!o.expect.empty()) setup.expected = Expectations::read(o.expect, {setup.models[0].get(), o.mesh, o.uniform_blocks});
  return setup;
}

// This job's share of the graph files (--shard), in input order.
std::vector<std::string> shard_files(const std::vector<std::string>& all_files, const std::string& shard_text) {
  const Shard shard = shard_text.empty() ? Shard{} : parse_shard(shard_text);
  std::vector<std::string> files;
  for (size_t k = 0; k < all_files.size(); ++k)
    if (static_cast<int64_t>(k % static_cast<size_t>(shard.count)) == shard.index - 1) files.push_back(all_files[k]);
  return files;
}

// One result's line of the table.
std::string result_line(const BatchResult& r, bool whole, bool capped) {
  char line[256];
  const bool solved = r.status == "ok" || r.status == "mismatch";
  std::string cost = solved ? format_cost_text(r.cost, whole ? "flop" : "seconds") : "-";  // exact in --summary
  std::string memory = solved ? format_gib(r.memory) + " GiB" : "-";
  if (solved && (capped || r.bounded)) memory += r.gap == 0 ? " (gap 0)" : " (gap " + format_number("%.3g", 100 * r.gap) + "%)";
  std::snprintf(line, sizeof line, "%-14s p=%-6lld %11s  %-22s %9s  ", r.graph.c_str(), static_cast<long long>(r.devices),
                cost.c_str(), memory.c_str(), format_duration(r.seconds).c_str());
  const std::string placed = r.mesh.empty() ? "" : " on " + r.mesh;
  return line + r.status + placed + (r.message.empty() ? "" : ": " + r.message);
}

// Solves `files` on `jobs` workers, which take files in order; `report` sees
// each result in input order, as soon as every file before it is done.
void solve_files(const BatchSetup& setup, const std::vector<std::string>& files, bool progress,
                 const std::function<void(const BatchResult&)>& report) {
  std::vector<std::optional<std::vector<BatchResult>>> done(files.size());
  std::mutex mutex;
  size_t next_file = 0, next_print = 0, files_done = 0;
  auto work = [&] {
    for (;;) {
      size_t k;
      {
        std::lock_guard<std::mutex> lock(mutex);
        if (next_file == files.size()) return;
        k = next_file++;
        if (progress)
          std::cerr << "\r\033[K[" << files_done << "/" << files.size() << "] " << fs::path(files[k]).stem().string()
                    << " ..." << std::flush;
      }
      std::vector<BatchResult> file_results = solve_file(setup, files[k]);
      std::lock_guard<std::mutex> lock(mutex);
      done[k] = std::move(file_results);
      ++files_done;
      if (progress) std::cerr << "\r\033[K" << std::flush;  // clear the progress line first
      for (; next_print < files.size() && done[next_print]; ++next_print)
        for (const BatchResult& r : *done[next_print]) report(r);
    }
  };
  const size_t workers = std::min(files.size(), static_cast<size_t>(setup.options->jobs));
  std::vector<std::thread> threads;
  for (size_t w = 1; w < workers; ++w) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  if (progress) std::cerr << "\r\033[K" << std::flush;
}

// The last line: how many solved, failed and mismatched, and with --expect how the record was covered.
std::string totals_line(const BatchSetup& setup, const std::vector<BatchResult>& results,
                        const Coverage& coverage, size_t failed, size_t mismatched) {
  std::string line = "batch: " + std::to_string(results.size() - failed - mismatched) + " ok, " + std::to_string(failed) +
                     " failed, " + std::to_string(mismatched) + " mismatched";
  if (setup.options->expect.empty()) return line;
  return line + " (" + std::to_string(coverage.checked) + " of " + std::to_string(coverage.recorded) +
         " expected optima checked); " +
         std::to_string(coverage.missing) + " missing, " + std::to_string(coverage.dropped) + " dropped, " +
         std::to_string(coverage.added) + " new";
}

// `pase batch` once its options are parsed.
int run_batch(const BatchCliOptions& o) {
  BatchSetup setup = make_setup(o);
  const bool summary_to_stdout = o.summary == "-";
  const std::string summary_kind = summary_to_stdout ? ".json" : extension_of(o.summary);
  if (!o.summary.empty() && summary_kind != ".json" && summary_kind != ".csv")
    throw UsageError("--summary: expected a file name ending in .json or .csv, or -, got '" + o.summary + "'");
  setup.all_files = expand_inputs(o.inputs);
  const std::vector<std::string>& all_files = setup.all_files;
  if (all_files.empty()) throw InputError("batch: no *.json graph files or *.onnx models found in the given inputs");
  const std::vector<std::string> files = shard_files(all_files, o.shard);

  // With --summary - stdout holds the JSON alone; the table goes to stderr.
  std::ostream& out = summary_to_stdout ? std::cerr : std::cout;
  const bool progress = !summary_to_stdout && isatty(STDERR_FILENO) != 0;
  const bool whole = setup.models[0]->unit() == "flop";  // FLOP with a prefix, else seconds as a duration
  std::vector<BatchResult> results;
  size_t failed = 0, mismatched = 0;
  solve_files(setup, files, progress, [&](const BatchResult& r) {
    out << result_line(r, whole, setup.request.cap.has_value()) << std::endl;
    if (r.status == "mismatch") ++mismatched;
    else if (r.status != "ok") ++failed;
    results.push_back(r);
  });

  Coverage coverage;
  if (!o.expect.empty()) {
    std::vector<CoveredResult> covered;
    for (const BatchResult& r : results)
      covered.push_back({r.file, r.graph, r.devices, r.status == "ok" || r.status == "mismatch"});
    coverage = expectation_coverage(setup.expected, all_files, files, covered, o.devices, o.expect);
  }
  for (const std::string& line : coverage.lines) out << line << "\n";
  if (!o.summary.empty()) {
    const std::string text =
        summary_kind == ".json"
            ? summary_json(results, *setup.models[0], setup.request.memory, o.memory, setup.request.cap, o.timings, o.mesh, o.uniform_blocks).dump(2) + "\n"
            : summary_csv(results, o.timings);
    if (summary_to_stdout) std::cout << text << std::flush;
    else write_text_file(o.summary, text);
  }
  out << totals_line(setup, results, coverage, failed, mismatched) << "\n";
  const bool covered = coverage.missing + coverage.dropped + coverage.added == 0;
  return failed || mismatched || !covered ? kExitInputError : kExitOk;
}

}  // namespace

CommandRunner register_batch(CLI::App& app) {
  auto o = std::make_shared<BatchCliOptions>();
  CLI::App* cmd = app.add_subcommand("batch", "Solve every graph of a directory (or a list of files) at several device counts");
  cmd->add_option("inputs", o->inputs, "Graph files or ONNX models, or directories of *.json graph files and *.onnx models")->required();
  cmd->add_option("--devices,-p", o->devices, "Device counts, comma-separated (8,32)")->required()->delimiter(',');
  add_cost_model_options(cmd, o->model);
  add_memory_options(cmd, o->memory, /*with_cap=*/true);
  cmd->add_option("--summary", o->summary, "Write a summary: FILE.json, FILE.csv, or - (JSON on stdout; the table goes to stderr)");
  cmd->add_option("--expect", o->expect,
                  "Check against this summary JSON, keyed by file and p: fail if an optimum differs (rel. 1e-9), a "
                  "recorded graph or device count is missing, or a graph has no record");
  cmd->add_option("--threads", o->threads, "Worker threads of each solve (default: all cores, or one for a small DP)");
  o->max_table_bytes_option = add_count_option(
      cmd, "--max-table-bytes", o->max_table_bytes,
      "Past this a solve's DP tables may need more: bytes, or a size such as 8GiB (default: half of RAM, as solve)", true);
  add_count_option(cmd, "--max-work", o->max_work, "Past this a solve needs more (entry x configuration) DP steps (default 2e12)");
  cmd->add_flag("--exact", o->exact,
                "Refuse a solve past the DP's limits (by default a bounded solve answers with its gap, as solve does)");
  cmd->add_option("--timeout", o->timeout, "Stop a solve (one graph at one p) after this many seconds, checked between DP tables (default: none)");
  cmd->add_option("--jobs,-j", o->jobs, "Graphs solved at once (default 1); lines and summary stay in input order");
  cmd->add_option("--mesh", o->mesh,
                  "Record each optimum's cost as placed on a device mesh: search (each dp x tp mesh with tp inside a "
                  "node, the cheapest kept; needs --cost-model calibrated), auto, 2x4 or dp=2,tp=4 (default: unplaced)");
  cmd->add_flag("--uniform-blocks", o->uniform_blocks,
                "Give every block of a run of identical blocks one configuration per layer (as Megatron-LM, FSDP and a "
                "scan over layers run); recorded in the summary");
  cmd->add_flag("--timings", o->timings, "Also record each solve's seconds in the summary (they vary from run to run)");
  cmd->add_option("--shard", o->shard, "Solve only share I of N of the graphs (every Nth file from the Ith), to split a zoo across CI jobs");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_batch(*o);
  };
}

}  // namespace pase
