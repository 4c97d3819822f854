// The language-model builders (graphs/llm_zoo.h) and `pase models export
// gpt|llama`: block structure, parameter counts restated from the
// architectures (and the published counts of GPT-2 and LLaMA-2), Hugging
// Face weight names, the file round trip through `pase solve`, and the
// option errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "base/error.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "graphs/layer_weights.h"
#include "graphs/llm_zoo.h"
#include "graphs/vertex_model.h"
#include "test_support.h"
#include "base/text_file.h"

using namespace pase;

namespace {

// Small models: 2 blocks, tiny widths; the llama one groups 8 query heads onto 2 key/value heads.
const LlmShape kTinyGpt = {/*layers=*/2, /*d_model=*/64, /*heads=*/4, /*kv_heads=*/4, /*ff=*/256, /*seq=*/16,
                           /*vocab=*/100, /*batch=*/2};
const LlmShape kTinyLlama = {/*layers=*/2, /*d_model=*/64, /*heads=*/8, /*kv_heads=*/2, /*ff=*/96, /*seq=*/16,
                             /*vocab=*/100, /*batch=*/2};

const char* const kTinyGptFlags = "--layers 2 --d-model 64 --heads 4 --ff 256 --seq 16 --vocab 100 --batch 2";
const char* const kTinyLlamaFlags = "--layers 2 --d-model 64 --heads 8 --kv-heads 2 --ff 96 --seq 16 --vocab 100 --batch 2";

struct Weights {
  std::map<std::string, Shape> shapes;        // each name once
  std::map<std::string, int> readers;         // layers that read it
  int64_t parameters = 0;                     // elements over distinct names
};

Weights weights_of(const Graph& graph) {
  Weights w;
  for (const Vertex& vertex : graph.vertices)
    for (const LayerWeight& weight : layer_weights(vertex, build_vertex_model(vertex))) {
      auto [it, inserted] = w.shapes.emplace(weight.name, weight.shape);
      CHECK(it->second == weight.shape);
      ++w.readers[weight.name];
      if (inserted) w.parameters += *checked_product(weight.shape);
    }
  return w;
}

size_t vertices_under(const Graph& graph, const std::string& prefix) {
  size_t n = 0;
  for (const Vertex& v : graph.vertices) n += v.name.rfind(prefix, 0) == 0;
  return n;
}

std::set<std::string> names_of(const Weights& w) {
  std::set<std::string> names;
  for (const auto& [name, shape] : w.shapes) names.insert(name);
  return names;
}

Graph built(LlmFamily family, const LlmShape& shape) {
  return build_graph(build_llm_graph(family, shape, llm_family_name(family)), "model.json");
}

const NodeV1& node_of(const GraphFileV1& file, const std::string& name) {
  const auto it = std::find_if(file.nodes.begin(), file.nodes.end(), [&](const NodeV1& n) { return n.name == name; });
  REQUIRE(it != file.nodes.end());
  return *it;
}

const Vertex& vertex(const Graph& graph, const std::string& name) {
  return graph.vertices.at(static_cast<size_t>(graph.find_vertex(name)));
}

// GPT-2/GPT-3 parameters, restated per module: token and position tables, per
// block two LayerNorms (scale and shift), c_attn [d, 3d] + [3d], attn.c_proj
// [d, d] + [d], mlp.c_fc [d, ff] + [ff], mlp.c_proj [ff, d] + [d]; ln_f. The
// output projection is the token table again (tied).
int64_t gpt_parameters(const LlmShape& s) {
  const int64_t d = s.d_model;
  const int64_t block = 2 * (2 * d) + (d * 3 * d + 3 * d) + (d * d + d) + (d * s.ff + s.ff) + (s.ff * d + d);
  return s.vocab * d + s.seq * d + s.layers * block + 2 * d;
}

// LLaMA parameters: embed_tokens and lm_head [V, d] each, per block two RMSNorm
// scales, q_proj and o_proj [d, d], k_proj and v_proj [kv·hd, d], gate_proj,
// up_proj and down_proj d·ff each; the final norm.
int64_t llama_parameters(const LlmShape& s) {
  const int64_t d = s.d_model, kv_width = s.kv_heads * (s.d_model / s.heads);
  const int64_t block = 2 * d + 2 * d * d + 2 * kv_width * d + 3 * d * s.ff;
  return 2 * s.vocab * d + s.layers * block + d;
}

}  // namespace

TEST_CASE("build_llm_graph: gpt blocks, weights and parameter count") {
  const Graph graph = built(LlmFamily::Gpt, kTinyGpt);
  // Per block: ln_1, c_attn, split, logits, softmax, context, c_proj, residual,
  // ln_2, c_fc, c_proj, residual; around them wte, wpe, their sum, ln_f, lm_head, loss.
  CHECK(vertices_under(graph, "transformer/h.0/") == 12);
  CHECK(vertices_under(graph, "transformer/h.1/") == 12);
  CHECK(graph.vertices.size() == 2 * 12 + 6);

  const Weights w = weights_of(graph);
  // 100·64 + 16·64 + 2·(256 + 12480 + 4160 + 16640 + 16448) + 128 = 7424 + 2·49984 + 128
  CHECK(gpt_parameters(kTinyGpt) == 107520);
  CHECK(w.parameters == 107520);
  std::set<std::string> correct = {"transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight",
                                   "transformer.ln_f.bias"};
  for (const char* layer : {"0", "1"})
    for (const char* module : {"ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"})
      for (const char* attribute : {"weight", "bias"})
        correct.insert(std::string("transformer.h.") + layer + "." + module + "." + attribute);
  CHECK(names_of(w) == correct);  // Hugging Face GPT2Model's state dict, one name each
  for (const auto& [name, readers] : w.readers) {
    CAPTURE_BOUND(name);
    CHECK(readers == (name == "transformer.wte.weight" ? 2 : 1));  // the token table is also lm_head's
  }
  // The fused projection's weight and bias: [d, 3d] and [3d] with the heads exposed.
  CHECK(w.shapes.at("transformer.h.0.attn.c_attn.weight") == Shape{64, 3, 4, 16});
  CHECK(w.shapes.at("transformer.h.0.attn.c_attn.bias") == Shape{3, 4, 16});
  CHECK(w.shapes.at("transformer.h.1.mlp.c_fc.weight") == Shape{64, 256});  // Conv1D: [in, out]
  // The checkpoint holds them as Hugging Face's Conv1D does: [d, 3d], [3d], [d, d].
  CHECK(graph.checkpoint_shapes == std::map<std::string, Shape>{
                                       {"transformer.h.0.attn.c_attn.weight", {64, 192}},
                                       {"transformer.h.0.attn.c_attn.bias", {192}},
                                       {"transformer.h.0.attn.c_proj.weight", {64, 64}},
                                       {"transformer.h.1.attn.c_attn.weight", {64, 192}},
                                       {"transformer.h.1.attn.c_attn.bias", {192}},
                                       {"transformer.h.1.attn.c_proj.weight", {64, 64}},
                                   });
  CHECK(vertex(graph, "transformer/h.0/attn/logits").outputs[0] == Shape{2, 4, 16, 16});
  CHECK(vertex(graph, "transformer/h.0/mlp/c_fc").pointwise == 2);  // bias and GELU
}

TEST_CASE("build_llm_graph: gpt with dropout prices GPT-2's four sites and nothing else") {
  LlmShape shape = kTinyGpt;
  shape.dropout = true;
  const Graph with = built(LlmFamily::Gpt, shape), without = built(LlmFamily::Gpt, kTinyGpt);
  REQUIRE(with.vertices.size() == without.vertices.size());
  // embd_pdrop on the embeddings' sum; per block attn_pdrop on the attention
  // probabilities and resid_pdrop after attn.c_proj and mlp.c_proj.
  std::set<std::string> changed;
  for (size_t i = 0; i < with.vertices.size(); ++i) {
    CHECK(with.vertices[i].name == without.vertices[i].name);
    if (with.vertices[i].pointwise != without.vertices[i].pointwise) {
      CHECK(with.vertices[i].pointwise == without.vertices[i].pointwise + 1);
      changed.insert(with.vertices[i].name);
    }
  }
  CHECK(changed == std::set<std::string>{"transformer/embeddings", "transformer/h.0/attn/softmax",
                                         "transformer/h.0/attn/c_proj", "transformer/h.0/mlp/c_proj",
                                         "transformer/h.1/attn/softmax", "transformer/h.1/attn/c_proj",
                                         "transformer/h.1/mlp/c_proj"});
  CHECK(weights_of(with).parameters == weights_of(without).parameters);
  // Without the flag the file is the one it always was: no pointwise on a softmax.
  CHECK(!node_of(build_llm_graph(LlmFamily::Gpt, kTinyGpt, "gpt"), "transformer/h.0/attn/softmax").pointwise);
}

TEST_CASE("build_llm_graph: llama blocks, grouped-query attention and parameter count") {
  const Graph graph = built(LlmFamily::Llama, kTinyLlama);
  // Per block: input_layernorm, q/k/v_proj, rotary q and k, logits, softmax,
  // context, o_proj, residual, post_attention_layernorm, gate/up_proj, act,
  // down_proj, residual; around them embed_tokens, norm, lm_head, loss.
  CHECK(vertices_under(graph, "model/layers.0/") == 17);
  CHECK(vertices_under(graph, "model/layers.1/") == 17);
  CHECK(graph.vertices.size() == 2 * 17 + 4);

  const Weights w = weights_of(graph);
  // head dim 8, kv width 16: 2·6400 + 2·(128 + 8192 + 2048 + 18432) + 64
  CHECK(llama_parameters(kTinyLlama) == 70464);
  CHECK(w.parameters == 70464);
  std::set<std::string> correct = {"model.embed_tokens.weight", "model.norm.weight", "lm_head.weight"};
  for (const char* layer : {"0", "1"})
    for (const char* module : {"input_layernorm", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj",
                               "self_attn.o_proj", "post_attention_layernorm", "mlp.gate_proj", "mlp.up_proj",
                               "mlp.down_proj"})
      correct.insert(std::string("model.layers.") + layer + "." + module + ".weight");
  CHECK(names_of(w) == correct);  // Hugging Face LlamaForCausalLM's state dict
  for (const auto& [name, readers] : w.readers) CHECK(readers == 1);

  // 8 query heads in 2 groups of 4 (h, r); keys and values have the 2 heads only.
  CHECK(w.shapes.at("model.layers.0.self_attn.q_proj.weight") == Shape{2, 4, 8, 64});
  CHECK(w.shapes.at("model.layers.0.self_attn.k_proj.weight") == Shape{2, 8, 64});
  CHECK(w.shapes.at("model.layers.0.self_attn.o_proj.weight") == Shape{64, 2, 4, 8});
  // Hugging Face's Linear weights: q and o [64, 64], k and v [16, 64].
  CHECK(graph.checkpoint_shapes.at("model.layers.1.self_attn.q_proj.weight") == Shape{64, 64});
  CHECK(graph.checkpoint_shapes.at("model.layers.1.self_attn.k_proj.weight") == Shape{16, 64});
  CHECK(graph.checkpoint_shapes.at("model.layers.1.self_attn.v_proj.weight") == Shape{16, 64});
  CHECK(graph.checkpoint_shapes.at("model.layers.1.self_attn.o_proj.weight") == Shape{64, 64});
  CHECK(graph.checkpoint_shapes.size() == 8);
  CHECK(vertex(graph, "model/layers.0/self_attn/q_proj").outputs[0] == Shape{2, 2, 4, 16, 8});
  CHECK(vertex(graph, "model/layers.0/self_attn/v_proj").outputs[0] == Shape{2, 2, 16, 8});
  const Vertex& logits = vertex(graph, "model/layers.0/self_attn/logits");
  CHECK(logits.outputs[0] == Shape{2, 2, 4, 16, 16});
  // h is a batch letter of the scores (k is shared by the group), r a query-only letter.
  const VertexModel model = build_vertex_model(logits);
  CHECK(model.letters == "bhrlmk");
  CHECK(model.work.batch == std::vector<int>{0, 1});
  CHECK(model.work.m == std::vector<int>{2, 3});
  CHECK(model.work.n == std::vector<int>{4});
  CHECK(vertex(graph, "model/layers.0/self_attn/rotary_q").pointwise == 2);
  CHECK(vertex(graph, "model/layers.0/input_layernorm").kind == OpKind::RmsNorm);
}

TEST_CASE("build_llm_graph: the presets have their models' published parameter counts") {
  auto parameters = [](const std::string& preset) {
    const LlmPreset* p = find_llm_preset(preset);
    REQUIRE(p != nullptr);
    LlmShape shape = p->shape;
    shape.batch = 1;
    return weights_of(build_graph(build_llm_graph(p->family, shape, preset), preset)).parameters;
  };
  // GPT-2 small (12 layers, 768, 12 heads, 1024 positions): Hugging Face's gpt2 has 124,439,808.
  const LlmShape gpt2 = {12, 768, 12, 12, 3072, 1024, 50257, 1};
  CHECK(gpt_parameters(gpt2) == 124439808);
  CHECK(weights_of(built(LlmFamily::Gpt, gpt2)).parameters == 124439808);
  CHECK(parameters("gpt2-xl") == 1557611200);      // Hugging Face's gpt2-xl
  CHECK(parameters("llama2-7b") == 6738415616);    // Llama-2-7b-hf
  CHECK(parameters("llama2-70b") == 68976648192);  // Llama-2-70b-hf
  const int64_t gpt3 = parameters("gpt3-175b");    // "175.0B" in the GPT-3 paper
  CHECK(gpt3 == gpt_parameters(find_llm_preset("gpt3-175b")->shape));
  CHECK(gpt3 > 174500000000);
  CHECK(gpt3 < 175500000000);
  const int64_t gpt3_13b = parameters("gpt3-13b");  // "13.0B"
  CHECK(gpt3_13b > 12500000000);
  CHECK(gpt3_13b < 13500000000);
  CHECK(built(LlmFamily::Gpt, find_llm_preset("gpt3-175b")->shape).vertices.size() == 96 * 12 + 6);
  CHECK(built(LlmFamily::Llama, find_llm_preset("llama2-70b")->shape).vertices.size() == 80 * 17 + 4);
}

TEST_CASE("check_llm_shape: the field at fault, in the library's words") {
  auto refusal = [](LlmFamily family, LlmShape shape) -> std::pair<std::string, std::string> {
    try {
      check_llm_shape(family, shape);
    } catch (const OptionError& error) {
      return {error.words().option, error.what()};
    }
    return {"", ""};
  };
  LlmShape s = kTinyLlama;
  CHECK(refusal(LlmFamily::Llama, s).first.empty());
  s.ff = 0;
  CHECK(refusal(LlmFamily::Llama, s) ==
        std::pair<std::string, std::string>{"ff", "the MLP width: expected a positive number, got 0"});
  s = kTinyLlama;
  s.d_model = 60;
  CHECK(refusal(LlmFamily::Llama, s) ==
        std::pair<std::string, std::string>{"d_model", "the model width: 60 is not a multiple of the 8 heads"});
  s = kTinyLlama;
  s.kv_heads = 3;
  CHECK(refusal(LlmFamily::Llama, s) ==
        std::pair<std::string, std::string>{"kv_heads", "the key/value head count: 3 does not divide the 8 heads"});
  CHECK(refusal(LlmFamily::Gpt, kTinyLlama).first == "kv_heads");
  s = kTinyGpt;
  s.seq = int64_t{1} << 31;
  CHECK(refusal(LlmFamily::Gpt, s) ==
        std::pair<std::string, std::string>{"seq", "the sequence length: [2, 4, 2147483648, 2147483648] would make the "
                                                   "attention scores (batch x heads x seq x seq) more than 2^63 elements"});
}

TEST_CASE("pase models export gpt|llama: the file reads back as written, and solves") {
  struct Case {
    const char* family;
    const char* flags;
    LlmFamily kind;
    LlmShape shape;
  };
  for (const Case& c : {Case{"gpt", kTinyGptFlags, LlmFamily::Gpt, kTinyGpt},
                        Case{"llama", kTinyLlamaFlags, LlmFamily::Llama, kTinyLlama}}) {
    CAPTURE(c.family);
    const std::string path = test::write_temp_file(std::string(c.family) + ".json", "");
    test::CommandResult exported = test::run_pase(std::string("models export ") + c.family + " " + c.flags + " -o " + path);
    REQUIRE(exported.status == 0);
    GraphFileV1 graph = build_llm_graph(c.kind, c.shape, c.family);
    const std::string text = read_text_file(path);
    CHECK(text == write_graph_file(graph));
    // Read back, it is the same graph (a JSON object's tensors come back in name order).
    std::sort(graph.tensors.begin(), graph.tensors.end());
    CHECK(write_graph_file(parse_graph_file(text, path)) == write_graph_file(graph));
    test::CommandResult solved = test::run_pase("solve " + path + " --devices 4 --json");
    CHECK(solved.status == 0);
    CHECK(solved.output.find("\"graph\": \"" + std::string(c.family) + "\"") != std::string::npos);
    CHECK(solved.output.find("\"total_cost\": ") != std::string::npos);
  }
  SUBCASE("a preset by name, and a family with a preset and an override") {
    test::CommandResult by_name = test::run_pase("models export llama2-7b --batch 2");
    test::CommandResult by_flag = test::run_pase("models export llama --preset llama2-7b --batch 2");
    CHECK(by_name.status == 0);
    CHECK(by_name.output == by_flag.output);
    LlmShape shape = find_llm_preset("llama2-7b")->shape;
    shape.batch = 2;
    CHECK(by_name.output == write_graph_file(build_llm_graph(LlmFamily::Llama, shape, "llama2-7b")));
    test::CommandResult changed = test::run_pase("models export gpt --preset gpt2-xl --layers 2");
    shape = find_llm_preset("gpt2-xl")->shape;
    shape.layers = 2;
    CHECK(changed.output == write_graph_file(build_llm_graph(LlmFamily::Gpt, shape, "gpt")));  // no longer gpt2-xl
  }
}

TEST_CASE("pase models export gpt|llama: bad options are one line and exit status 2") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gpt --layers 2 --heads 4 --seq 16 --vocab 100", "--d-model: needed for a gpt model without --preset"},
      {"llama --layers 2 --d-model 64 --heads 8 --seq 16 --vocab 100", "--ff: needed for a llama model without --preset"},
      {"gpt --layers 0 --d-model 64 --heads 4 --seq 16 --vocab 100", "--layers: expected a positive number, got 0"},
      {"gpt --preset gpt2-xl --batch -1", "--batch: expected a positive number, got -1"},
      {"gpt --layers 2 --d-model 64 --heads 5 --seq 16 --vocab 100", "--d-model: 64 is not a multiple of the 5 heads"},
      {"llama --preset llama2-70b --kv-heads 3", "--kv-heads: 3 does not divide the 64 heads"},
      {"llama --layers 2 --d-model 64 --heads 8 --kv-heads 16 --ff 96 --seq 16 --vocab 100",
       "--kv-heads: 16 does not divide the 8 heads"},
      {"llama --preset llama2-7b --seq 3037000500", "--seq: [8, 32, 3037000500, 3037000500] would make the attention "
                                                    "scores (batch x heads x seq x seq) more than 2^63 elements"},
      {"gpt --preset gpt3-175b --kv-heads 8",
       "--kv-heads: gpt models have one key/value head per head (96), got 8; grouped-query attention is llama's"},
      {"gpt --preset llama2-70b", "--preset: 'llama2-70b' is a llama preset, not a gpt one"},
      {"llama --preset llama2-8b", "--preset: unknown preset 'llama2-8b' (did you mean 'llama2-7b'?); `pase models` lists them"},
      {"llama2-7b --preset llama2-70b", "--preset: 'llama2-7b' is a preset already"},
      {"transformer --layers 2", "--layers: only the gpt and llama families take it, not 'transformer'"},
      {"alexnet --preset gpt2-xl", "--preset: only the gpt and llama families have presets, not 'alexnet'"},
      {"gpt --preset gpt2-xl --layers 20000", "--layers: at most 10000 layers, got 20000"},
      {"llama --preset llama2-7b --dropout", "--dropout: llama models train without dropout (LLaMA-2 sets none); only gpt takes it"},
      {"alexnet --dropout", "--dropout: only the gpt family takes it, not 'alexnet'"},
  };
  for (const auto& [args, message] : cases) {
    CAPTURE_BOUND(args);
    test::CommandResult result = test::run_pase("models export " + args);
    CHECK(result.status == 2);
    CHECK(result.output.empty());
    CHECK(result.error == "error: " + message + "\n");
  }
}

TEST_CASE("pase solve --plan-only: the 96-layer gpt3-175b at p = 64 has dependent sets of 2") {
  const std::string path = test::write_temp_file("gpt3-175b.json", "");
  REQUIRE(test::run_pase("models export gpt3-175b -o " + path).status == 0);
  test::CommandResult plan = test::run_pase("solve " + path + " --devices 64 --plan-only --json");
  CHECK(plan.status == 0);
  CHECK(plan.output.find("\"max_dependent_set\": 2,") != std::string::npos);
}

TEST_CASE("pase models: lists the language-model families and presets") {
  test::CommandResult result = test::run_pase("models");
  CHECK(result.status == 0);
  for (const char* line :
       {"\n  gpt           pre-norm decoder (GPT-2/GPT-3)", "\n  llama         pre-norm decoder (LLaMA-2)",
        "\n  gpt3-175b     gpt   96 layers, d_model 12288, 96 heads, ff 49152, seq 2048, vocab 50257\n",
        "\n  gpt3-13b      gpt   40 layers, d_model 5120, 40 heads, ff 20480, seq 2048, vocab 50257\n",
        "\n  gpt2-xl       gpt   48 layers, d_model 1600, 25 heads, ff 6400, seq 1024, vocab 50257\n",
        "\n  llama2-7b     llama 32 layers, d_model 4096, 32 heads, ff 11008, seq 4096, vocab 32000\n",
        "\n  llama2-70b    llama 80 layers, d_model 8192, 64 heads (8 kv), ff 28672, seq 4096, vocab 32000\n"}) {
    CAPTURE(line);
    CHECK(result.output.find(line) != std::string::npos);
  }
}
