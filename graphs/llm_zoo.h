#pragma once
// Decoder-only language models built from the Transformer zoo's ops (docs/zoo.md):
// the `gpt` family (pre-norm LayerNorm blocks, fused QKV, GELU MLP, biases,
// learned positions, tied embedding; GPT-2/GPT-3) and the `llama` family
// (RMSNorm, rotary q/k, grouped-query attention, SwiGLU MLP, no biases;
// LLaMA-2). Weights carry the Hugging Face names of the same model
// ("transformer.h.0.attn.c_attn.weight", "model.layers.0.self_attn.q_proj.weight").
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "graphs/graph_file.h"

namespace pase {

enum class LlmFamily { Gpt, Llama };

/// The hyperparameters of one model; every field must be set (positive).
struct LlmShape {
  int64_t layers = 0;
  int64_t d_model = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;  ///< key/value heads; equal to heads for gpt
  int64_t ff = 0;        ///< the MLP's hidden width
  int64_t seq = 0;       ///< tokens per sequence (gpt: also the position table's rows)
  int64_t vocab = 0;
  int64_t batch = 0;     ///< sequences per step
  /// gpt: price the dropout GPT-2 and BERT train with, one pointwise op at each
  /// site (embeddings, attention probabilities, attention and MLP outputs)
  bool dropout = false;
  bool operator==(const LlmShape& other) const;
};

/// A named model with its published hyperparameters.
struct LlmPreset {
  std::string name;  ///< "gpt3-175b"
  LlmFamily family;
  LlmShape shape;
  std::string source;  ///< where the hyperparameters come from
};

/// The batch a preset and a family take unless told otherwise.
inline constexpr int64_t kLlmDefaultBatch = 8;

/// gpt3-175b, gpt3-13b, gpt2-xl, llama2-7b, llama2-70b.
[[nodiscard]] const std::vector<LlmPreset>& llm_presets();

/// "gpt" or "llama".
[[nodiscard]] std::string llm_family_name(LlmFamily family);

/// The family called `name`, or nullopt.
[[nodiscard]] std::optional<LlmFamily> find_llm_family(const std::string& name);

/// The preset called `name`, or nullptr.
[[nodiscard]] const LlmPreset* find_llm_preset(const std::string& name);

/// Refuses a shape that is no model of the family: an OptionError whose
/// option is the LlmShape field at fault ("d_model", "kv_heads", ...).
void check_llm_shape(LlmFamily family, const LlmShape& shape);

/// The model's graph, named `name`; checks the shape first.
[[nodiscard]] GraphFileV1 build_llm_graph(LlmFamily family, const LlmShape& shape, const std::string& name);

}  // namespace pase
