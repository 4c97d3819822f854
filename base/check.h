#pragma once
// Invariant checks that stay on in Release. A broken invariant is a bug in
// this program, not bad input: PASE_ASSERT throws std::logic_error (the CLI's
// "internal" exit status) with the condition, the place and the values that
// break it, so a report from a user carries what is needed to reproduce it.
//
//   PASE_ASSERT(index >= 0 && index < count, index, count);
//   -> (the CLI prints) error: internal: dp/dp.cc:212: index >= 0 && index < count failed (index = -1, count = 40)
//
// List at least one value: the values are what makes a report useful.
#include <sstream>
#include <stdexcept>
#include <string>

namespace pase::detail {

inline void append_values(std::ostringstream&, const char*) {}

template <typename First, typename... Rest>
void append_values(std::ostringstream& out, const char* names, const First& first, const Rest&... rest) {
  // `names` is the macro's stringified argument list: "a, b.size(), c"; cut at
  // the first comma outside parentheses.
  const char* end = names;
  int depth = 0;
  for (; *end && !(*end == ',' && depth == 0); ++end) {
    if (*end == '(' || *end == '[' || *end == '{') ++depth;
    if (*end == ')' || *end == ']' || *end == '}') --depth;
  }
  while (*names == ' ') ++names;
  out << std::string(names, end) << " = " << first;
  if constexpr (sizeof...(rest) > 0) {
    out << ", ";
    append_values(out, *end ? end + 1 : end, rest...);
  }
}

// Out of line and cold: the checks sit in loops the compiler should optimise
// as if they were not there.
template <typename... Values>
[[noreturn]] __attribute__((cold, noinline)) void assertion_failed(const char* file, int line, const char* condition, const char* names,
                                   const Values&... values) {
  std::ostringstream out;
  out << file << ":" << line << ": " << condition << " failed";
  out << " (";
  append_values(out, names, values...);
  out << ")";
  throw std::logic_error(out.str());
}

}  // namespace pase::detail

/// Checks an invariant in every build; on failure throws std::logic_error
/// naming the condition and printing each listed value as `name = value`.
#define PASE_ASSERT(condition, ...)                                                                           \
  do {                                                                                                        \
    if (!(condition)) ::pase::detail::assertion_failed(__FILE__, __LINE__, #condition, #__VA_ARGS__, __VA_ARGS__); \
  } while (false)
