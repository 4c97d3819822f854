#pragma once
// Parsing a JSON document with errors that point into the file.
#include <string>

#include <nlohmann/json.hpp>

namespace pase {

/// Parses `text`; malformed JSON is an InputError "SOURCE: malformed JSON at line L, column C: reason".
[[nodiscard]] nlohmann::json parse_json_document(const std::string& text, const std::string& source);

}  // namespace pase
