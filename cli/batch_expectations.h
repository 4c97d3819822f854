#pragma once
// `pase batch --expect SUMMARY` (docs/formats.md, "Batch summaries"): the
// records of an earlier summary, each result matched to its record however
// the folder was named on the command line (the same file; else the same
// file name, where one file has it; else the same graph name, where one
// graph has it), the optimum compared, and how the records and the run
// cover each other.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_model.h"

namespace pase {

struct ExpectRecord {
  std::string file;   ///< as recorded, lexically normalized
  std::string graph;  ///< the graph's name (empty in summaries without it)
  int64_t devices = 0;
  std::optional<double> optimum;  ///< nullopt: recorded without an optimum (a failure)
  std::string status;             ///< as recorded ("ok", "error", ...)
};

/// What the run must match: the summary's setup is checked against it.
struct ExpectSetup {
  const CostModel* model = nullptr;
  std::string mesh;  ///< --mesh of this run; empty: none
  bool uniform_blocks = false;
};

class Expectations {
 public:
  Expectations() = default;
  /// Reads a summary written by --summary (JSON); InputError naming the
  /// file and field where it cannot be compared with this run.
  static Expectations read(const std::string& path, const ExpectSetup& setup);

  /// The record of `file` (normalized) at `devices`, with `graph` its graph's
  /// name: the same file; else the one record of its file name (where one
  /// given file has that name: `names_given` counts them); else the one
  /// record of its graph. nullptr: none.
  [[nodiscard]] const ExpectRecord* match(const std::string& file, const std::string& graph, int64_t devices,
                                          size_t names_given) const;
  [[nodiscard]] const std::vector<ExpectRecord>& records() const { return records_; }
  [[nodiscard]] bool empty() const { return records_.empty(); }

 private:
  std::vector<ExpectRecord> records_;
};

/// "expected 1.5" where the result's cost is not the record's, or it solved
/// where the record has no optimum ("expected no optimum: recorded error");
/// empty where they agree (within 1e-9, relative). Only for solved results.
[[nodiscard]] std::string expectation_mismatch(const ExpectRecord& record, double cost);

/// One result as coverage sees it.
struct CoveredResult {
  std::string file, graph;
  int64_t devices = 0;
  bool solved = false;
};

/// How the records and the run cover each other: a record matched by no
/// result whose file was not given (missing) or whose p was not run
/// (dropped), a result without a record (new); records of files in another
/// shard are not this run's concern. `all_files`: every file given;
/// `mine`: this shard's.
struct Coverage {
  std::vector<std::string> lines;  ///< one per difference
  size_t missing = 0, dropped = 0, added = 0;
  size_t checked = 0, recorded = 0;  ///< optima compared, of the optima recorded for this shard's files
};

[[nodiscard]] Coverage expectation_coverage(const Expectations& expected, const std::vector<std::string>& all_files,
                                            const std::vector<std::string>& mine, const std::vector<CoveredResult>& results,
                                            const std::vector<int64_t>& devices, const std::string& expect_path);

/// How many of `files` have each file name: what Expectations::match needs.
[[nodiscard]] size_t files_named(const std::vector<std::string>& files, const std::string& file);

}  // namespace pase
