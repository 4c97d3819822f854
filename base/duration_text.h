#pragma once
// A duration as a person reads it, shared by the tables and the explanations.
#include <string>

namespace pase {

/// Three significant digits in s, ms, us or ns: "3.1 ms", "164 ns"; "0 ns" for zero.
[[nodiscard]] std::string format_duration(double seconds);

}  // namespace pase
