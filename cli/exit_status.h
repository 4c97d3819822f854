#pragma once
// The process exit codes, and the one place errors become a line on stderr
// and a code (used by the main of every executable).
#include <functional>
#include <iostream>
#include <new>
#include <stdexcept>

#include "graphs/error.h"

namespace pase {

enum ExitStatus : int {
  kExitOk = 0,
  kExitInputError = 1,   ///< bad graph/strategy/option value
  kExitUsage = 2,        ///< bad command line (CLI11)
  kExitRefused = 3,      ///< too large: tables or configurations over a limit
  kExitInternal = 4,     ///< a bug: an invariant broke
};

/// Runs `body`; bad input, refusals and bugs become "error: ..." on stderr and their exit code.
inline int run_reporting_errors(const std::function<int()>& body) {
  try {
    return body();
  } catch (const InputError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return kExitInputError;
  } catch (const ResourceError& error) {
    std::cerr << "error: refused: " << error.what() << "\n";
    return kExitRefused;
  } catch (const std::bad_alloc&) {
    std::cerr << "error: refused: out of memory\n";
    return kExitRefused;
  } catch (const std::exception& error) {
    std::cerr << "error: internal: " << error.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace pase
