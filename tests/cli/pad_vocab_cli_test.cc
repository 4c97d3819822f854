// `pase models export ... --pad-vocab M` (docs/zoo.md, "Vocabulary
// padding"): the vocabulary rounded up to a multiple of M as Megatron-LM pads
// it, said in one line; what it buys (GPT-2's 50257 = 29 x 1733 splits no
// way on 8 devices, 50304 does); the refusals.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "test_support.h"

using json = nlohmann::json;

namespace {

json node(const json& graph, const std::string& name) {
  for (const json& n : graph["nodes"])
    if (n["name"] == name) return n;
  FAIL("no node " << name);
  return {};
}

}  // namespace

TEST_CASE("--pad-vocab rounds the vocabulary of the token table and the head up, and says so") {
  const pase::test::CommandResult padded = pase::test::run_pase("models export gpt2-xl --pad-vocab 128");
  REQUIRE(padded.status == 0);
  CHECK(padded.error == "note: vocabulary 50257 padded to 50304 (a multiple of 128)\n");
  const json graph = json::parse(padded.output);
  CHECK(graph["name"] == "gpt2-xl");
  CHECK(node(graph, "transformer/wte")["vocab"] == 50304);
  CHECK(node(graph, "lm_head")["units"] == 50304);
  const pase::test::CommandResult plain = pase::test::run_pase("models export gpt2-xl");
  REQUIRE(plain.status == 0);
  CHECK(node(json::parse(plain.output), "lm_head")["units"] == 50257);  // unchanged without it
  // A vocabulary already a multiple: as it is, and nothing said.
  const pase::test::CommandResult llama = pase::test::run_pase("models export llama2-7b --pad-vocab 128");
  REQUIRE(llama.status == 0);
  CHECK(llama.error.empty());
  CHECK(node(json::parse(llama.output), "lm_head")["units"] == 32000);
}

TEST_CASE("--pad-vocab lets the head split its vocabulary: 8 ways on 8 devices where 50257 splits none") {
  auto head_config = [](const std::string& pad) {
    const std::string graph = pase::test::write_temp_file(
        pad.empty() ? "pad_vocab_none.json" : "pad_vocab_128.json",
        pase::test::run_pase("models export gpt --layers 1 --d-model 64 --heads 4 --seq 16 --vocab 50257 --batch 1 " +
                             pad)
            .output);
    const pase::test::CommandResult solved = pase::test::run_pase("solve " + graph + " --devices 8 --no-plan --json");
    REQUIRE(solved.status == 0);
    const json strategy = json::parse(solved.output);
    for (const json& layer : strategy["layers"])
      if (layer["name"] == "lm_head") return layer["config"].dump();
    return std::string();
  };
  CHECK(head_config("") == "[1,1,1,1]");
  CHECK(head_config("--pad-vocab 128") == "[1,1,8,1]");  // bsnk: n, the vocabulary
}

TEST_CASE("--pad-vocab refusals name the flag") {
  const pase::test::CommandResult zero = pase::test::run_pase("models export gpt3-175b --pad-vocab 0");
  CHECK(zero.status == 2);
  CHECK(zero.error == "error: --pad-vocab: expected a positive multiple, got 0\n");
  const pase::test::CommandResult cnn = pase::test::run_pase("models export alexnet --pad-vocab 8");
  CHECK(cnn.status == 2);
  CHECK(cnn.error == "error: --pad-vocab: only the gpt and llama families take it, not 'alexnet'\n");
}

// `pase import MODEL --pad-vocab M`: the vocabulary is found from the loss
// back to the head (an fc) and its token embedding, never by extent: the
// GPT-2 fixture's 1024 classes are also its MLP's 1024 units, which stay.
TEST_CASE("import --pad-vocab pads the head and its token embedding, not another axis of the same extent") {
  const std::string model = pase::test::source_path("data/onnx/gpt2.onnx");
  const pase::test::CommandResult padded = pase::test::run_pase("import " + model + " --pad-vocab 1000");
  REQUIRE(padded.status == 0);
  CHECK(padded.error == "note: vocabulary 1024 padded to 2000 (a multiple of 1000) in 2 layers: '/wte/Gather', '/MatMul'\n");
  const json graph = json::parse(padded.output);
  CHECK(node(graph, "/wte/Gather")["vocab"] == 2000);  // tied: the table the head reads
  CHECK(node(graph, "/MatMul")["units"] == 2000);
  CHECK(node(graph, "/MatMul")["outputs"] == json::parse("[[16, 128, 2000]]"));
  CHECK(node(graph, "/h.0/c_fc/MatMul")["units"] == 1024);  // the MLP: the same extent, not the vocabulary
  const std::string file = pase::test::write_temp_file("gpt2_padded.json", padded.output);
  CHECK(pase::test::run_pase("solve " + file + " --devices 8 --no-plan --json").status == 0);

  // Untied (a Llama): the one embedding of the head's vocabulary.
  const pase::test::CommandResult llama = pase::test::run_pase("import " + pase::test::source_path("data/onnx/llama.onnx") +
                                                               " --pad-vocab 1000");
  REQUIRE(llama.status == 0);
  CHECK(llama.error ==
        "note: vocabulary 1024 padded to 2000 (a multiple of 1000) in 2 layers: '/embed_tokens/Gather', '/lm_head/MatMul'\n");

  const pase::test::CommandResult already = pase::test::run_pase("import " + model + " --pad-vocab 128");
  REQUIRE(already.status == 0);
  CHECK(already.error == "note: vocabulary 1024 is already a multiple of 128\n");
  CHECK(already.output == pase::test::run_pase("import " + model).output);
}

TEST_CASE("import --pad-vocab refusals name the file, the node and the flag") {
  const std::string model = pase::test::source_path("data/onnx/transformer_encoder.onnx");
  const pase::test::CommandResult encoder = pase::test::run_pase("import " + model + " --pad-vocab 128");
  CHECK(encoder.status == 1);
  CHECK(encoder.error == "error: " + model +
                             ": --pad-vocab: node '/encoder/layers.5/norm2/ReduceMean' (op norm) lies between loss 'loss' "
                             "and an fc head\n");
  const pase::test::CommandResult zero =
      pase::test::run_pase("import " + pase::test::source_path("data/onnx/gpt2.onnx") + " --pad-vocab 0");
  CHECK(zero.status == 2);
  CHECK(zero.error == "error: --pad-vocab: expected a positive multiple, got 0\n");
}
