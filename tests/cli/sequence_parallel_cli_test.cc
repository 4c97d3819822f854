// `--sequence-parallel` end to end (docs/compare.md, "Sequence
// parallelism"): evaluate's Megatron baseline and its strategy file, which
// prices back to the same cost and bytes; compare's Megatron row; and the
// one-line refusals.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "base/text_file.h"
#include "test_support.h"

using namespace pase;
using json = nlohmann::json;

namespace {

// A 2-block GPT with 4 heads, exported once.
std::string tiny_gpt() {
  static const std::string path = [] {
    const std::string out = test::write_temp_file("sp-tiny-gpt.json", "");
    const test::CommandResult exported = test::run_pase(
        "models export gpt --layers 2 --d-model 64 --heads 4 --ff 256 --seq 16 --vocab 100 --batch 8 -o " + out);
    REQUIRE(exported.status == 0);
    return out;
  }();
  return path;
}

}  // namespace

TEST_CASE("evaluate --baseline megatron --sequence-parallel: its file records each GEMM's role and prices back") {
  const std::string graph = tiny_gpt();
  const std::string file = test::write_temp_file("sp-megatron.json", "");
  const std::string common = "evaluate " + graph + " --devices 8 --baseline megatron --tensor-parallel 4 ";
  const test::CommandResult plain = test::run_pase(common + "--json");
  const test::CommandResult sp = test::run_pase(common + "--sequence-parallel -o " + file);
  REQUIRE(plain.status == 0);
  REQUIRE(sp.status == 0);
  CHECK(sp.output.find("strategy megatron (m = 2, n = 4, sequence parallel (as asked))") != std::string::npos);
  const json doc = json::parse(read_text_file(file));
  const json before = json::parse(plain.output);
  std::map<std::string, std::string> roles;
  for (const json& layer : doc["layers"])
    if (layer.contains("sequence_parallel")) roles[layer["name"]] = layer["sequence_parallel"];
  CHECK(roles.size() == 11);  // 2 embeddings, 2 x 4 projections, the logits
  CHECK(roles["transformer/h.0/attn/c_attn"] == "gather_input");
  CHECK(roles["transformer/h.0/mlp/c_proj"] == "scatter_output");
  CHECK(roles["lm_head"] == "gather_input");
  for (const json& layer : before["layers"]) CHECK_FALSE(layer.contains("sequence_parallel"));
  // The norms hold a quarter of what they held.
  CHECK(doc["memory"]["activations_bytes"].get<uint64_t>() < before["memory"]["activations_bytes"].get<uint64_t>());
  SUBCASE("evaluate --strategy prices the roles back: the same cost and bytes") {
    const test::CommandResult again = test::run_pase("evaluate " + graph + " --strategy " + file + " --json");
    REQUIRE(again.status == 0);
    const json priced = json::parse(again.output);
    CHECK(priced["total_cost"].get<double>() == doc["total_cost"].get<double>());
    CHECK(priced["memory"]["per_device_bytes"] == doc["memory"]["per_device_bytes"]);
  }
  SUBCASE("a role the layer cannot play is refused, naming the file, layer and field") {
    json bad = doc;
    for (json& layer : bad["layers"])
      if (layer["name"] == "transformer/h.0/mlp/c_fc") layer["sequence_parallel"] = "scatter_output";
    const std::string path = test::write_temp_file("sp-bad-role.json", bad.dump());
    const test::CommandResult refused = test::run_pase("evaluate " + graph + " --strategy " + path);
    CHECK(refused.status == 1);
    CHECK(refused.error == "error: " + path +
                               ": layer 'transformer/h.0/mlp/c_fc': field 'sequence_parallel': 'scatter_output' does "
                               "not apply to this layer (its role is 'gather_input')\n");
    for (json& layer : bad["layers"])
      if (layer["name"] == "transformer/h.0/ln_1") layer["sequence_parallel"] = "gather_input";
    const std::string none = test::write_temp_file("sp-no-role.json", bad.dump());
    const test::CommandResult no_role = test::run_pase("evaluate " + graph + " --strategy " + none);
    CHECK(no_role.status == 1);
    CHECK(no_role.error.find("layer 'transformer/h.0/ln_1': field 'sequence_parallel': 'gather_input' does not apply to "
                             "this layer (it has no sequence-parallel role)") != std::string::npos);
  }
}

TEST_CASE("--sequence-parallel applies to the Megatron baseline only") {
  const std::string graph = tiny_gpt();
  const test::CommandResult fsdp =
      test::run_pase("evaluate " + graph + " --devices 8 --baseline fsdp --sequence-parallel");
  CHECK(fsdp.status == 2);
  CHECK(fsdp.error == "error: --sequence-parallel: applies to --baseline megatron\n");
  const std::string file = test::write_temp_file("sp-data-parallel.json", "");
  REQUIRE(test::run_pase("evaluate " + graph + " --devices 8 --baseline data-parallel -o " + file).status == 0);
  const test::CommandResult strategy = test::run_pase("evaluate " + graph + " --strategy " + file + " --sequence-parallel");
  CHECK(strategy.status == 2);
  CHECK(strategy.error == "error: --sequence-parallel: applies to --baseline megatron\n");
}

TEST_CASE("compare --sequence-parallel: the Megatron row runs it, the others do not") {
  const std::string graph = tiny_gpt();
  const std::string out = test::write_temp_file("sp-compare.json", "");
  const test::CommandResult compared =
      test::run_pase("compare " + graph + " --devices 8 --tensor-parallel 4 --mcmc-iterations 100 --sequence-parallel --json " + out);
  REQUIRE(compared.status == 0);
  const test::CommandResult evaluated = test::run_pase(
      "evaluate " + graph + " --devices 8 --baseline megatron --tensor-parallel 4 --sequence-parallel --json");
  REQUIRE(evaluated.status == 0);
  const json doc = json::parse(read_text_file(out));
  bool seen = false;
  for (const json& row : doc["results"][0]["strategies"]) {
    if (row["name"] != "megatron") {
      CHECK(row["note"].get<std::string>().find("sequence parallel") == std::string::npos);
      continue;
    }
    seen = true;
    CHECK(row["note"] == "m = 2, n = 4, sequence parallel (as asked)");
    CHECK(row["cost"].get<double>() == json::parse(evaluated.output)["total_cost"].get<double>());
  }
  CHECK(seen);
}
