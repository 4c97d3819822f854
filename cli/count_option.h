#pragma once
// Options that take a count of steps or bytes: written as digits, with a
// decimal exponent ("2e12", as the help texts write their defaults), or for
// bytes also as a size ("8GiB").
#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "base/byte_size.h"

namespace pase {

/// Registers `name` on `command`, storing into `target`; a malformed value is
/// a command-line error (exit 2) naming the option.
inline CLI::Option* add_count_option(CLI::App* command, const std::string& name, uint64_t& target, const std::string& help,
                                     bool bytes = false) {
  return command->add_option_function<std::string>(
      name,
      [&target, name, bytes](const std::string& text) {
        std::optional<uint64_t> value = parse_count(text);
        if (!value && bytes) value = parse_byte_size(text);
        if (!value)
          throw CLI::ValidationError(name, std::string("expected a whole number such as 2000000 or 2e12") +
                                               (bytes ? " or a size such as 8GiB" : "") + ", got '" + text + "'");
        target = *value;
      },
      help);
}

}  // namespace pase
