#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/onnx_loader.h"
#include "base/error.h"
#include "graphs/graph_file.h"
#include "base/text_file.h"

namespace pase {
namespace {

struct ImportCliOptions {
  std::string model;
  std::string out;
  int64_t batch = 0;  // 0: as exported
  std::string loss = "softmax_xent";
  std::string lenient;  // empty: off; "true" (the bare flag) or "force"
};

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
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    OnnxImportOptions options;
    if (o->batch != 0) options.batch = o->batch;
    options.loss = o->loss;
    set_lenient(options, o->lenient);
    OnnxImport imported;
    with_option_spellings({{"batch", "--batch"}, {"loss", "--loss"}, {"lenient", "--lenient"}, {"lenient_force", "--lenient=force"}}, [&] {
      imported = import_onnx_model(o->model, options);
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
