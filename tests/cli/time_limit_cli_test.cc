// Wall-clock limits of capped searches (--cap-seconds, --time-limit) and the
// progress line (cli/progress_line.h): a search out of time answers with
// the best strategy found that fits and a bound that still holds (checked
// against the search run to the end), leaves the candidates it did not start
// out with their bounds kept, and says so; on a terminal a line tells what
// is searched.
#include <doctest/doctest.h>

#include <cstdlib>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using json = nlohmann::json;

namespace {

const std::string& small_gpt() {
  return pase::test::exported_model("gpt --layers 4 --d-model 256 --heads 4 --seq 64 --vocab 1024 --batch 32");
}

json solved(const std::string& options) {
  const pase::test::CommandResult run = pase::test::run_pase("solve " + small_gpt() + " --devices 8 " + options + " --json");
  REQUIRE_MESSAGE(run.status == 0, run.error);
  return json::parse(run.output);
}

const std::string kCapped = "--zero auto --recompute auto --memory-per-device 20MiB --cap-gap 0";

}  // namespace

TEST_CASE("--time-limit: out of time, the best strategy found and a bound that holds; the counts not started left out") {
  const json exact = solved("--micro-batches auto " + kCapped);
  const pase::test::CommandResult run =
      pase::test::run_pase("solve " + small_gpt() + " --devices 8 --micro-batches auto " + kCapped + " --time-limit 0 --json");
  REQUIRE(run.status == 0);
  // The least-bound count is searched (an answer is needed); the other five are not.
  CHECK(run.error.find("note: micro-batches auto: 1 of 6 divisors of the batch solved, 5 not searched: the time limit "
                       "had passed, best ") != std::string::npos);
  CHECK(run.error.find("note: the search stopped at its time limit (--cap-seconds, --time-limit): the answer is the best "
                       "strategy found that fits, at most ") != std::string::npos);
  const json late = json::parse(run.output);
  const double cost = late["total_cost"].get<double>(), bound = late["memory"]["lower_bound_cost"].get<double>();
  CHECK(late["memory"]["per_device_bytes"].get<double>() <= 20.0 * (1 << 20));
  CHECK(cost >= exact["memory"]["lower_bound_cost"].get<double>());  // no better than the optimum can be
  CHECK(bound <= exact["total_cost"].get<double>());  // and its bound still below it
  CHECK(late["memory"]["gap"].get<double>() == doctest::Approx((cost - bound) / bound).epsilon(1e-12));
  CHECK(late["memory"]["gap"].get<double>() > 0);
}

TEST_CASE("--cap-seconds: the root's walk stops too, with an answer that fits and its proven gap") {
  const std::string step = "--micro-batches 4 --zero 1 --recompute full --memory-per-device 12MiB --cap-gap 0";
  const json exact = solved(step + " --cap-work 200000000");  // a reference whose bound holds (bounded work: fast)
  const pase::test::CommandResult run =
      pase::test::run_pase("solve " + small_gpt() + " --devices 8 " + step + " --cap-seconds 0 --json");
  REQUIRE(run.status == 0);
  CHECK(run.error.find("note: the search stopped at its time limit") != std::string::npos);
  const json late = json::parse(run.output);
  CHECK(late["memory"]["per_device_bytes"].get<double>() <= 12.0 * (1 << 20));
  // Both bounds hold for both answers: each is below every strategy that fits.
  CHECK(late["total_cost"].get<double>() >= exact["memory"]["lower_bound_cost"].get<double>());
  CHECK(late["memory"]["lower_bound_cost"].get<double>() <= exact["total_cost"].get<double>());
}

TEST_CASE("--time-limit: a negative limit is refused by name") {
  const pase::test::CommandResult run = pase::test::run_pase("solve " + small_gpt() + " --devices 8 --time-limit -1");
  CHECK(run.status == 2);
  CHECK(run.error == "error: --time-limit: expected a number of seconds of at least 0, got -1.000000\n");
}

TEST_CASE("progress line: on a terminal, what is searched and the clock; cleared before the answer") {
  if (std::system("command -v script >/dev/null 2>&1") != 0) return;  // no pseudo-terminal to run under
  const std::string log = pase::test::write_temp_file("progress_tty.log", "");
  const std::string out = pase::test::write_temp_file("progress_tty.out", "");
  const std::string command = "PASE_PROGRESS_AFTER=0 script -qfc '" + std::string(PASE_EXE) + " solve " + small_gpt() +
                              " --devices 8 --micro-batches auto " + kCapped + " >" + out + "' " + log + " >/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  const std::string seen = pase::read_text_file(log);
  CHECK(seen.find("\r\033[Ksolving micro-batches ") != std::string::npos);
  CHECK(seen.find(" under the cap (") != std::string::npos);
  CHECK(seen.find("), searching: ") != std::string::npos);  // the phase of the solve under way
  CHECK(seen.find(" s so far") != std::string::npos);
  CHECK(seen.find("\r\033[Knote: micro-batches auto: ") != std::string::npos);  // cleared, then the note
  CHECK(pase::read_text_file(out).find("total cost ") != std::string::npos);
}

TEST_CASE("--time-limit: batch refuses it and names its own per-solve limit") {
  const pase::test::CommandResult run =
      pase::test::run_pase("batch " + pase::test::source_path("data/graphs") + " --devices 8 --time-limit 3");
  CHECK(run.status == 2);
  CHECK(run.error == "error: --time-limit: not with batch, whose solves each take --timeout SECONDS (a limit for the "
                     "whole batch would leave its last graphs no time)\n");
}

TEST_CASE("--time-limit with pipeline stages: the least-bound pipeline answers, the others keep their bounds") {
  const std::string search = " --devices 8 --pipeline-stages auto --micro-batches auto --memory-per-device 20MiB";
  const json full = solved(search.substr(std::string(" --devices 8").size()));
  const pase::test::CommandResult run = pase::test::run_pase("solve " + small_gpt() + search + " --time-limit 0");
  REQUIRE(run.status == 0);
  CHECK(run.output.find("searched 1 pipelines of 4 stage counts x 6 micro-batch counts (1 fit, 23 not searched: the "
                        "time limit had passed, their bounds kept)") != std::string::npos);
  const json late = solved(search.substr(std::string(" --devices 8").size()) + " --time-limit 0");
  // Each search's bound holds for the other's answer.
  CHECK(late["total_cost"].get<double>() >= full["memory"]["lower_bound_cost"].get<double>());
  CHECK(late["memory"]["lower_bound_cost"].get<double>() <= full["total_cost"].get<double>());
}
