// A strategy file priced with its own cost model (cli/file_model.h,
// docs/formats.md "The file's own model"): evaluate without model options
// takes the file's (the calibrated model on the machine it names, or the
// pase model at its rates) and gets the file's total back; with other
// options, one line says what differs.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using json = nlohmann::json;

namespace {

const std::string& small_gpt() {
  return pase::test::exported_model("gpt --layers 2 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
}

// A strategy file `solve` writes with `options`.
std::string solved(const std::string& name, const std::string& options) {
  const pase::test::CommandResult run = pase::test::run_pase("solve " + small_gpt() + " --devices 8 " + options + " --json");
  REQUIRE(run.status == 0);
  return pase::test::write_temp_file(name, run.output);
}

double total_of(const std::string& text) { return json::parse(text)["total_cost"].get<double>(); }

}  // namespace

TEST_CASE("evaluate prices a strategy file with the file's own cost model and machine") {
  const std::string calibrated =
      solved("file_model_calibrated.json", "--machine dgx-a100 --dtype bf16 --micro-batches 4 --zero 1 --recompute full");
  const json recorded = json::parse(pase::read_text_file(calibrated));
  CHECK(recorded["machine"]["profile"] == "dgx-a100");
  const pase::test::CommandResult own = pase::test::run_pase("evaluate " + small_gpt() + " --strategy " + calibrated + " --json");
  REQUIRE(own.status == 0);
  CHECK(own.error.empty());  // nothing differs, nothing said
  CHECK(total_of(own.output) == recorded["total_cost"].get<double>());
  CHECK(json::parse(own.output)["cost_model"] == "calibrated");
  // A pase-model file at its own rates.
  const std::string fast = solved("file_model_pase.json", "--bandwidth 1000");
  const pase::test::CommandResult rates = pase::test::run_pase("evaluate " + small_gpt() + " --strategy " + fast);
  REQUIRE(rates.status == 0);
  CHECK(rates.output.find("gpt on 8 devices (10 TFLOP/s, 1000 GB/s), cost model pase (flop)") == 0);
  CHECK(rates.error.empty());
}

TEST_CASE("evaluate says in one line when what prices the file is not what it records") {
  const std::string calibrated = solved("file_model_differs.json", "--machine dgx-a100");
  const pase::test::CommandResult other =
      pase::test::run_pase("evaluate " + small_gpt() + " --strategy " + calibrated + " --cost-model pase");
  REQUIRE(other.status == 0);
  CHECK(other.error.find("note: " + calibrated + " was priced with the calibrated model on dgx-a100; this run prices "
                         "it with the pase model at 10 TFLOP/s and 16 GB/s\n") == 0);
  // A machine that is not built in: priced with the defaults, and said.
  json edited = json::parse(pase::read_text_file(calibrated));
  edited["machine"]["profile"] = "my-cluster";
  const std::string unknown = pase::test::write_temp_file("file_model_unknown.json", edited.dump());
  const pase::test::CommandResult fallback = pase::test::run_pase("evaluate " + small_gpt() + " --strategy " + unknown);
  REQUIRE(fallback.status == 0);
  CHECK(fallback.error.find("note: " + unknown + " was priced with the calibrated model on my-cluster; this run "
                            "prices it with the pase model at 10 TFLOP/s and 16 GB/s (the file's machine is not "
                            "built in: give --machine FILE)\n") == 0);
}

TEST_CASE("explain prices a strategy file with the file's own cost model, and says when told otherwise") {
  const std::string calibrated = solved("file_model_explain.json", "--machine dgx-a100 --dtype bf16");
  const json recorded = json::parse(pase::read_text_file(calibrated));
  const pase::test::CommandResult own =
      pase::test::run_pase("explain " + small_gpt() + " --strategy " + calibrated + " --layer lm_head --json");
  REQUIRE(own.status == 0);
  CHECK(own.error.empty());
  const json explained = json::parse(own.output);
  CHECK(explained["cost_model"] == "calibrated");
  CHECK(explained["total_cost"].get<double>() == recorded["total_cost"].get<double>());
  const pase::test::CommandResult other =
      pase::test::run_pase("explain " + small_gpt() + " --strategy " + calibrated + " --layer lm_head --flops 20");
  REQUIRE(other.status == 0);
  CHECK(other.error == "note: " + calibrated + " was priced with the calibrated model on dgx-a100; this run prices "
                       "it with the pase model at 20 TFLOP/s and 16 GB/s\n");
  CHECK(other.output.find("cost model pase") != std::string::npos);
}

TEST_CASE("evaluate and explain say in one line where the training step differs from the file's") {
  const std::string file = solved("file_model_training.json", "--dtype bf16 --micro-batches 4 --zero 1");
  const pase::test::CommandResult same = pase::test::run_pase("evaluate " + small_gpt() + " --strategy " + file);
  REQUIRE(same.status == 0);
  CHECK(same.error.empty());  // the file's own step: nothing said
  const pase::test::CommandResult other =
      pase::test::run_pase("evaluate " + small_gpt() + " --strategy " + file + " --dtype fp32 --micro-batches 2 --optimizer sgd");
  REQUIRE(other.status == 0);
  CHECK(other.error == "note: " + file + " was written for bf16, adam optimizer, 4 micro-batches; this run prices it "
                       "with fp32, sgd optimizer, 2 micro-batches\n");
  const pase::test::CommandResult explained =
      pase::test::run_pase("explain " + small_gpt() + " --strategy " + file + " --layer lm_head --zero 3");
  REQUIRE(explained.status == 0);
  CHECK(explained.error == "note: " + file + " was written for ZeRO-1; this run prices it with ZeRO-3\n");
}
