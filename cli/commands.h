#pragma once
// Each subcommand registers its options on the app and returns a runner that
// does the work once parsing succeeded. Runners print; libraries never do.
#include <functional>

#include <CLI/CLI.hpp>

namespace pase {

using CommandRunner = std::function<int()>;

/// `pase solve GRAPH --devices N ...`
CommandRunner register_solve(CLI::App& app);
/// `pase models` and `pase models export NAME --batch B`
CommandRunner register_models(CLI::App& app);
/// `pase evaluate GRAPH (--strategy FILE | --baseline NAME) [--devices N]`
CommandRunner register_evaluate(CLI::App& app);
/// `pase simulate GRAPH (--strategy FILE | --baseline NAME) [--trace F] [--svg F]`
CommandRunner register_simulate(CLI::App& app);
/// `pase compare GRAPH --devices 4,8,16 [--csv F] [--json F] [--svg F]`
CommandRunner register_compare(CLI::App& app);
/// `pase batch DIR_OR_FILES... --devices 8,32 [--summary F] [--expect F]`
CommandRunner register_batch(CLI::App& app);
/// `pase frontier GRAPH --devices N [--csv F] [--json F] [--svg F]`
CommandRunner register_frontier(CLI::App& app);
/// `pase import MODEL.onnx [-o graph.json] [--batch B] [--loss L] [--lenient]`
CommandRunner register_import(CLI::App& app);
/// `pase export PLAN --format jax|dtensor|hlo [-o FILE]`
CommandRunner register_export(CLI::App& app);
/// `pase plan-check PLAN [--seed S]`
CommandRunner register_plan_check(CLI::App& app);
/// `pase explain GRAPH --devices N (--layer NAME | --all) [--strategy FILE] [--top K] [--json]`
CommandRunner register_explain(CLI::App& app);
/// `pase pipedream PROFILE --machines N [--bandwidth GBps] [--activation-compression-ratio R] [--json]`
CommandRunner register_pipedream(CLI::App& app);

}  // namespace pase
