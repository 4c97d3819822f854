#include "cli/batch_expectations.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_document.h"
#include "base/json_reader.h"
#include "base/text_file.h"
#include "cli/text_output.h"

namespace pase {
namespace {

namespace fs = std::filesystem;

constexpr double kExpectTolerance = 1e-9;  // relative, as docs/formats.md promises between implementations

std::string file_name(const std::string& file) { return fs::path(file).filename().generic_string(); }

// The summary's setup against this run's: another cost model, machine, mesh
// or block rule makes its optima another quantity.
void check_setup(JsonReader& root, const ExpectSetup& setup) {
  const auto cost_model = root.optional("cost_model");
  const std::string recorded_model = cost_model ? cost_model->as_string() : "pase";
  if (recorded_model != setup.model->name())
    cost_model->fail("recorded with '" + recorded_model + "', this run uses '" + setup.model->name() + "'");
  const auto recorded_mesh = root.optional("mesh");
  const std::string mesh_recorded = recorded_mesh ? recorded_mesh->as_string() : "";
  if (mesh_recorded != setup.mesh)
    (recorded_mesh ? *recorded_mesh : root)
        .fail("recorded " + (mesh_recorded.empty() ? std::string("without --mesh") : "with --mesh " + mesh_recorded) +
              ", this run " + (setup.mesh.empty() ? std::string("has none") : "uses --mesh " + setup.mesh));
  const auto recorded_uniform = root.optional("uniform_blocks");
  if ((recorded_uniform && recorded_uniform->value() == true) != setup.uniform_blocks)
    (recorded_uniform ? *recorded_uniform : root)
        .fail(setup.uniform_blocks ? "recorded without --uniform-blocks, this run gives identical blocks one plan"
                                   : "recorded with --uniform-blocks, this run has none");
  if (auto machine = root.optional("machine")) {
    const Machine here = setup.model->machine();
    auto recorded = [&](const std::string& key, double otherwise) {
      auto field = machine->optional(key);
      return field ? field->as_number() : otherwise;
    };
    if (recorded("flops_tflops", here.flops_tflops) != here.flops_tflops ||
        recorded("bandwidth_gbps", here.bandwidth_gbps) != here.bandwidth_gbps)
      machine->fail("recorded with " + json_excerpt(machine->value()) + ", this run uses " +
                    nlohmann::ordered_json{{"flops_tflops", here.flops_tflops}, {"bandwidth_gbps", here.bandwidth_gbps}}.dump());
  }
}

// Whether `record` is of a file given to this run (by its path, or by its file name where one file has it).
bool of_files(const ExpectRecord& record, const std::set<std::string>& files, const std::vector<std::string>& all) {
  if (files.count(record.file)) return true;
  const std::string name = file_name(record.file);
  size_t with_name = 0;
  bool mine = false;
  for (const std::string& file : all)
    if (file_name(file) == name) ++with_name, mine = mine || files.count(file) > 0;
  return with_name == 1 && mine;
}

}  // namespace

Expectations Expectations::read(const std::string& path, const ExpectSetup& setup) {
  nlohmann::json document;
  try {
    document = parse_json_document(read_text_file(path), path);
  } catch (const InputError& error) {
    throw InputError(std::string(error.what()) + " (--expect takes a summary written by --summary FILE.json)");
  }
  JsonReader root(document, path);
  root.expect_object("a JSON object at the top level");
  const std::string kFormat = "pase-batch-summary";
  if (auto format = root.optional("format"); !format || format->value() != kFormat)
    root.required("format").fail("expected \"" + kFormat + "\"");
  root.check_header(kFormat, 1);
  check_setup(root, setup);
  Expectations out;
  std::set<std::pair<std::string, int64_t>> seen;
  std::vector<JsonReader> results = root.required("results").items("results");
  for (size_t i = 0; i < results.size(); ++i) {
    JsonReader entry = results[i].as_subject("results[" + std::to_string(i) + "]");
    ExpectRecord record;
    record.file = fs::path(entry.required("file").as_string()).lexically_normal().generic_string();
    record.devices = entry.required("devices").as_int();
    if (auto graph = entry.optional("graph")) record.graph = graph->as_string();
    if (auto status = entry.optional("status")) record.status = status->as_string();
    if (auto cost = entry.optional("cost"); cost && cost->value().is_number()) record.optimum = cost->value().get<double>();
    if (!seen.insert({record.file, record.devices}).second)
      entry.required("file").fail("'" + record.file + "' at p=" + std::to_string(record.devices) + " is recorded twice");
    out.records_.push_back(std::move(record));
  }
  return out;
}

const ExpectRecord* Expectations::match(const std::string& file, const std::string& graph, int64_t devices,
                                        size_t names_given) const {
  // The one record at `devices` that `same` picks, or nullptr (none, or more than one).
  const auto only = [&](const auto& same) -> const ExpectRecord* {
    const ExpectRecord* found = nullptr;
    for (const ExpectRecord& record : records_) {
      if (record.devices != devices || !same(record)) continue;
      if (found) return nullptr;
      found = &record;
    }
    return found;
  };
  if (const ExpectRecord* exact = only([&](const ExpectRecord& r) { return r.file == file; })) return exact;
  const std::string name = file_name(file);
  if (names_given == 1)
    if (const ExpectRecord* named = only([&](const ExpectRecord& r) { return file_name(r.file) == name; })) return named;
  if (graph.empty()) return nullptr;
  return only([&](const ExpectRecord& r) { return r.graph == graph; });
}

std::string expectation_mismatch(const ExpectRecord& record, double cost) {
  if (!record.optimum) return "expected no optimum: recorded " + (record.status.empty() ? "without one" : record.status);
  if (std::fabs(cost - *record.optimum) > kExpectTolerance * std::fabs(*record.optimum))
    return "expected " + format_number("%.17g", *record.optimum);
  return "";
}

size_t files_named(const std::vector<std::string>& files, const std::string& file) {
  const std::string name = file_name(file);
  return static_cast<size_t>(
      std::count_if(files.begin(), files.end(), [&](const std::string& f) { return file_name(f) == name; }));
}

Coverage expectation_coverage(const Expectations& expected, const std::vector<std::string>& all_files,
                              const std::vector<std::string>& mine, const std::vector<CoveredResult>& results,
                              const std::vector<int64_t>& devices, const std::string& expect_path) {
  Coverage coverage;
  const std::set<std::string> given(all_files.begin(), all_files.end()), mine_set(mine.begin(), mine.end());
  std::set<const ExpectRecord*> matched;
  std::vector<std::string> added;  // after the records' lines
  for (const CoveredResult& r : results) {
    const ExpectRecord* record = expected.match(r.file, r.graph, r.devices, files_named(all_files, r.file));
    if (!record) {
      ++coverage.added;
      added.push_back("new: " + r.file + " p=" + std::to_string(r.devices) + " has no record in " + expect_path);
      continue;
    }
    matched.insert(record);
    coverage.checked += r.solved && record->optimum;
  }
  std::string list;
  for (int64_t d : devices) list += (list.empty() ? "" : ",") + std::to_string(d);
  for (const ExpectRecord& record : expected.records()) {
    const bool ran = matched.count(&record) > 0;
    if (ran || of_files(record, mine_set, all_files)) coverage.recorded += record.optimum.has_value();
    if (ran) continue;
    const std::string what = record.file + " p=" + std::to_string(record.devices) + " is recorded in " + expect_path;
    if (of_files(record, mine_set, all_files)) {
      ++coverage.dropped;
      coverage.lines.push_back("dropped: " + what + " but p=" + std::to_string(record.devices) + " was not run (--devices " +
                               list + ")");
    } else if (!of_files(record, given, all_files)) {
      ++coverage.missing;
      coverage.lines.push_back("missing: " + what + " but the file was not given");
    }
  }
  coverage.lines.insert(coverage.lines.end(), added.begin(), added.end());
  return coverage;
}

}  // namespace pase
