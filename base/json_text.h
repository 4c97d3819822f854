#pragma once
// Appending JSON values to a string directly, for documents written often
// enough that building them as nlohmann::json objects first shows up in the
// run time (the strategy file). The text matches nlohmann::json's dump():
// same escapes, and numbers in its layout ("1.0", "1e+20").
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pase {

void append_json_string(std::string& out, std::string_view text);
/// Shortest text that reads back as exactly `value`; non-finite values as null.
void append_json_number(std::string& out, double value);
void append_json_number(std::string& out, int64_t value);
void append_json_number(std::string& out, uint64_t value);
/// The key of a document's next top-level field, one field per line: opens
/// the document on the first ("{\n  \"key\": "), else starts a new line.
void append_json_top_level_key(std::string& out, std::string_view key);
/// [a,b,c] without spaces.
void append_json_array(std::string& out, const std::vector<int64_t>& values);
void append_json_array(std::string& out, const std::vector<int32_t>& values);
/// ["a","b"] without spaces.
void append_json_array(std::string& out, const std::vector<std::string>& values);

}  // namespace pase
