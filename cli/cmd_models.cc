#include <algorithm>
#include <iostream>
#include <optional>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "base/error.h"
#include "graphs/graph_file.h"
#include "graphs/llm_zoo.h"
#include "graphs/zoo.h"
#include "base/text_file.h"
#include "base/closest_name.h"

namespace pase {
namespace {

// The language models' architecture options: LlmShape's field, the flag, and
// where CLI11 puts the value (read only when the flag was given).
struct ShapeFlag {
  const char* field;
  const char* flag;
  int64_t LlmShape::*member;
  const char* help;
  CLI::Option* option = nullptr;
  int64_t value = 0;
};

struct ModelsOptions {
  std::string name;
  int64_t batch = 0;  // read only when given; else the paper's batch, or kLlmDefaultBatch for a language model
  int64_t image = 0;  // 0: the paper's
  std::string out;
  std::string preset;
  bool dropout = false;
  int64_t pad_vocab = 0;  // read only when given: the vocabulary rounded up to a multiple of it
  CLI::Option* pad_vocab_option = nullptr;
  CLI::Option* batch_option = nullptr;
  CLI::Option* image_option = nullptr;
  CLI::Option* preset_option = nullptr;
  std::vector<ShapeFlag> shape_flags = {
      {"layers", "--layers", &LlmShape::layers, "gpt/llama: transformer blocks"},
      {"d_model", "--d-model", &LlmShape::d_model, "gpt/llama: model width"},
      {"heads", "--heads", &LlmShape::heads, "gpt/llama: attention (query) heads"},
      {"kv_heads", "--kv-heads", &LlmShape::kv_heads, "llama: key/value heads (default: --heads)"},
      {"ff", "--ff", &LlmShape::ff, "gpt/llama: MLP width (gpt default: 4 x --d-model)"},
      {"seq", "--seq", &LlmShape::seq, "gpt/llama: sequence length"},
      {"vocab", "--vocab", &LlmShape::vocab, "gpt/llama: vocabulary size"},
  };
};

std::string padded(const std::string& name, size_t width) {
  return name + std::string(name.size() < width ? width - name.size() : 1, ' ');
}

void list_models() {
  std::cout << "Built-in graphs (pase models export NAME --batch B):\n";
  for (const ZooEntry& entry : zoo_entries())
    std::cout << "  " << padded(entry.name, 14) << "batch " << entry.default_batch << "  " << entry.summary << "\n";
  std::cout << "\nLanguage models (pase models export gpt|llama --preset P, or --layers L --d-model D --heads H\n"
               "[--kv-heads K] --ff F --seq S --vocab V; options override a preset's values; --batch B, default "
            << kLlmDefaultBatch << "):\n"
            << "  " << padded("gpt", 14)
            << "pre-norm decoder (GPT-2/GPT-3): LayerNorm, fused QKV, GELU MLP, biases, learned positions, tied embedding\n"
            << "  " << padded("llama", 14)
            << "pre-norm decoder (LLaMA-2): RMSNorm, rotary q/k, grouped-query attention, SwiGLU MLP, no biases\n";
  std::cout << "Presets (also accepted as NAME):\n";
  for (const LlmPreset& p : llm_presets()) {
    const LlmShape& s = p.shape;
    std::cout << "  " << padded(p.name, 14) << padded(llm_family_name(p.family), 6) << s.layers << " layers, d_model "
              << s.d_model << ", " << s.heads << " heads";
    if (s.kv_heads != s.heads) std::cout << " (" << s.kv_heads << " kv)";
    std::cout << ", ff " << s.ff << ", seq " << s.seq << ", vocab " << s.vocab << "\n";
  }
}

// A name that is no built-in graph, family or preset is a command-line mistake (exit 2).
void check_model_name(const std::string& name) {
  std::vector<std::string> names;
  for (const ZooEntry& entry : zoo_entries()) names.push_back(entry.name);
  names.push_back(llm_family_name(LlmFamily::Gpt));
  names.push_back(llm_family_name(LlmFamily::Llama));
  for (const LlmPreset& preset : llm_presets()) names.push_back(preset.name);
  if (std::find(names.begin(), names.end(), name) != names.end()) return;
  const std::string hint = closest_name(name, names);
  throw UsageError("unknown model '" + name + "'" + (hint.empty() ? "" : " (did you mean '" + hint + "'?)") +
                   "; `pase models` lists them");
}

GraphFileV1 zoo_graph(const ModelsOptions& options) {
  for (const ShapeFlag& f : options.shape_flags)
    if (f.option->count() > 0)
      throw UsageError(std::string(f.flag) + ": only the gpt and llama families take it, not '" + options.name + "'");
  if (options.preset_option->count() > 0)
    throw UsageError("--preset: only the gpt and llama families have presets, not '" + options.name + "'");
  if (options.dropout) throw UsageError("--dropout: only the gpt family takes it, not '" + options.name + "'");
  if (options.pad_vocab_option->count() > 0)
    throw UsageError("--pad-vocab: only the gpt and llama families take it, not '" + options.name + "'");
  // Not given: the paper's batch (1 for an unknown name, which is then refused as such).
  int64_t batch = options.batch;
  if (options.batch_option->count() == 0) {
    batch = 1;
    for (const ZooEntry& entry : zoo_entries())
      if (entry.name == options.name) batch = entry.default_batch;
  }
  if (options.image_option->count() > 0) {
    if (options.image <= 0) throw UsageError("--image " + std::to_string(options.image) + ": expected a positive size");
    for (const ZooEntry& entry : zoo_entries())
      if (entry.name == options.name && entry.image == 0)
        throw UsageError("--image: only alexnet and resnet101 take it, not '" + options.name + "'");
  }
  GraphFileV1 graph;
  with_option_spellings({{"batch", "--batch"}, {"image", "--image"}}, [&] {
    graph = build_zoo_graph(options.name, batch, options.image);
    return 0;
  });
  return graph;
}

// --pad-vocab M: the vocabulary rounded up to a multiple of M, as Megatron-LM
// pads it (--make-vocab-size-divisible-by 128 times the tensor-parallel size),
// so that it splits as many ways as the other dimensions: GPT-2's 50257 is
// 29 x 1733, 50304 is 2^7 x 393. The padded rows are trained as the others.
void pad_vocabulary(const ModelsOptions& options, LlmShape& shape) {
  if (options.pad_vocab_option->count() == 0) return;
  if (options.pad_vocab < 1)
    throw UsageError("--pad-vocab: expected a positive multiple, got " + std::to_string(options.pad_vocab));
  const int64_t padded = (shape.vocab + options.pad_vocab - 1) / options.pad_vocab * options.pad_vocab;
  if (padded != shape.vocab)
    std::cerr << "note: vocabulary " << shape.vocab << " padded to " << padded << " (a multiple of "
              << options.pad_vocab << ")\n";
  shape.vocab = padded;
}

// A family (`gpt`) with a preset or every option, or a preset by name (`gpt3-175b`).
GraphFileV1 language_model(const ModelsOptions& options, LlmFamily family, const LlmPreset* preset) {
  const std::string family_name = llm_family_name(family);
  if (options.image_option->count() > 0)
    throw UsageError("--image: only alexnet and resnet101 take it, not '" + options.name + "'");
  if (options.preset_option->count() > 0) {
    if (preset != nullptr) throw UsageError("--preset: '" + options.name + "' is a preset already");
    preset = find_llm_preset(options.preset);
    if (preset == nullptr) {
      std::vector<std::string> names;
      for (const LlmPreset& p : llm_presets()) names.push_back(p.name);
      const std::string hint = closest_name(options.preset, names);
      throw UsageError("--preset: unknown preset '" + options.preset + "'" +
                       (hint.empty() ? "" : " (did you mean '" + hint + "'?)") + "; `pase models` lists them");
    }
    if (preset->family != family)
      throw UsageError("--preset: '" + preset->name + "' is a " + llm_family_name(preset->family) + " preset, not a " +
                       family_name + " one");
  }
  LlmShape shape;
  if (preset != nullptr) shape = preset->shape;
  shape.batch = kLlmDefaultBatch;
  bool overridden = false;
  for (const ShapeFlag& f : options.shape_flags)
    if (f.option->count() > 0) {
      shape.*f.member = f.value;
      overridden = true;
    }
  if (options.batch_option->count() > 0) shape.batch = options.batch;
  shape.dropout = options.dropout;
  const auto given = [&](const char* field) {
    for (const ShapeFlag& f : options.shape_flags)
      if (std::string(f.field) == field) return f.option->count() > 0;
    return false;
  };
  // gpt has one key/value head per head whatever --heads says; so has llama unless told.
  if (!given("kv_heads") && (family == LlmFamily::Gpt || preset == nullptr)) shape.kv_heads = shape.heads;
  if (!given("ff") && family == LlmFamily::Gpt && preset == nullptr) shape.ff = 4 * shape.d_model;
  if (preset == nullptr)
    for (const ShapeFlag& f : options.shape_flags)
      if (shape.*f.member == 0 && f.option->count() == 0)
        throw UsageError(std::string(f.flag) + ": needed for a " + family_name + " model without --preset");
  pad_vocabulary(options, shape);
  const std::string name = preset != nullptr && !overridden ? preset->name : family_name;
  try {
    return build_llm_graph(family, shape, name);
  } catch (const OptionError& error) {
    const OptionWords& words = error.words();
    for (const ShapeFlag& f : options.shape_flags)
      if (words.option == f.field) throw UsageError(words.with(f.flag));
    if (words.option == "dropout") throw UsageError(words.with("--dropout"));
    throw UsageError(words.with(words.option == "batch" ? "--batch" : words.name));
  }
}

}  // namespace

CommandRunner register_models(CLI::App& app) {
  auto options = std::make_shared<ModelsOptions>();
  CLI::App* models = app.add_subcommand("models", "List the built-in graphs, or export one as a graph file");
  CLI::App* exporter = models->add_subcommand("export", "Write a built-in graph as a pase-graph file");
  exporter->add_option("name", options->name, "Model, language-model family (gpt, llama) or preset (see `pase models`)")
      ->required();
  options->batch_option = exporter->add_option(
      "--batch,-b", options->batch, "Batch size (default: the paper's, 128 for CNNs, 64 otherwise; language models 8)");
  options->image_option = exporter->add_option("--image", options->image,
                                               "alexnet/resnet101: image height and width (default: the paper's, 227)");
  exporter->add_option("--out,-o", options->out, "Output file (default: stdout)");
  options->preset_option = exporter->add_option("--preset", options->preset, "gpt/llama: start from a preset");
  for (ShapeFlag& f : options->shape_flags) f.option = exporter->add_option(f.flag, f.value, f.help);
  options->pad_vocab_option = exporter->add_option(
      "--pad-vocab", options->pad_vocab,
      "gpt/llama: round the vocabulary up to a multiple of this, as Megatron-LM pads it (128 x tensor parallel)");
  exporter->add_flag("--dropout", options->dropout,
                     "gpt: price the dropout GPT-2 and BERT train with (embeddings, attention probabilities, "
                     "attention and MLP outputs)");
  return [models, exporter, options]() -> int {
    if (!models->parsed()) return -1;
    if (!exporter->parsed()) {
      list_models();
      return 0;
    }
    check_model_name(options->name);
    const LlmPreset* preset = find_llm_preset(options->name);
    std::optional<LlmFamily> family = find_llm_family(options->name);
    if (preset != nullptr) family = preset->family;
    const GraphFileV1 graph = family ? language_model(*options, *family, preset) : zoo_graph(*options);
    const std::string text = write_graph_file(graph);
    if (options->out.empty()) {
      std::cout << text;
    } else {
      write_text_file(options->out, text);
    }
    return 0;
  };
}

}  // namespace pase
