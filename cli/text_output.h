#pragma once
// Text output shared by the subcommands that write tables (evaluate, compare, batch).
#include <string>

namespace pase {

/// `text` as one CSV field: quoted (quotes doubled) when it holds a comma, quote or newline.
[[nodiscard]] std::string csv_field(const std::string& text);

/// `value` formatted with a printf format for one double ("%.6f").
[[nodiscard]] std::string format_number(const char* format, double value);

}  // namespace pase
