#include "base/json_document.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/error.h"

namespace pase {
namespace {

constexpr size_t kMaxQuoted = 80;  // longest number quoted in a message

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

// "SOURCE: WHAT at line L, column C: REASON".
[[noreturn]] void fail_at(const std::string& text, size_t offset, const std::string& source, const char* what,
                          const std::string& reason) {
  throw InputError(source + ": " + what + " at " + line_and_column(text, offset) + ": " + reason);
}

bool is_number_char(char c) { return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }

// A number nlohmann would read as a double that is not finite (1e999, or an
// integer of hundreds of digits): it throws out_of_range with no position.
// Only long numbers and those with an exponent can overflow a double.
void check_number(const std::string& text, size_t begin, size_t end, const std::string& source) {
  bool exponent = false;
  for (size_t i = begin; i < end; ++i) exponent = exponent || text[i] == 'e' || text[i] == 'E';
  if (!exponent && end - begin < 300) return;
  std::string token = text.substr(begin, end - begin);
  errno = 0;
  double value = std::strtod(token.c_str(), nullptr);
  if (std::isfinite(value)) return;
  if (token.size() > kMaxQuoted) token = token.substr(0, kMaxQuoted - 3) + "...";
  fail_at(text, begin, source, "JSON", "number " + token + " is out of range");
}

// One pass over the text outside strings: nesting depth and numbers out of
// range. Malformed text is left to the parser, which says where. The depth
// is bounded far beyond any pase file's (a graph file goes 4 levels deep):
// nlohmann parses iteratively, but copying, comparing or printing a value
// recurses once per level, so a document nested 100,000 deep would overflow
// the stack wherever it is next walked.
void prescan(const std::string& text, const std::string& source) {
  size_t depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth)
        fail_at(text, i, source, "JSON", "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
    } else if (c == ']' || c == '}') {
      if (depth > 0) --depth;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      size_t end = i;
      while (end < text.size() && is_number_char(text[end])) ++end;
      check_number(text, i, end, source);
      i = end - 1;
    }
  }
}

}  // namespace

nlohmann::json parse_json_document(const std::string& text, const std::string& source) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    throw InputError(source + (text.empty() ? ": empty file" : ": empty file (only whitespace)"));
  prescan(text, source);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& error) {
    std::string what = error.what();
    // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column 2: "; keep the reason.
    auto colon = what.find(": ", what.find("parse error"));
    std::string reason = colon == std::string::npos ? what : what.substr(colon + 2);
    // A bad token is quoted whole ("... last read: '<2,000 characters>'"); keep the line short.
    if (reason.size() > 200) {
      size_t end = 197;
      while (end > 0 && (static_cast<unsigned char>(reason[end]) & 0xC0) == 0x80) --end;  // whole UTF-8 characters
      reason = reason.substr(0, end) + "...";
    }
    fail_at(text, error.byte ? error.byte - 1 : 0, source, "malformed JSON", reason);
  } catch (const nlohmann::json::exception& error) {
    // Out-of-range numbers are caught by the prescan; anything else the parser refuses is still bad input.
    throw InputError(source + ": malformed JSON: " + error.what());
  }
}

}  // namespace pase
