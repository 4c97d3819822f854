#include <fstream>
#include <iostream>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "graphs/error.h"
#include "graphs/graph_file.h"
#include "graphs/zoo.h"

namespace pase {
namespace {

struct ModelsOptions {
  std::string name;
  int64_t batch = 0;  // 0: the paper's batch for that model
  std::string out;
};

}  // namespace

CommandRunner register_models(CLI::App& app) {
  auto options = std::make_shared<ModelsOptions>();
  CLI::App* models = app.add_subcommand("models", "List the built-in zoo graphs, or export one as a graph file");
  CLI::App* exporter = models->add_subcommand("export", "Write a zoo graph as a pase-graph file");
  exporter->add_option("name", options->name, "Model name (see `pase models`)")->required();
  exporter->add_option("--batch,-b", options->batch, "Batch size (default: the paper's, 128 for CNNs, 64 otherwise)");
  exporter->add_option("--out,-o", options->out, "Output file (default: stdout)");
  return [models, exporter, options]() -> int {
    if (!models->parsed()) return -1;
    if (!exporter->parsed()) {
      std::cout << "Built-in graphs (pase models export NAME --batch B):\n";
      for (const ZooEntry& entry : zoo_entries())
        std::cout << "  " << entry.name << std::string(14 - entry.name.size(), ' ') << "batch " << entry.default_batch
                  << "  " << entry.summary << "\n";
      return 0;
    }
    int64_t batch = options->batch;
    if (batch == 0)
      for (const ZooEntry& entry : zoo_entries())
        if (entry.name == options->name) batch = entry.default_batch;
    std::string text;
    with_option_spellings({{"batch", "--batch"}}, [&] {
      text = write_graph_file(build_zoo_graph(options->name, batch == 0 ? 1 : batch));
      return 0;
    });
    if (options->out.empty()) {
      std::cout << text;
    } else {
      write_text_file(options->out, text);
    }
    return 0;
  };
}

}  // namespace pase
