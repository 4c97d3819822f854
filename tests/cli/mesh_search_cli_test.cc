// Layouts searched on the mesh (plans/mesh_search.h) from the command line:
// with the calibrated model a given mesh's plan realizes the optimum's cost
// exactly, --mesh search tries every dp x tp mesh that fits a node and keeps
// the cheapest, and what cannot be searched is refused in one line.
#include <doctest/doctest.h>

#include <limits>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

const std::string kCalibrated = " --cost-model calibrated --machine dgx-a100 --dtype bf16";

std::string small_llama() {
  const std::string path = test::write_temp_file("mesh_llama.json", "");
  REQUIRE(test::run_pase("models export llama --layers 2 --d-model 64 --heads 4 --kv-heads 2 --ff 96 --seq 16 --vocab "
                         "100 --batch 16 -o " + path)
              .status == 0);
  return path;
}

}  // namespace

TEST_CASE("solve --mesh on the calibrated model: the plan is the priced strategy") {
  const std::string graph = small_llama();
  for (const char* mesh : {"dp=2,tp=8", "dp=4,tp=4", "tp=4,dp=4"}) {
    CAPTURE(mesh);
    const test::CommandResult solved =
        test::run_pase("solve " + graph + " --devices 16" + kCalibrated + " --mesh " + mesh + " --json");
    REQUIRE(solved.status == 0);
    const json strategy = json::parse(solved.output);
    CHECK(strategy["axis_assignment"]["proof"] == "searched");
    CHECK(strategy["realized_total_cost"].get<double>() ==
          doctest::Approx(strategy["total_cost"].get<double>()).epsilon(1e-12));
  }
  // Axis names are names: the search puts each split on whichever axis is
  // cheaper, so the same shape listed in the other order costs the same.
  auto cost = [&](const std::string& mesh) {
    const test::CommandResult solved =
        test::run_pase("solve " + graph + " --devices 64" + kCalibrated + " --mesh " + mesh + " --json");
    REQUIRE(solved.status == 0);
    return json::parse(solved.output)["total_cost"].get<double>();
  };
  CHECK(cost("tp=8,dp=8") == doctest::Approx(cost("dp=8,tp=8")).epsilon(1e-12));
}

TEST_CASE("evaluate --strategy of a plan searched on its mesh: priced on the same layouts, at the solve's cost") {
  const std::string graph = small_llama();
  for (const char* mesh : {"dp=2,tp=8", "dp=4,tp=4"}) {
    CAPTURE(mesh);
    const test::CommandResult solved =
        test::run_pase("solve " + graph + " --devices 16" + kCalibrated + " --mesh " + mesh + " --json");
    REQUIRE(solved.status == 0);
    const std::string file = test::write_temp_file("mesh_searched_plan.json", solved.output);
    const test::CommandResult evaluated =
        test::run_pase("evaluate " + graph + " --devices 16" + kCalibrated + " --strategy " + file + " --json");
    REQUIRE(evaluated.status == 0);
    CHECK(json::parse(evaluated.output)["total_cost"].get<double>() ==
          doctest::Approx(json::parse(solved.output)["total_cost"].get<double>()).epsilon(1e-12));
  }
}

TEST_CASE("solve --mesh search: each dp x tp mesh's cost, the cheapest chosen") {
  const std::string graph = small_llama();
  const test::CommandResult table = test::run_pase("solve " + graph + " --devices 16" + kCalibrated + " --mesh search");
  REQUIRE(table.status == 0);
  std::istringstream lines(table.output);
  std::string line, chosen;
  double best = std::numeric_limits<double>::infinity(), chosen_cost = 0;
  int meshes = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("mesh search: ", 0) != 0) continue;
    ++meshes;
    const size_t at = line.find(' ', 13 + line.substr(13).find(" x ") + 3);
    const double cost = std::stod(line.substr(at + 1));
    best = std::min(best, cost);
    if (line.find("(chosen)") != std::string::npos) chosen = line.substr(13, at - 13), chosen_cost = cost;
  }
  CHECK(meshes == 4);  // tp = 8, 4, 2, 1
  CHECK(chosen_cost == best);
  CHECK(table.output.find("plan on mesh " + chosen + ": ") != std::string::npos);
  const test::CommandResult file =
      test::run_pase("solve " + graph + " --devices 16" + kCalibrated + " --mesh search --json");
  REQUIRE(file.status == 0);
  CHECK(json::parse(file.output)["total_cost"].get<double>() == doctest::Approx(best).epsilon(1e-8));
  CHECK(file.error.find("(chosen)") != std::string::npos);
}

TEST_CASE("solve --mesh search under a cap: a mesh bounded out costs no less than the chosen, which is the best mesh") {
  const std::string graph = small_llama();
  const std::string options =
      " --devices 16" + kCalibrated + " --zero auto --recompute auto --micro-batches auto --memory-per-device 2MiB";
  const test::CommandResult table = test::run_pase("solve " + graph + options + " --mesh search");
  REQUIRE(table.status == 0);
  std::istringstream lines(table.output);
  std::string line;
  double chosen = 0, least_alone = std::numeric_limits<double>::infinity();
  int bounded_out = 0;
  std::vector<double> bounds;
  while (std::getline(lines, line)) {
    if (line.rfind("mesh search: ", 0) != 0) continue;
    const std::string mesh = line.substr(13, line.find(' ', line.find(" x ") + 3) - 13);
    CAPTURE(line);
    // Each mesh solved alone: the search must keep the least of these.
    const test::CommandResult alone = test::run_pase("solve " + graph + options + " --mesh " + mesh.substr(0, mesh.find(' ')) +
                                                     "," + mesh.substr(mesh.rfind(' ') + 1) + " --json");
    REQUIRE(alone.status == 0);
    least_alone = std::min(least_alone, json::parse(alone.output)["total_cost"].get<double>());
    const std::string words = "bounded out: nothing on it costs less than ";
    const size_t at = line.find(words);
    if (at != std::string::npos) {
      ++bounded_out;
      bounds.push_back(std::stod(line.substr(at + words.size())));
    } else if (line.find("(chosen)") != std::string::npos) {
      chosen = std::stod(line.substr(line.find(' ', line.find(" x ") + 3) + 1));
    }
  }
  CHECK(bounded_out > 0);  // the case does exercise the bound
  CHECK(chosen == doctest::Approx(least_alone).epsilon(1e-9));
  for (double bound : bounds) CHECK(bound >= chosen * (1 - 1e-9));
}

TEST_CASE("solve --mesh: what cannot be searched is refused in one line") {
  const std::string graph = small_llama();
  const test::CommandResult pase_model = test::run_pase("solve " + graph + " --devices 16 --mesh search");
  CHECK(pase_model.status == 2);
  CHECK(pase_model.error ==
        "error: --mesh search: needs a model of the machine's links (--cost-model calibrated --machine NAME)\n");
}

namespace {

// The number after `key` in `output`.
double number_after(const std::string& output, const std::string& key) {
  const size_t at = output.find(key);
  REQUIRE(at != std::string::npos);
  return std::stod(output.substr(at + key.size()));
}

}  // namespace

TEST_CASE("solve --mesh of many axes: the layouts of its axes grouped in two, at least as good as --mesh search") {
  // Six axes have thousands of layouts a layer; grouped in two (the first k axes, the rest) they are the
  // layouts of every dp x tp mesh whose tp is a run of the last axes, which --mesh search tries one by one.
  const std::string graph = small_llama();
  const test::CommandResult many_axes =
      test::run_pase("solve " + graph + " --devices 64" + kCalibrated + " --mesh a=2,b=2,c=2,d=2,e=2,f=2");
  REQUIRE(many_axes.status == 0);
  CHECK(many_axes.output.find("axis assignment searched with the configurations (the layouts of its axes grouped in two, "
                              "each priced over its links)") != std::string::npos);
  const double total = number_after(many_axes.output, "total cost ");
  CHECK(number_after(many_axes.output, "realized total cost ") == doctest::Approx(total).epsilon(1e-9));
  const test::CommandResult searched = test::run_pase("solve " + graph + " --devices 64" + kCalibrated + " --mesh search");
  REQUIRE(searched.status == 0);
  CHECK(total <= number_after(searched.output, "total cost ") * (1 + 1e-9));
  // The default mesh is the prime factors' (the same six axes, named x0..x5): the same search.
  const test::CommandResult by_default = test::run_pase("solve " + graph + " --devices 64" + kCalibrated);
  REQUIRE(by_default.status == 0);
  CHECK(number_after(by_default.output, "total cost ") == total);
  CHECK(by_default.output.find("plan on mesh x0=2 x x1=2 x x2=2 x x3=2 x x4=2 x x5=2") != std::string::npos);
  CHECK(number_after(by_default.output, "realized total cost ") == doctest::Approx(total).epsilon(1e-9));
}

TEST_CASE("compare --mesh search: every strategy priced as placed, the optimum at solve --mesh search's cost") {
  const std::string graph = small_llama();
  const std::string out = test::write_temp_file("compare_mesh.json", "");
  const test::CommandResult compared =
      test::run_pase("compare " + graph + " --devices 16" + kCalibrated + " --mesh search --json " + out);
  REQUIRE(compared.status == 0);
  CHECK(compared.output.find("note: every cost is its plan's as placed on the mesh named (--mesh search: each strategy "
                             "on its cheapest mesh)\n") != std::string::npos);
  const test::CommandResult solved =
      test::run_pase("solve " + graph + " --devices 16" + kCalibrated + " --mesh search --json");
  REQUIRE(solved.status == 0);
  const json plan = json::parse(solved.output);
  const json results = json::parse(read_text_file(out))["results"][0]["strategies"];
  double optimum = 0;
  int rows = 0;
  for (const json& row : results) {
    ++rows;
    CAPTURE(row.dump());
    REQUIRE(row.contains("mesh"));
    CHECK(row["mesh"].get<std::string>().find(" x tp=") != std::string::npos);
    if (row["name"] == "pase") optimum = row["cost"].get<double>();
  }
  CHECK(rows >= 4);
  CHECK(optimum == doctest::Approx(plan["total_cost"].get<double>()).epsilon(1e-12));
  // On one given mesh, with the whole space searched (--splits all), no
  // baseline placed there beats the optimum placed there.
  const test::CommandResult one_mesh = test::run_pase("compare " + graph + " --devices 16" + kCalibrated +
                                                      " --splits all --mesh dp=4,tp=4 --json " + out);
  REQUIRE(one_mesh.status == 0);
  const json on_mesh = json::parse(read_text_file(out))["results"][0]["strategies"];
  double pase = 0;
  for (const json& row : on_mesh)
    if (row["name"] == "pase") pase = row["cost"].get<double>();
  for (const json& row : on_mesh) {
    CAPTURE(row.dump());
    CHECK(row["mesh"] == "dp=4 x tp=4");
    CHECK(row["cost"].get<double>() >= pase * (1 - 1e-9));
  }
  const test::CommandResult unplaced = test::run_pase("compare " + graph + " --devices 16" + kCalibrated);
  REQUIRE(unplaced.status == 0);
  CHECK(unplaced.output.find("note: costs unplaced: each collective priced by the size of its group (--mesh search "
                             "prices every strategy as placed, over the links it crosses)\n") != std::string::npos);
  // Techniques left to the solver: the baselines take one each (FSDP ZeRO-3,
  // the others ZeRO-1), recomputing fully, at the optimum's micro-batch count.
  const test::CommandResult techniques = test::run_pase("compare " + graph + " --devices 16" + kCalibrated +
                                                        " --mesh search --zero auto --recompute auto --micro-batches "
                                                        "auto --memory-per-device 1GiB --json " + out);
  REQUIRE(techniques.status == 0);
  const json with_techniques = json::parse(read_text_file(out));
  CHECK(with_techniques["results"][0]["strategies"].size() >= 5);
  for (const json& row : with_techniques["results"][0]["strategies"]) CHECK(row.contains("mesh"));
  const test::CommandResult refused = test::run_pase("compare " + graph + " --devices 16 --mesh search");
  CHECK(refused.status == 2);
  CHECK(refused.error ==
        "error: --mesh search: needs a model of the machine's links (--cost-model calibrated --machine NAME)\n");
}

TEST_CASE("batch --mesh search: each optimum's cost as placed, recorded with its mesh and checked against it") {
  const std::string graph = small_llama();
  const std::string summary = test::write_temp_file("batch_mesh.json", "");
  const test::CommandResult batch = test::run_pase("batch " + graph + " --devices 16" + kCalibrated +
                                                   " --mesh search --summary " + summary);
  REQUIRE(batch.status == 0);
  const test::CommandResult solved =
      test::run_pase("solve " + graph + " --devices 16" + kCalibrated + " --mesh search --json");
  REQUIRE(solved.status == 0);
  const json recorded = json::parse(read_text_file(summary));
  CHECK(recorded["mesh"] == "search");
  const json& result = recorded["results"][0];
  CHECK(result["cost"].get<double>() == doctest::Approx(json::parse(solved.output)["total_cost"].get<double>()).epsilon(1e-12));
  CHECK(batch.output.find(" ok on " + result["mesh"].get<std::string>()) != std::string::npos);
  const test::CommandResult again = test::run_pase("batch " + graph + " --devices 16" + kCalibrated +
                                                   " --mesh search --expect " + summary);
  CHECK(again.status == 0);
  const test::CommandResult unplaced =
      test::run_pase("batch " + graph + " --devices 16" + kCalibrated + " --expect " + summary);
  CHECK(unplaced.status == 1);  // bad input: the summary records other costs
  CHECK(unplaced.error == "error: " + summary + ": field 'mesh': recorded with --mesh search, this run has none\n");
}

TEST_CASE("evaluate --baseline --mesh search: compare's row, and its plan priced again at the same cost") {
  const std::string graph = small_llama();
  const std::string out = test::write_temp_file("compare_mesh_baselines.json", "");
  REQUIRE(test::run_pase("compare " + graph + " --devices 16" + kCalibrated + " --mesh search --json " + out).status == 0);
  const json rows = json::parse(read_text_file(out))["results"][0]["strategies"];
  for (const char* baseline : {"data-parallel", "megatron"}) {
    CAPTURE(baseline);
    const std::string written = test::write_temp_file(std::string("evaluate_mesh_") + baseline + ".json", "");
    const test::CommandResult evaluated = test::run_pase("evaluate " + graph + " --devices 16" + kCalibrated +
                                                         " --baseline " + baseline + " --mesh search -o " + written);
    REQUIRE(evaluated.status == 0);
    const json file = json::parse(read_text_file(written));
    for (const json& row : rows)
      if (row["name"] == baseline) {
        CHECK(file["total_cost"].get<double>() == doctest::Approx(row["cost"].get<double>()).epsilon(1e-12));
        CHECK(evaluated.output.find("plan on mesh " + row["mesh"].get<std::string>() + ": realized total cost") !=
              std::string::npos);
      }
    const test::CommandResult again = test::run_pase("evaluate " + graph + kCalibrated + " --strategy " + written + " --json");
    REQUIRE(again.status == 0);
    CHECK(json::parse(again.output)["total_cost"].get<double>() ==
          doctest::Approx(file["total_cost"].get<double>()).epsilon(1e-12));
    const test::CommandResult refused =
        test::run_pase("evaluate " + graph + kCalibrated + " --strategy " + written + " --mesh search");
    CHECK(refused.status == 2);
    CHECK(refused.error == "error: --mesh: applies to --baseline (a strategy file's plan has its own mesh)\n");
  }
}
