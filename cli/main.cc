// pase: finds how to parallelize DNN training across devices (PaSE, IPDPS 2021).
// This file only parses the command line, dispatches, and turns errors into
// one-line messages and exit codes.
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <new>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/exit_status.h"
#include "cli/process_memory.h"
#include "base/error.h"
#include "base/closest_name.h"

namespace pase {
namespace {

std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  const std::string hint = closest_name(word, names);
  return hint.empty() ? "" : " (did you mean '" + hint + "'?)";
}

// The first argument that names no command, if it looks like a command
// (not an option): "unknown command 'slove' (did you mean 'solve'?)".
std::string unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  std::vector<std::string> names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) names.push_back(sub->get_name());
  const std::string word = argv[1];
  for (const std::string& name : names)
    if (name == word) return "";
  return "unknown command '" + word + "'" + did_you_mean(word, names) + " (pase --help lists them)";
}

// An option the parsed command does not have: "solve: unknown option
// '--thread' (did you mean '--threads'?)"; "" when the leftovers hold none.
std::string unknown_option(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands()) {
    std::vector<std::string> names;
    for (const CLI::Option* option : sub->get_options())
      for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
    for (const std::string& extra : sub->remaining()) {
      if (extra.size() < 2 || extra[0] != '-') continue;
      const std::string flag = extra.substr(0, extra.find('='));
      return sub->get_name() + ": unknown option '" + flag + "'" + did_you_mean(flag, names) + " (pase " + sub->get_name() +
             " --help lists them)";
    }
  }
  return "";
}

// The command the arguments name (`models export`: the innermost), and the
// first argument after it that looks like an option it does not have
// ("--device" for "--devices"): CLI11 would report a required option missing
// first, or leave a value behind ("The following arguments were not
// expected: 8 --device").
std::string misspelt_option(CLI::App& app, int argc, char** argv) {
  CLI::App* command = &app;
  std::string path;
  int at = 1;
  for (; at < argc; ++at) {
    CLI::App* sub = nullptr;
    for (CLI::App* candidate : command->get_subcommands([](const CLI::App*) { return true; }))
      if (candidate->get_name() == argv[at]) sub = candidate;
    if (sub == nullptr) break;
    command = sub;
    path += (path.empty() ? "" : " ") + sub->get_name();
  }
  if (command == &app) return "";
  std::vector<std::string> names = {"--help"};
  for (const CLI::Option* option : command->get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  for (; at < argc; ++at) {
    const std::string word = argv[at];
    if (word == "--") break;
    if (word.size() < 3 || word.compare(0, 2, "--") != 0) continue;
    const std::string flag = word.substr(0, word.find('='));
    if (std::find(names.begin(), names.end(), flag) != names.end()) continue;
    return path + ": unknown option '" + flag + "'" + did_you_mean(flag, names) + " (pase " + path +
           " --help lists them)";
  }
  return "";
}

// CLI11's "Could not convert: --devices = 8x" as a sentence.
std::string conversion_message(const std::string& what) {
  const std::string prefix = "Could not convert: ";
  const size_t equals = what.find(" = ");
  if (what.compare(0, prefix.size(), prefix) != 0 || equals == std::string::npos) return what;
  const std::string option = what.substr(prefix.size(), equals - prefix.size());
  const std::string value = what.substr(equals + 3);
  // A number that did not convert was a fraction given to a count ("8.5").
  char* end = nullptr;
  (void)std::strtod(value.c_str(), &end);
  const bool is_number = !value.empty() && end == value.c_str() + value.size();
  return option + ": expected " + (is_number ? "a whole number" : "a number") + ", got '" + value + "'";
}

}  // namespace
}  // namespace pase

int main(int argc, char** argv) {
  using namespace pase;
  prepare_process_heap();
  CLI::App app{"pase: optimal per-layer parallelization strategies for DNN training"};
  app.footer(
      "A graph is a pase-graph JSON file (docs/formats.md) or an ONNX model (MODEL.onnx, imported on the fly as\n"
      "`pase import` would; see docs/onnx.md). Exit status: 0 success, 1 bad input, 2 bad command line, 3 refused\n"
      "(too large, or nothing fits the memory cap), 4 internal error.\n");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("pase ") + PASE_VERSION);
  std::vector<CommandRunner> runners = {register_solve(app), register_models(app), register_evaluate(app),
                                       register_simulate(app),
                                       register_compare(app), register_batch(app), register_frontier(app), register_import(app),
                                       register_export(app), register_plan_check(app), register_explain(app),
                                       register_pipedream(app)};
  if (const std::string unknown = unknown_command(app, argc, argv); !unknown.empty()) {
    std::cerr << "error: " << unknown << "\n";
    return kExitUsage;
  }
  if (const std::string unknown = misspelt_option(app, argc, argv); !unknown.empty()) {
    std::cerr << "error: " << unknown << "\n";
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& error) {
    return app.exit(error);
  } catch (const CLI::CallForAllHelp& error) {
    return app.exit(error);
  } catch (const CLI::CallForVersion& error) {
    return app.exit(error);
  } catch (const CLI::ParseError& error) {
    // One line, like every other error; a misspelt option gets a suggestion.
    std::string message = dynamic_cast<const CLI::ExtrasError*>(&error) ? unknown_option(app) : "";
    if (message.empty()) message = dynamic_cast<const CLI::ConversionError*>(&error) ? conversion_message(error.what())
                                                                                     : error.what();
    std::cerr << "error: " << message << "\n";
    return kExitUsage;
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
