#pragma once
// The process exit codes, translated from errors in one place (main).
namespace pase {

enum ExitStatus : int {
  kExitOk = 0,
  kExitInputError = 1,   ///< bad graph/strategy/option value
  kExitUsage = 2,        ///< bad command line (CLI11)
  kExitRefused = 3,      ///< too large: tables or configurations over a limit
  kExitInternal = 4,     ///< a bug: an invariant broke
};

}  // namespace pase
