#include "graphs/llm_zoo.h"

#include <utility>

#include "base/error.h"
#include "base/shape.h"
#include "graphs/zoo_builder.h"

namespace pase {
namespace {

// How the option messages name each field (the CLI puts its flag in place).
struct FieldWords {
  const char* option;
  const char* name;
};

[[noreturn]] void refuse(const FieldWords& field, const std::string& what) {
  throw OptionError({field.option, field.name, "", ": " + what});
}

constexpr FieldWords kLayers{"layers", "the layer count"};
constexpr FieldWords kDModel{"d_model", "the model width"};
constexpr FieldWords kHeads{"heads", "the head count"};
constexpr FieldWords kKvHeads{"kv_heads", "the key/value head count"};
constexpr FieldWords kFf{"ff", "the MLP width"};
constexpr FieldWords kSeq{"seq", "the sequence length"};
constexpr FieldWords kVocab{"vocab", "the vocabulary size"};
constexpr FieldWords kBatch{"batch", "the batch size"};
constexpr FieldWords kDropout{"dropout", "dropout"};

// A block's vertices are a few dozen nodes each; a cap keeps a typo from
// building a graph that exhausts memory before anything is solved.
constexpr int64_t kMaxLayers = 10000;

// The attention scores (b, heads, s, s) and the logits (b, s, vocab) are the
// largest tensors the builders make; the others are no larger than one of
// these or than (b, s, ff).
void check_sizes(const LlmShape& s) {
  struct Product {
    Shape shape;
    FieldWords field;
    const char* what;
  };
  const Product products[] = {
      {{s.batch, s.heads, s.seq, s.seq}, kSeq, "the attention scores (batch x heads x seq x seq)"},
      {{s.batch, s.seq, s.vocab}, kVocab, "the logits (batch x seq x vocab)"},
      {{s.batch, s.seq, s.ff}, kFf, "the MLP activations (batch x seq x ff)"},
      {{s.vocab, s.d_model}, kVocab, "the embedding table (vocab x d_model)"},
      {{s.d_model, s.ff}, kFf, "the MLP weights (d_model x ff)"},
  };
  for (const Product& p : products)
    if (!checked_product(p.shape))
      refuse(p.field, shape_to_string(p.shape) + " would make " + p.what + " more than 2^63 elements");
}

// Names a module path "transformer/h.0/attn" and its weights "transformer.h.0.attn.c_attn.weight".
std::string block_path(const std::string& stack, int64_t layer) { return stack + "." + std::to_string(layer); }

NodeV1 with_pointwise_weights(NodeV1 node, std::vector<PointwiseWeightV1> weights) {
  node.pointwise_weights = std::move(weights);
  return node;
}

// GPT-2 / GPT-3: x + attn(ln_1(x)), then x + mlp(ln_2(x)). Hugging Face's
// GPT-2 stores its projections as Conv1D weights [in, out]; the fused
// c_attn's output axis is (q|k|v, head, head_dim) row-major, so its weight is
// declared [d, 3, heads, head_dim] and its bias [3, heads, head_dim]: the same
// elements as [d, 3d] and [3d] with the head letters exposed to the einsum.
// The graph names the checkpoint's shapes (`checkpoint_shapes`).
GraphFileV1 gpt(const LlmShape& s, const std::string& name) {
  const int64_t d = s.d_model, h = s.heads, hd = s.d_model / s.heads;
  ZooBuilder z(name, 1);
  const std::string ids = z.tensor("input_ids", {s.batch, s.seq});
  const std::string positions = z.tensor("position_ids", {s.batch, s.seq});
  auto layer_norm = [&](const std::string& path, const std::string& x) {
    return z.add(with_pointwise_weights(ZooBuilder::node(path, "norm", {x}),
                                        {{parameter_name(path, "weight"), {d}, std::nullopt},
                                         {parameter_name(path, "bias"), {d}, std::nullopt}}));
  };
  // An einsum against a weight tensor with a bias on its output (pw counts the bias and `activations`).
  auto projection = [&](const std::string& path, const std::string& equation, const std::string& x, Shape weight,
                        Shape bias, int64_t activations) {
    const std::string w = z.parameter(parameter_name(path, "weight"), std::move(weight));
    NodeV1 n = ZooBuilder::node(path, "einsum", {x, w});
    n.equation = equation;
    n.pointwise = 1 + activations;
    n.pointwise_weights = std::vector<PointwiseWeightV1>{{parameter_name(path, "bias"), std::move(bias), std::nullopt}};
    return z.add(std::move(n));
  };
  auto embedding = [&](const std::string& path, const std::string& input, int64_t rows) {
    NodeV1 n = ZooBuilder::owning_node(path, "embedding", {input});
    n.vocab = rows;
    n.dim = d;
    return z.add(std::move(n));
  };

  // Dropout, where asked, at GPT-2's sites (embd_pdrop, attn_pdrop, and
  // resid_pdrop after each block's two projections): one pointwise op each.
  const int64_t dropout = s.dropout ? 1 : 0;
  std::string x = z.elementwise("transformer/embeddings",
                                {embedding("transformer/wte", ids, s.vocab), embedding("transformer/wpe", positions, s.seq)},
                                dropout);
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "transformer/" + block_path("h", l);
    std::string a = layer_norm(p + "/ln_1", x);
    const std::string qkv = projection(p + "/attn/c_attn", "ble,eshk->blshk", a, {d, 3, h, hd}, {3, h, hd}, 0);
    z.checkpoint_shape(parameter_name(p + "/attn/c_attn", "weight"), {d, 3 * d});
    z.checkpoint_shape(parameter_name(p + "/attn/c_attn", "bias"), {3 * d});
    NodeV1 unstack = ZooBuilder::node(p + "/attn/split", "unstack", {qkv});
    unstack.axis = 2;
    const std::string split = z.add(std::move(unstack));
    const std::string logits = z.einsum(p + "/attn/logits", "blhk,bmhk->bhlm", {split + ":0", split + ":1"});
    NodeV1 softmax = ZooBuilder::node(p + "/attn/softmax", "softmax", {logits});
    softmax.axis = 3;
    if (dropout > 0) softmax.pointwise = dropout;
    const std::string weights = z.add(std::move(softmax));
    const std::string context = z.einsum(p + "/attn/context", "bhlm,bmhk->blhk", {weights, split + ":2"});
    a = projection(p + "/attn/c_proj", "blhk,hke->ble", context, {h, hd, d}, {d}, dropout);
    z.checkpoint_shape(parameter_name(p + "/attn/c_proj", "weight"), {d, d});
    x = z.elementwise(p + "/attn/residual", {x, a});
    std::string m = layer_norm(p + "/ln_2", x);
    m = projection(p + "/mlp/c_fc", "ble,ef->blf", m, {d, s.ff}, {s.ff}, /*activations=*/1);  // GELU
    m = projection(p + "/mlp/c_proj", "blf,fe->ble", m, {s.ff, d}, {d}, dropout);
    x = z.elementwise(p + "/mlp/residual", {x, m});
  }
  x = layer_norm("transformer/ln_f", x);
  // Tied: the output projection reads the token table (fc's [units, in] is the table's [vocab, d]).
  NodeV1 head = ZooBuilder::node("lm_head", "fc", {x});
  head.units = s.vocab;
  head.weights = std::vector<std::string>{"transformer.wte.weight"};
  x = z.add(std::move(head));
  z.add(ZooBuilder::node("loss", "softmax_xent", {x}));
  return z.finish();
}

// LLaMA-2: x + attn(rmsnorm(x)), then x + mlp(rmsnorm(x)). Hugging Face's
// Linear weights are [out, in]. Query head j uses key/value head j / g, g =
// heads / kv_heads (repeat_kv), so q_proj's [heads·hd, d] is declared
// [kv_heads, g, hd, d] and o_proj's [d, heads·hd] as [d, kv_heads, g, hd]:
// letter h is the key/value head, r the query head within its group. The
// graph names the checkpoint's shapes (`checkpoint_shapes`).
GraphFileV1 llama(const LlmShape& s, const std::string& name) {
  const int64_t d = s.d_model, kv = s.kv_heads, g = s.heads / s.kv_heads, hd = s.d_model / s.heads;
  ZooBuilder z(name, 1);
  const std::string ids = z.tensor("input_ids", {s.batch, s.seq});
  auto rms_norm = [&](const std::string& path, const std::string& x) {
    return z.add(with_pointwise_weights(ZooBuilder::node(path, "rmsnorm", {x}),
                                        {{parameter_name(path, "weight"), {d}, std::nullopt}}));
  };
  auto projection = [&](const std::string& path, const std::string& equation, const std::string& x, Shape weight,
                        int64_t activations = 0) {
    const std::string w = z.parameter(parameter_name(path, "weight"), std::move(weight));
    return z.einsum(path, equation, {x, w}, activations);
  };

  NodeV1 embed = ZooBuilder::owning_node("model/embed_tokens", "embedding", {ids});
  embed.vocab = s.vocab;
  embed.dim = d;
  std::string x = z.add(std::move(embed));
  for (int64_t l = 0; l < s.layers; ++l) {
    const std::string p = "model/" + block_path("layers", l);
    const std::string a = rms_norm(p + "/input_layernorm", x);
    std::string q = projection(p + "/self_attn/q_proj", "ble,hrke->bhrlk", a, {kv, g, hd, d});
    std::string k = projection(p + "/self_attn/k_proj", "ble,hke->bhlk", a, {kv, hd, d});
    const std::string v = projection(p + "/self_attn/v_proj", "ble,hke->bhlk", a, {kv, hd, d});
    // Rotary: x·cos + rotate_half(x)·sin, 3 operations per element (the rotation only moves data).
    q = z.elementwise(p + "/self_attn/rotary_q", {q}, 2);
    k = z.elementwise(p + "/self_attn/rotary_k", {k}, 2);
    // Key/value head h serves the g query heads (h, r): h is a batch letter of both
    // attention einsums, r a letter of the queries only, so k and v are read once per h.
    const std::string logits = z.einsum(p + "/self_attn/logits", "bhrlk,bhmk->bhrlm", {q, k});
    NodeV1 softmax = ZooBuilder::node(p + "/self_attn/softmax", "softmax", {logits});
    softmax.axis = 4;
    const std::string weights = z.add(std::move(softmax));
    const std::string context = z.einsum(p + "/self_attn/context", "bhrlm,bhmk->bhrlk", {weights, v});
    const std::string o = projection(p + "/self_attn/o_proj", "bhrlk,ehrk->ble", context, {d, kv, g, hd});
    for (const char* module : {"q_proj", "k_proj", "v_proj"}) {
      const int64_t rows = module[0] == 'q' ? s.heads * hd : kv * hd;
      z.checkpoint_shape(parameter_name(p + "/self_attn/" + module, "weight"), {rows, d});
    }
    z.checkpoint_shape(parameter_name(p + "/self_attn/o_proj", "weight"), {d, s.heads * hd});
    x = z.elementwise(p + "/self_attn/residual", {x, o});
    const std::string m = rms_norm(p + "/post_attention_layernorm", x);
    const std::string gate = projection(p + "/mlp/gate_proj", "ble,fe->blf", m, {s.ff, d}, /*activations=*/1);  // SiLU
    const std::string up = projection(p + "/mlp/up_proj", "ble,fe->blf", m, {s.ff, d});
    const std::string product = z.elementwise(p + "/mlp/act", {gate, up});
    const std::string down = projection(p + "/mlp/down_proj", "blf,ef->ble", product, {d, s.ff});
    x = z.elementwise(p + "/mlp/residual", {x, down});
  }
  x = rms_norm("model/norm", x);
  x = z.fc("lm_head", x, s.vocab);
  z.add(ZooBuilder::node("loss", "softmax_xent", {x}));
  return z.finish();
}

}  // namespace

bool LlmShape::operator==(const LlmShape& o) const {
  return layers == o.layers && d_model == o.d_model && heads == o.heads && kv_heads == o.kv_heads && ff == o.ff &&
         seq == o.seq && vocab == o.vocab && batch == o.batch && dropout == o.dropout;
}

const std::vector<LlmPreset>& llm_presets() {
  const int64_t b = kLlmDefaultBatch;
  static const std::vector<LlmPreset> presets = {
      {"gpt3-175b", LlmFamily::Gpt, {96, 12288, 96, 96, 49152, 2048, 50257, b},
       "Brown et al. 2020, Language Models are Few-Shot Learners, Table 2.1; ff = 4 d_model (Sec. 2.1)"},
      {"gpt3-13b", LlmFamily::Gpt, {40, 5120, 40, 40, 20480, 2048, 50257, b},
       "Brown et al. 2020, Table 2.1 (40 heads of 128: d_model 5120, not the table's 5140)"},
      {"gpt2-xl", LlmFamily::Gpt, {48, 1600, 25, 25, 6400, 1024, 50257, b},
       "Radford et al. 2019, Table 2; Hugging Face config gpt2-xl (n_head 25, n_positions 1024)"},
      {"llama2-7b", LlmFamily::Llama, {32, 4096, 32, 32, 11008, 4096, 32000, b},
       "Touvron et al. 2023, Llama 2, Table 1; Hugging Face config Llama-2-7b-hf"},
      {"llama2-70b", LlmFamily::Llama, {80, 8192, 64, 8, 28672, 4096, 32000, b},
       "Touvron et al. 2023, Llama 2, Table 1 (GQA); Hugging Face config Llama-2-70b-hf"},
  };
  return presets;
}

std::string llm_family_name(LlmFamily family) { return family == LlmFamily::Gpt ? "gpt" : "llama"; }

std::optional<LlmFamily> find_llm_family(const std::string& name) {
  if (name == "gpt") return LlmFamily::Gpt;
  if (name == "llama") return LlmFamily::Llama;
  return std::nullopt;
}

const LlmPreset* find_llm_preset(const std::string& name) {
  for (const LlmPreset& preset : llm_presets())
    if (preset.name == name) return &preset;
  return nullptr;
}

void check_llm_shape(LlmFamily family, const LlmShape& s) {
  const std::pair<FieldWords, int64_t> fields[] = {{kLayers, s.layers}, {kDModel, s.d_model}, {kHeads, s.heads},
                                                   {kKvHeads, s.kv_heads}, {kFf, s.ff}, {kSeq, s.seq},
                                                   {kVocab, s.vocab}, {kBatch, s.batch}};
  for (const auto& [field, value] : fields)
    if (value <= 0) refuse(field, "expected a positive number, got " + std::to_string(value));
  if (s.layers > kMaxLayers)
    refuse(kLayers, "at most " + std::to_string(kMaxLayers) + " layers, got " + std::to_string(s.layers));
  if (s.d_model % s.heads != 0)
    refuse(kDModel, std::to_string(s.d_model) + " is not a multiple of the " + std::to_string(s.heads) + " heads");
  if (family == LlmFamily::Gpt && s.kv_heads != s.heads)
    refuse(kKvHeads, "gpt models have one key/value head per head (" + std::to_string(s.heads) + "), got " +
                         std::to_string(s.kv_heads) + "; grouped-query attention is llama's");
  if (s.heads % s.kv_heads != 0)
    refuse(kKvHeads, std::to_string(s.kv_heads) + " does not divide the " + std::to_string(s.heads) + " heads");
  if (family == LlmFamily::Llama && s.dropout)
    refuse(kDropout, "llama models train without dropout (LLaMA-2 sets none); only gpt takes it");
  check_sizes(s);
}

GraphFileV1 build_llm_graph(LlmFamily family, const LlmShape& shape, const std::string& name) {
  check_llm_shape(family, shape);
  return family == LlmFamily::Gpt ? gpt(shape, name) : llama(shape, name);
}

}  // namespace pase
