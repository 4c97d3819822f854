#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/onnx_loader.h"
#include "base/error.h"
#include "graphs/graph.h"
#include "graphs/graph_file.h"
#include "graphs/pad_vocabulary.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct ImportCliOptions {
  std::string model;
  std::string out;
  int64_t batch = 0;  // 0: as exported
  std::string loss = "softmax_xent";
  std::string lenient;  // empty: off; "true" (the bare flag) or "force"
  int64_t pad_vocab = 0;  // read only when given
  CLI::Option* pad_vocab_option = nullptr;
};

// --pad-vocab M: the head's classes and the token embedding's rows rounded up
// to a multiple of M, said on stderr with the layers it grew.
void pad_imported_vocabulary(const ImportCliOptions& o, GraphFileV1& graph) {
  if (o.pad_vocab_option->count() == 0) return;
  if (o.pad_vocab < 1) throw UsageError("--pad-vocab: expected a positive multiple, got " + std::to_string(o.pad_vocab));
  const PaddedVocabulary padded = pad_vocabulary(graph, o.pad_vocab, o.model);
  if (padded.from == padded.to) {
    std::cerr << "note: vocabulary " << padded.from << " is already a multiple of " << o.pad_vocab << "\n";
    return;
  }
  std::string layers;
  for (const std::string& name : padded.layers) layers += (layers.empty() ? "'" : ", '") + name + "'";
  std::cerr << "note: vocabulary " << padded.from << " padded to " << padded.to << " (a multiple of " << o.pad_vocab
            << ") in " << padded.layers.size() << (padded.layers.size() == 1 ? " layer: " : " layers: ") << layers << "\n";
  (void)build_graph(graph, o.model);  // the shapes still agree
}

}  // namespace

CommandRunner register_import(CLI::App& app) {
  auto o = std::make_shared<ImportCliOptions>();
  CLI::App* cmd = app.add_subcommand("import", "Convert an ONNX model into a pase-graph file");
  cmd->add_option("model", o->model, "ONNX model (.onnx)")->required();
  cmd->add_option("--out,-o", o->out, "Output graph file (default: stdout)");
  cmd->add_option("--batch,-b", o->batch, "Batch size: re-sizes dim 0 of the data inputs (default: as exported)");
  cmd->add_option("--loss", o->loss, "Loss appended to each output: softmax_xent (default) or none");
  cmd->add_flag("--lenient{true}", o->lenient,
                "Import unsupported ops as zero-cost pass-through vertices instead of refusing (each listed with its share of "
                "the model's estimated FLOP; above 5% refused unless --lenient=force)");
  o->pad_vocab_option = cmd->add_option(
      "--pad-vocab", o->pad_vocab,
      "Round a language model's vocabulary (its head and token embedding) up to a multiple of this, as Megatron-LM pads it");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    OnnxImportOptions options;
    if (o->batch != 0) options.batch = o->batch;
    options.loss = o->loss;
    set_lenient(options, o->lenient);
    OnnxImport imported;
    with_option_spellings({{"batch", "--batch"}, {"loss", "--loss"}, {"lenient", "--lenient"}, {"lenient_force", "--lenient=force"}, {"pad_vocab", "--pad-vocab"}}, [&] {
      imported = import_onnx_model(o->model, options);
      pad_imported_vocabulary(*o, imported.graph);
      return 0;
    });
    for (const std::string& note : imported.notes) std::cerr << "note: " << note << "\n";
    std::string text = write_graph_file(imported.graph);
    if (o->out.empty()) {
      std::cout << text;
    } else {
      write_text_file(o->out, text);
    }
    return 0;
  };
}

}  // namespace pase
