#include "graphs/json_document.h"

#include "graphs/error.h"

namespace pase {
namespace {

std::string line_and_column(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(column);
}

}  // namespace

nlohmann::json parse_json_document(const std::string& text, const std::string& source) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    std::string what = error.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column 2: "; keep the reason.
    auto colon = what.find(": ", what.find("parse error"));
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    throw InputError(source + ": malformed JSON at " + line_and_column(text, error.byte ? error.byte - 1 : 0) + ": " + reason);
  }
}

}  // namespace pase
