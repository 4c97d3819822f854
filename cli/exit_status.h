#pragma once
// The process exit codes, and the one place errors become a line on stderr
// and a code (used by the main of every executable).
#include <functional>
#include <iostream>
#include <map>
#include <new>
#include <stdexcept>
#include <string>

#include "base/error.h"

namespace pase {

enum ExitStatus : int {
  kExitOk = 0,
  kExitInputError = 1,   ///< bad graph/strategy/option value
  kExitUsage = 2,        ///< bad command line (CLI11)
  kExitRefused = 3,      ///< too large: tables or configurations over a limit, or no strategy fits the memory cap
  kExitInternal = 4,     ///< a bug: an invariant broke
};

/// A command-line value CLI11 cannot check itself (a malformed size or mesh,
/// options that contradict each other or describe no model): one line,
/// exit status kExitUsage like CLI11's own parse errors.
class UsageError : public InputError {
 public:
  using InputError::InputError;
};

/// How a command spells the library options it sets: options field -> flag.
using OptionSpellings = std::map<std::string, std::string>;

/// Runs `body`; an error about a library option that the command sets is
/// reworded with the command's spelling of it, e.g. "--max-table-bytes" for
/// the DP's "max_table_bytes" (options it does not set keep the library's words).
inline int with_option_spellings(const OptionSpellings& spellings, const std::function<int()>& body) {
  auto spelled = [&](const OptionWords& words) {
    auto it = spellings.find(words.option);
    return words.with(it == spellings.end() ? words.name : it->second);
  };
  try {
    return body();
  } catch (const OptionError& error) {
    throw InputError(spelled(error.words()));
  } catch (const LimitError& error) {
    throw ResourceError(spelled(error.words()));
  }
}

/// Runs `body`; bad input, refusals and bugs become "error: ..." on stderr and their exit code.
inline int run_reporting_errors(const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& error) {
    std::cerr << "error: " << error.what() << "\n";
    return kExitUsage;
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
