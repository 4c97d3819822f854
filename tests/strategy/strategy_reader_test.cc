// Reading strategy files back: matching layers, validating configurations
// with messages that name the file, layer and field, and `pase evaluate`.
#include <doctest/doctest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "base/text_file.h"
#include "dp/solve.h"
#include "strategy/strategy_file.h"
#include "strategy/strategy_reader.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

struct Fixture {
  Graph graph = load_graph(test::source_path("data/graphs/alexnet.json"));
  CostTables tables = [this] {
    Machine machine;
    machine.devices = 8;
    return build_cost_tables(graph, machine);
  }();
  Solution optimum = solve(tables.objective, graph.vertex_names(), SolveOptions{});
  json document = json::parse(write_strategy_file(graph, tables, optimum.choice, optimum.cost, nullptr));

  json& layer(const std::string& name) {
    for (json& l : document["layers"])
      if (l["name"] == name) return l;
    FAIL("no layer " << name);
    return document;
  }
  /// The error strategy_choice raises for the current document ("" if none).
  std::string error() {
    try {
      (void)strategy_choice(parse_strategy_file(document.dump(), "s.json"), graph, tables);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

}  // namespace

TEST_CASE("strategy_choice") {
  Fixture f;
  SUBCASE("round trip of the solver's own file") {
    std::vector<int32_t> result = strategy_choice(parse_strategy_file(f.document.dump(), "s.json"), f.graph, f.tables);
    CHECK(result == f.optimum.choice);
  }
  SUBCASE("layers in any order") {
    std::reverse(f.document["layers"].begin(), f.document["layers"].end());
    CHECK(f.error() == "");
  }
  SUBCASE("product over the device count") {
    f.layer("fc6")["config"] = {1, 3, 4};
    CHECK(f.error() == "s.json: layer 'fc6': field 'config': (1,3,4) is not a valid configuration (product 12 exceeds 8 devices)");
  }
  SUBCASE("not a divisor") {
    f.layer("fc6")["config"] = {1, 3, 2};
    CHECK(f.error() == "s.json: layer 'fc6': field 'config': (1,3,2) is not a valid configuration (dim 'n' (extent 4096) "
                       "cannot be split 3 ways: not a divisor)");
  }
  SUBCASE("unsplittable dimension") {
    f.layer("conv1")["config"] = {4, 1, 2, 1, 1, 1, 1};
    CHECK(f.error() == "s.json: layer 'conv1': field 'config': (4,1,2,1,1,1,1) is not a valid configuration (dim 'h' "
                       "(extent 55) cannot be split)");
  }
  SUBCASE("below the cutoff") {
    f.layer("fc8")["config"] = {1, 1, 8};  // k = 4096: fine
    CHECK(f.error() == "");
    f.layer("conv1")["config"] = {1, 1, 1, 1, 1, 1, 8};  // n = 96: fine
    CHECK(f.error() == "");
    f.layer("conv1")["config"] = {1, 3, 1, 1, 1, 1, 1};  // c = 3: 1 per device < 4
    CHECK(f.error() == "s.json: layer 'conv1': field 'config': (1,3,1,1,1,1,1) is not a valid configuration (dim 'c' "
                       "(extent 3) cannot be split 3 ways: 1 per device is below the cutoff 4)");
  }
  SUBCASE("reshape halves must be contiguous") {
    f.layer("flat/ravel")["config"] = {2, 1, 1, 1};
    CHECK(f.error() == "");
    f.layer("flat/ravel")["config"] = {2, 2, 1, 1};
    CHECK(f.error() == "s.json: layer 'flat/ravel': field 'config': (2,2,1,1) is not a valid configuration (a reshape "
                       "half takes only contiguous splits (leading dims fully split, at most one partly split dim, then 1s))");
  }
  SUBCASE("wrong length") {
    f.layer("fc7")["config"] = {1, 2};
    CHECK(f.error() == "s.json: layer 'fc7': field 'config': expected 3 entries (dims 'bnk'), got 2");
  }
  SUBCASE("non-positive split") {
    f.layer("fc7")["config"] = {1, 0, 2};
    CHECK(f.error() == "s.json: layer 'fc7': field 'config[1]': expected a split count in 1..2^30, got 0");
  }
  SUBCASE("dims that do not match") {
    f.layer("fc7")["dims"] = "xyz";
    CHECK(f.error() == "s.json: layer 'fc7': field 'dims': 'xyz' does not match the vertex's dims 'bnk'");
  }
  SUBCASE("missing vertex") {
    auto& layers = f.document["layers"];
    layers.erase(layers.begin() + 2);
    CHECK(f.error() == "s.json: layer 'conv2': missing: every vertex of graph 'alexnet' needs a configuration");
  }
  SUBCASE("vertex listed twice") {
    f.document["layers"].push_back(f.layer("fc7"));
    CHECK(f.error() == "s.json: layer 'fc7': listed twice (layers[11] and layers[14])");
  }
  SUBCASE("unknown layer") {
    f.layer("fc7")["name"] = "fc77";
    CHECK(f.error() == "s.json: layer 'fc77': no such vertex in graph 'alexnet' (did you mean 'fc7'?)");
  }
  SUBCASE("not a strategy file") {
    f.document["format"] = "pase-graph";
    CHECK(f.error() == "s.json: field 'format': expected \"pase-strategy\", got \"pase-graph\": this is a graph file, not a strategy file");
    f.document.erase("format");
    CHECK(f.error() == "s.json: field 'format': missing (expected \"pase-strategy\")");
  }
  SUBCASE("config not an array") {
    f.layer("fc7")["config"] = "1,2,4";
    CHECK(f.error() == "s.json: layer 'fc7': field 'config': expected an array of split counts, got a string");
  }
}

TEST_CASE("pase evaluate") {
  std::string graph = test::source_path("data/graphs/alexnet.json");
  std::string strategy = test::write_temp_file("evaluate_s.json", "");
  test::CommandResult solved = test::run_pase("solve \"" + graph + "\" --devices 8 --out \"" + strategy + "\"");
  REQUIRE(solved.status == 0);
  SUBCASE("solve --out then evaluate gives the same total") {
    test::CommandResult result = test::run_pase("evaluate \"" + graph + "\" --strategy \"" + strategy + "\" --json");
    REQUIRE(result.status == 0);
    json priced = json::parse(result.output);
    CHECK(priced["devices"] == 8);  // from the file
    CHECK(priced["total_cost"].get<double>() == json::parse(test::run_pase("solve \"" + graph + "\" -p 8 --json").output)["total_cost"].get<double>());
    const double optimum = test::zoo_optimum("alexnet", 8);
    CHECK(std::fabs(priced["total_cost"].get<double>() - optimum) <= 1e-9 * optimum);
    test::CommandResult table = test::run_pase("evaluate \"" + graph + "\" --strategy \"" + strategy + "\"");
    CHECK(table.status == 0);
    CHECK(table.output.find("total cost " + test::flop_text(optimum) + " flop") != std::string::npos);
    CHECK(table.output.find("fc6") != std::string::npos);
    CHECK(table.error == "");
  }
  SUBCASE("another device count is priced, with a warning") {
    test::CommandResult result = test::run_pase("evaluate \"" + graph + "\" --strategy \"" + strategy + "\" --devices 16");
    CHECK(result.status == 0);
    CHECK(result.error == "warning: " + strategy + " was written for 8 devices; pricing it for 16\n");
    CHECK(result.output.find("total cost " + test::flop_text(test::zoo_optimum("alexnet", 8)) + " flop") !=
          std::string::npos);
  }
  SUBCASE("too few devices for the file") {
    test::CommandResult result = test::run_pase("evaluate \"" + graph + "\" --strategy \"" + strategy + "\" --devices 4");
    CHECK(result.status == 1);
    CHECK(result.error.find("error: " + strategy + ": layer 'conv1': field 'config': (8,1,1,1,1,1,1) is not a valid "
                            "configuration (product 8 exceeds 4 devices)\n") != std::string::npos);
  }
  SUBCASE("a hand-edited invalid configuration") {
    json document = json::parse(test::run_pase("solve \"" + graph + "\" -p 8 --json").output);
    for (json& layer : document["layers"])
      if (layer["name"] == "fc6") layer["config"] = {1, 3, 4};
    std::string edited = test::write_temp_file("evaluate_edited.json", document.dump(2));
    test::CommandResult result = test::run_pase("evaluate \"" + graph + "\" -s \"" + edited + "\"");
    CHECK(result.status == 1);
    CHECK(result.output == "");
    CHECK(result.error == "error: " + edited +
                              ": layer 'fc6': field 'config': (1,3,4) is not a valid configuration (product 12 exceeds 8 "
                              "devices)\n");
  }
  SUBCASE("a baseline by name") {
    test::CommandResult result = test::run_pase("evaluate \"" + graph + "\" --baseline owt --devices 8");
    CHECK(result.status == 0);
    CHECK(result.output.find("strategy owt") != std::string::npos);
    CHECK(result.output.find("total cost " + test::flop_text(test::baseline_cost("owt", "alexnet", 8)) + " flop") !=
          std::string::npos);
    test::CommandResult typo = test::run_pase("evaluate \"" + graph + "\" --baseline data-paralel --devices 8");
    CHECK(typo.status == 1);
    CHECK(typo.error == "error: unknown strategy 'data-paralel' (did you mean 'data-parallel'?); choose data-parallel, "
                        "owt, megatron, fsdp or mcmc\n");
    test::CommandResult megatron = test::run_pase("evaluate \"" + graph + "\" --baseline megatron --devices 8");
    CHECK(megatron.status == 1);
    CHECK(megatron.error == "error: --baseline: megatron does not apply to 'alexnet': not transformer-like (no einsum "
                            "with a head letter 'h')\n");
  }
  SUBCASE("neither or both sources") {
    test::CommandResult none = test::run_pase("evaluate \"" + graph + "\" --devices 8");
    CHECK(none.status == 1);
    CHECK(none.error == "error: evaluate: give exactly one of --strategy FILE or --baseline NAME\n");
    test::CommandResult both = test::run_pase("evaluate \"" + graph + "\" -s x.json --baseline owt --devices 8");
    CHECK(both.status != 0);
    CHECK(both.error.find("--strategy excludes --baseline") != std::string::npos);
  }
}

TEST_CASE("write_strategy_file: a top-level field or a layer per line") {
  Fixture f;
  std::string text = write_strategy_file(f.graph, f.tables, f.optimum.choice, f.optimum.cost, nullptr);
  std::vector<std::string> lines;
  for (size_t start = 0, end; start < text.size(); start = end + 1) {
    end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
  }
  const size_t layers = f.graph.vertices.size();
  REQUIRE(lines.size() == 12 + 1 + layers + 2);  // { + 11 fields, "layers": [, a line per layer, ], }
  CHECK(lines.front() == "{");
  CHECK(lines[1] == "  \"format\": \"pase-strategy\",");
  CHECK(lines[12] == "  \"layers\": [");
  for (size_t i = 0; i < layers; ++i) {
    json layer = json::parse(lines[13 + i].substr(4, lines[13 + i].size() - 4 - (i + 1 < layers ? 1 : 0)));
    CHECK(layer["name"] == f.graph.vertices[i].name);
  }
  CHECK(lines[13 + layers] == "  ]");
  CHECK(lines.back() == "}");
}

TEST_CASE("pase evaluate: a device count past 2^30 in the strategy file is bad input named by its field") {
  const std::string file = test::write_temp_file(
      "huge_devices.json", R"({"format": "pase-strategy", "version": 1, "graph": "alexnet", "devices": 4611686018427387904, "layers": []})");
  const test::CommandResult result = test::run_pase("evaluate " + test::source_path("data/graphs/alexnet.json") + " --strategy " + file);
  CHECK(result.status == 1);
  CHECK(result.error == "error: " + file + ": field 'devices': at most 2^30 devices, got 4611686018427387904; pass --devices\n");
}

// evaluate priced a strategy file at --dtype/--optimizer's defaults (fp32,
// Adam) whatever the file recorded, as explain did; both now take the file's
// memory setup unless told otherwise.
TEST_CASE("pase evaluate: a strategy file is priced and counted at its recorded dtype and optimizer unless given") {
  const std::string graph = test::source_path("data/graphs/transformer.json");
  const std::string calibrated = " --cost-model calibrated --machine dgx-a100";
  const std::string file = test::write_temp_file("evaluate-bf16.json", "");
  REQUIRE(test::run_pase("solve " + graph + " --devices 8 --dtype bf16 --optimizer sgd" + calibrated + " -o " + file).status == 0);
  const nlohmann::json solved = nlohmann::json::parse(read_text_file(file));
  auto evaluated = [&](const std::string& extra) {
    const test::CommandResult result = test::run_pase("evaluate " + graph + " --strategy " + file + " --json" + calibrated + extra);
    REQUIRE(result.status == 0);
    return nlohmann::json::parse(result.output);
  };
  const nlohmann::json as_recorded = evaluated("");
  CHECK(as_recorded["total_cost"].get<double>() == doctest::Approx(solved["total_cost"].get<double>()).epsilon(1e-12));
  CHECK(as_recorded["memory"] == solved["memory"]);
  const nlohmann::json fp32 = evaluated(" --dtype fp32 --optimizer adam");
  CHECK(fp32["memory"]["dtype"] == "fp32");
  CHECK(fp32["memory"]["per_device_bytes"].get<uint64_t>() > solved["memory"]["per_device_bytes"].get<uint64_t>());
  CHECK(fp32["total_cost"].get<double>() > 2 * solved["total_cost"].get<double>());
}
