#pragma once
// Text output shared by the subcommands that write tables (solve, evaluate, compare, batch, frontier).
#include <string>

namespace pase {

/// `text` as one CSV field: quoted (quotes doubled) when it holds a comma, quote or newline.
[[nodiscard]] std::string csv_field(const std::string& text);

/// `value` formatted with a printf format for one double ("%.6f").
[[nodiscard]] std::string format_number(const char* format, double value);

/// A total cost as tables print it: FLOP are whole numbers worth printing in
/// full ("97098296512"); other units (seconds) get nine significant digits.
[[nodiscard]] std::string format_total(double cost, const std::string& unit);

}  // namespace pase
