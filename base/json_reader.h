#pragma once
// Reading the fields of a parsed JSON input file (graph, strategy, machine
// profile, batch summary) with errors that point into it. A JsonReader is one
// value of the document plus where it is: the file, an optional subject (a
// record such as "node 'conv1'" or "layers[3]") and the JSON path below the
// subject ("gemm.nn_tflops[0][1]"). Every check throws InputError with one line:
//
//   g.json: node 'conv1': field 'stride[1]': expected a positive size, got 0
//   m.json: field 'gemm.m[0]': expected a positive number, got 0
//   g.json: tensor 'x'[2]: expected an integer, got a string "16"
//
// Messages quote at most about 80 characters of a value (json_excerpt).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/shape.h"

namespace pase {

/// "an integer", "a non-integer number", "a string", "a boolean", "a null", "an array", "an object".
[[nodiscard]] std::string json_type_phrase(const nlohmann::json& value);

/// The value as compact JSON text (what dump() gives) when that is at most
/// `limit` characters; otherwise a long string is cut ("abc..."), and an
/// array or object is named by its size ("an array of 3 items", "an object
/// of 2 fields"). Never walks deeper into a value than `limit` levels.
[[nodiscard]] std::string json_excerpt(const nlohmann::json& value, size_t limit = 80);

class JsonReader {
 public:
  /// The root of a document; `source` names the file in messages. The reader
  /// refers to `value`, which must outlive it and every reader made from it.
  JsonReader(const nlohmann::json& value, std::string source);
  JsonReader(const nlohmann::json&& value, std::string source) = delete;  // would dangle

  [[nodiscard]] const nlohmann::json& value() const { return *value_; }

  /// "FILE", "FILE: node 'x'", "FILE: field 'a.b[2]'", "FILE: tensor 'x'[0]".
  [[nodiscard]] std::string where() const;
  /// Throws InputError "WHERE: message".
  [[noreturn]] void fail(const std::string& message) const;

  /// The same value as the subject of messages ("node 'conv1'", "layers[3]"),
  /// with the path below it starting afresh.
  [[nodiscard]] JsonReader as_subject(std::string subject) const;

  // Objects. Each fails "expected an object, got ..." on any other value.
  /// Fails with "expected WHAT, got TYPE" unless this is an object.
  void expect_object(const std::string& what = "an object") const;
  /// The member `key`; fails "field 'key': missing" or "missing (NOTE)".
  [[nodiscard]] JsonReader required(const std::string& key, const std::string& note = "") const;
  /// The member `key`, if present.
  [[nodiscard]] std::optional<JsonReader> optional(const std::string& key) const;
  [[nodiscard]] bool has(const std::string& key) const;
  /// The members in key order; fails "expected WHAT, got TYPE" unless this is an object.
  [[nodiscard]] std::vector<std::pair<std::string, JsonReader>> members(const std::string& what = "an object") const;
  /// Fails at the first member not in `allowed`: "field 'k': unknown field[ for WHAT][ (did you mean 'K'?)]".
  void check_known_fields(const std::vector<std::string>& allowed, const std::string& what = "") const;
  /// `format` and `version`, the first two fields of every pase file:
  /// "field 'format': expected \"pase-graph\", got \"onnx\"",
  /// "field 'version': unsupported version 2 (this pase reads version 1)".
  void check_header(const std::string& format, int64_t version) const;

  // Arrays.
  /// The items; fails "expected an array of OF, got TYPE" ("expected an array, ..." when `of` is empty).
  [[nodiscard]] std::vector<JsonReader> items(const std::string& of = "") const;

  // Scalars.
  /// A 64-bit integer: "expected an integer, got a non-integer number 2.5",
  /// "integer 18446744073709551615 does not fit in 64 bits".
  [[nodiscard]] int64_t as_int() const;
  /// An integer above 0: "expected a positive NOUN, got 0".
  [[nodiscard]] int64_t as_positive(const std::string& noun = "size") const;
  /// An integer of at least 0: "expected a non-negative integer, got -1".
  [[nodiscard]] int64_t as_non_negative() const;
  /// Any number: "expected a number, got a string".
  [[nodiscard]] double as_number() const;
  /// A finite number above 0: "expected a positive number, got 0".
  [[nodiscard]] double as_positive_number() const;
  [[nodiscard]] std::string as_string() const;
  /// Whether the value is a string (a field that takes a number or a word).
  [[nodiscard]] bool is_string() const;
  /// true or false: "expected true or false, got ...".
  [[nodiscard]] bool as_bool() const;
  /// A non-empty array of positive sizes whose product fits in 63 bits; with
  /// `allow_minus_one`, -1 entries (a size to infer) pass and the product is not checked.
  [[nodiscard]] Shape as_shape(bool allow_minus_one = false) const;
  /// An array of integers.
  [[nodiscard]] std::vector<int64_t> as_int_list() const;

 private:
  JsonReader(const nlohmann::json& value, std::shared_ptr<const std::string> source, std::string subject,
             std::string path);
  [[nodiscard]] JsonReader member(const std::string& key, const nlohmann::json& value) const;
  [[nodiscard]] JsonReader item(size_t index) const;

  const nlohmann::json* value_;
  std::shared_ptr<const std::string> source_;
  std::string subject_;  ///< "node 'conv1'"; "" at the top level
  std::string path_;     ///< below the subject: "gemm.m[0]"; "" for the subject itself
};

}  // namespace pase
