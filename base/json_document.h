#pragma once
// Parsing a JSON document with errors that point into the file.
#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

namespace pase {

/// Deepest nesting of arrays and objects a document may have.
inline constexpr size_t kMaxJsonDepth = 256;

/// Parses `text`; malformed JSON is an InputError "SOURCE: malformed JSON at line L, column C: reason",
/// nesting deeper than kMaxJsonDepth or a number beyond a double "SOURCE: JSON at line L, column C: reason".
[[nodiscard]] nlohmann::json parse_json_document(const std::string& text, const std::string& source);

}  // namespace pase
