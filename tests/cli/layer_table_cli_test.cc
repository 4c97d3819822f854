// The layer table of `solve` and `evaluate` as a person reads it
// (cli/layer_table.h, README.md `pase solve`): configurations by
// their letters, costs in units, identical repeated blocks folded after the
// first (byte for byte), every row under --all-layers, and a language
// model's tokens a second and model FLOPs utilisation, checked against the
// GEMMs counted by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/layer_table.h"
#include "test_support.h"

using json = nlohmann::json;

namespace {

// 4 blocks of width 128 (4 heads), 32 tokens, vocabulary 512, batch 16.
const std::string& small_gpt() {
  return pase::test::exported_model("gpt --layers 4 --d-model 128 --heads 4 --seq 32 --vocab 512 --batch 16");
}

// The lines from the table's header to the one before the total.
std::string table_of(const std::string& output) {
  const size_t begin = output.find('\n') + 1;
  return output.substr(begin, output.find("total cost ") - begin);
}

const std::string kSolve = " --devices 4 --no-plan --bandwidth 1000";

}  // namespace

TEST_CASE("layer table: a repeated block's identical copies fold into one line after the first, byte for byte") {
  const pase::test::CommandResult run = pase::test::run_pase("solve " + small_gpt() + kSolve);
  REQUIRE(run.status == 0);
  CHECK(table_of(run.output) ==
      "layer                          op            config  devices        cost  share     time\n"
      "transformer/wte                embedding     a2·c2         4  30.4 MFLOP   6.6%  3.04 us\n"
      "transformer/wpe                embedding     a2           2*  3.47 MFLOP   0.7%   347 ns\n"
      "transformer/embeddings         elementwise   a2           2*  32.8 kFLOP   0.0%  3.28 ns\n"
      "transformer/h.0/ln_1           norm          a2           2*   565 kFLOP   0.1%  56.5 ns\n"
      "transformer/h.0/attn/c_attn    einsum        b2·h2         4  23.6 MFLOP   5.1%  2.36 us\n"
      "transformer/h.0/attn/split     unstack       a2·d2         4      0 FLOP   0.0%     0 ns\n"
      "transformer/h.0/attn/logits    einsum        b2·h2         4  1.57 MFLOP   0.3%   157 ns\n"
      "transformer/h.0/attn/softmax   softmax       a2·b2         4   590 kFLOP   0.1%    59 ns\n"
      "transformer/h.0/attn/context   einsum        b2·h2         4  1.57 MFLOP   0.3%   157 ns\n"
      "transformer/h.0/attn/c_proj    einsum        b2·h2         4  9.67 MFLOP   2.1%   967 ns\n"
      "transformer/h.0/attn/residual  elementwise   a2           2*  32.8 kFLOP   0.0%  3.28 ns\n"
      "transformer/h.0/ln_2           norm          a2           2*   565 kFLOP   0.1%  56.5 ns\n"
      "transformer/h.0/mlp/c_fc       einsum        b2·f2         4  30.8 MFLOP   6.6%  3.08 us\n"
      "transformer/h.0/mlp/c_proj     einsum        b2·f2         4  30.5 MFLOP   6.6%  3.05 us\n"
      "transformer/h.0/mlp/residual   elementwise   a2           2*  32.8 kFLOP   0.0%  3.28 ns\n"
      "transformer/h.1 to transformer/h.3: 3 blocks of 12 layers, each as transformer/h.0 above (299 MFLOP, 64.4%, 29.9 us together)\n"
      "transformer/ln_f               norm          a2           2*   565 kFLOP   0.1%  56.5 ns\n"
      "lm_head                        fc            b2·n2         4  30.4 MFLOP   6.6%  3.04 us\n"
      "loss                           softmax_xent  a2·c2         4   304 kFLOP   0.1%  30.4 ns\n"
      "36 of 54 layers folded into the blocks they repeat (--all-layers prints every row)\n"
      "* on fewer than the 4 devices (the others idle for that layer): 19 of 54 layers; `pase explain GRAPH --devices 4 --layer NAME` says why\n"
  );
  CHECK(run.output.find("total cost 463258112 flop (463 MFLOP; layers 463 MFLOP, redistribution 0 FLOP), 46.3 us a step "
                        "at 10 TFLOP/s, solved in ") != std::string::npos);
  // evaluate prints the same table for the same strategy.
  const std::string strategy = pase::test::write_temp_file(
      "layer_table_strategy.json", pase::test::run_pase("solve " + small_gpt() + kSolve + " --json").output);
  const pase::test::CommandResult evaluated =
      pase::test::run_pase("evaluate " + small_gpt() + " --strategy " + strategy + " --bandwidth 1000");
  REQUIRE(evaluated.status == 0);
  CHECK(table_of(evaluated.output) == table_of(run.output));
}

TEST_CASE("layer table: --all-layers prints a row for every layer, in the graph's order") {
  const pase::test::CommandResult all = pase::test::run_pase("solve " + small_gpt() + kSolve + " --all-layers");
  REQUIRE(all.status == 0);
  const json strategy = json::parse(pase::test::run_pase("solve " + small_gpt() + kSolve + " --json").output);
  std::istringstream rows(table_of(all.output));
  std::string line;
  std::getline(rows, line);  // the header
  for (const json& layer : strategy["layers"]) {
    REQUIRE(std::getline(rows, line));
    CHECK(line.substr(0, line.find(' ')) == layer["name"].get<std::string>());
  }
  std::getline(rows, line);
  CHECK(line.find("* on fewer than the 4 devices") == 0);  // no fold line
}

TEST_CASE("layer table: tokens a second and MFU of a language model, against the GEMMs counted by hand") {
  const pase::test::CommandResult run = pase::test::run_pase("solve " + small_gpt() + kSolve);
  REQUIRE(run.status == 0);
  // Multiply-adds of the forward pass, 512 tokens: per block q, k, v, the
  // projection and the MLP (12 d^2 per token), the scores and the context
  // (2 x 32 x 128 per token); the head d x V. The embeddings are lookups.
  const double tokens = 16 * 32, d = 128;
  const double forward = tokens * (4 * (12 * d * d + 2 * 32 * d) + d * 512);
  const double step = 463258112.0;  // FLOP: the pase model counts a multiply-add as one
  const double mfu = 3 * forward / (step * 4);
  char expected[128];
  std::snprintf(expected, sizeof expected, "language model: %.3gM tokens/s (512 a step), MFU %.1f%% of 10 TFLOP/s per device\n",
                tokens / (step / 10e12) / 1e6, 100 * mfu);
  CHECK(run.output.find(expected) != std::string::npos);
  CHECK(std::string(expected) == "language model: 11.1M tokens/s (512 a step), MFU 73.3% of 10 TFLOP/s per device\n");
  // Not a language model: no such line.
  CHECK(pase::test::run_pase("solve " + pase::test::source_path("data/graphs/alexnet.json") + " --devices 8")
            .output.find("language model:") == std::string::npos);
}

TEST_CASE("layer table cells: configurations by their letters, costs in units, rounding noise as zero") {
  CHECK(pase::config_letters("bhrlke", {8, 2, 1, 1, 1, 1}) == "b8\u00b7h2");
  CHECK(pase::config_letters("abc", {1, 1, 1}) == "-");
  CHECK(pase::format_flop(97098296512.0) == "97.1 GFLOP");
  CHECK(pase::format_flop(0) == "0 FLOP");
  CHECK(pase::format_flop(999.4) == "999 FLOP");
  CHECK(pase::format_flop(999.6) == "1 kFLOP");
  CHECK(pase::format_cost_text(-2.1e-15, "seconds") == "0 ns");
  CHECK(pase::format_cost_text(8.4996e-05, "seconds") == "85 us");
  CHECK(pase::format_cost_text(-0.004, "seconds") == "-4 ms");
}
