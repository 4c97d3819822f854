// pase: finds how to parallelize DNN training across devices (PaSE, IPDPS 2021).
// This file only parses the command line, dispatches, and turns errors into
// one-line messages and exit codes.
#include <iostream>
#include <new>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/process_memory.h"
#include "graphs/error.h"

int main(int argc, char** argv) {
  using namespace pase;
  prepare_process_heap();
  CLI::App app{"pase: optimal per-layer parallelization strategies for DNN training"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "pase 0.1.0");
  std::vector<CommandRunner> runners = {register_solve(app), register_models(app), register_evaluate(app),
                                       register_compare(app), register_batch(app), register_frontier(app), register_import(app),
                                       register_export(app), register_plan_check(app)};
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error) == 0 ? 0 : static_cast<int>(kExitUsage);  // --help is not an error
  }
  const int exit_status = run_reporting_errors([&] {
    for (const CommandRunner& run : runners) {
      int status = run();
      if (status >= 0) return status;
    }
    return static_cast<int>(kExitUsage);
  });
  return exit_status;
}
