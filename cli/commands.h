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

}  // namespace pase
