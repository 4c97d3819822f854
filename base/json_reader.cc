#include "base/json_reader.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <string_view>

#include "base/error.h"
#include "base/json_text.h"
#include "base/closest_name.h"

namespace pase {
namespace {

using json = nlohmann::json;

constexpr size_t kNameLimit = 80;  // longest key or value quoted in a message

// Appends the compact JSON text of `value` (as dump() writes it) while it
// stays within `limit` characters; false as soon as it does not. Each level
// of nesting adds a character first, so the recursion is at most `limit` deep.
bool append_compact(std::string& out, const json& value, size_t limit) {
  if (out.size() > limit) return false;
  switch (value.type()) {
    case json::value_t::array: {
      out += '[';
      bool first = true;
      for (const json& item : value) {
        if (!first) out += ',';
        first = false;
        if (!append_compact(out, item, limit)) return false;
      }
      out += ']';
      break;
    }
    case json::value_t::object: {
      out += '{';
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out += ',';
        first = false;
        if (it.key().size() > limit) return false;
        append_json_string(out, it.key());
        out += ':';
        if (!append_compact(out, it.value(), limit)) return false;
      }
      out += '}';
      break;
    }
    case json::value_t::string: {
      const std::string& text = value.get_ref<const std::string&>();
      if (text.size() > limit) return false;
      append_json_string(out, text);
      break;
    }
    default:
      out += value.dump();  // a number, boolean or null: a few characters
  }
  return out.size() <= limit;
}

// The longest start of `text` that, escaped and quoted with "..." after it, fits in `limit`.
std::string cut_string(std::string_view text, size_t limit) {
  std::string out = "\"";
  for (size_t i = 0; i < text.size();) {
    size_t n = 1;  // one UTF-8 character: a lead byte and its continuation bytes
    while (n < 4 && i + n < text.size() && (static_cast<unsigned char>(text[i + n]) & 0xC0) == 0x80) ++n;
    std::string piece;
    append_json_string(piece, text.substr(i, n));
    if (out.size() + (piece.size() - 2) + 4 > limit) break;
    out.append(piece, 1, piece.size() - 2);
    i += n;
  }
  return out + "...\"";
}

std::string count_of(size_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// A key or name as written, cut to kNameLimit characters.
std::string short_name(const std::string& name) {
  if (name.size() <= kNameLimit) return name;
  size_t end = kNameLimit - 3;
  while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;
  return name.substr(0, end) + "...";
}

// The type, and for a scalar its value: "a non-integer number 2.5", "a string \"16\"", "an array".
std::string type_and_value(const json& value) {
  if (value.is_number() || value.is_string() || value.is_boolean())
    return json_type_phrase(value) + " " + json_excerpt(value);
  return json_type_phrase(value);
}

const json& null_json() {
  static const json null;
  return null;
}

}  // namespace

std::string json_type_phrase(const json& value) {
  if (value.is_number_integer()) return "an integer";
  if (value.is_number()) return "a non-integer number";
  return std::string("a") + (value.is_array() || value.is_object() ? "n " : " ") + value.type_name();
}

std::string json_excerpt(const json& value, size_t limit) {
  std::string out;
  if (append_compact(out, value, limit)) return out;
  if (value.is_string()) return cut_string(value.get_ref<const std::string&>(), limit);
  if (value.is_array()) return "an array of " + count_of(value.size(), "item");
  if (value.is_object()) return "an object of " + count_of(value.size(), "field");
  return value.dump();  // unreachable: other values are short
}

JsonReader::JsonReader(const json& value, std::string source)
    : value_(&value), source_(std::make_shared<const std::string>(std::move(source))) {}

JsonReader::JsonReader(const json& value, std::shared_ptr<const std::string> source, std::string subject,
                       std::string path)
    : value_(&value), source_(std::move(source)), subject_(std::move(subject)), path_(std::move(path)) {}

std::string JsonReader::where() const {
  std::string out = *source_;
  if (!subject_.empty()) out += ": " + subject_;
  if (path_.empty()) return out;
  if (path_[0] == '[') return out + (subject_.empty() ? ": " : "") + path_;  // an item of the subject itself
  return out + ": field '" + path_ + "'";
}

void JsonReader::fail(const std::string& message) const { throw InputError(where() + ": " + message); }

JsonReader JsonReader::as_subject(std::string subject) const { return JsonReader(*value_, source_, std::move(subject), ""); }

JsonReader JsonReader::member(const std::string& key, const json& value) const {
  return JsonReader(value, source_, subject_, path_.empty() ? key : path_ + "." + key);
}

JsonReader JsonReader::item(size_t index) const {
  return JsonReader((*value_)[index], source_, subject_, path_ + "[" + std::to_string(index) + "]");
}

void JsonReader::expect_object(const std::string& what) const {
  if (!value_->is_object()) fail("expected " + what + ", got " + json_type_phrase(*value_));
}

JsonReader JsonReader::required(const std::string& key, const std::string& note) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end()) member(key, null_json()).fail(note.empty() ? "missing" : "missing (" + note + ")");
  return member(key, *it);
}

std::optional<JsonReader> JsonReader::optional(const std::string& key) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return member(key, *it);
}

bool JsonReader::has(const std::string& key) const {
  expect_object();
  return value_->contains(key);
}

std::vector<std::pair<std::string, JsonReader>> JsonReader::members(const std::string& what) const {
  expect_object(what);
  std::vector<std::pair<std::string, JsonReader>> result;
  result.reserve(value_->size());
  for (auto it = value_->begin(); it != value_->end(); ++it) result.emplace_back(it.key(), member(it.key(), it.value()));
  return result;
}

void JsonReader::check_known_fields(const std::vector<std::string>& allowed, const std::string& what) const {
  expect_object();
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
    std::string hint = closest_name(it.key(), allowed);
    member(short_name(it.key()), it.value())
        .fail("unknown field" + (what.empty() ? "" : " for " + what) + (hint.empty() ? "" : " (did you mean '" + hint + "'?)"));
  }
}

void JsonReader::check_header(const std::string& format, int64_t version) const {
  const std::string quoted = "\"" + format + "\"";
  JsonReader f = required("format", "expected " + quoted);
  if (!f.value().is_string() || f.value().get_ref<const std::string&>() != format) {
    // Another of pase's files given in the wrong place (a graph as --machine) is named as such.
    static const std::map<std::string, std::string> kKinds = {
        {"pase-graph", "a graph file"},       {"pase-machine", "a machine profile"},
        {"pase-strategy", "a strategy file"}, {"pase-batch-summary", "a batch summary"},
        {"pase-compare", "a compare result"}, {"pase-frontier", "a frontier result"}};
    auto wanted = kKinds.find(format);
    auto found = f.value().is_string() ? kKinds.find(f.value().get_ref<const std::string&>()) : kKinds.end();
    if (wanted != kKinds.end() && found != kKinds.end())
      f.fail("expected " + quoted + ", got \"" + found->first + "\": this is " + found->second + ", not " + wanted->second);
    f.fail("expected " + quoted + ", got " + json_excerpt(f.value()));
  }
  JsonReader v = required("version", "expected " + std::to_string(version));
  if (v.as_int() != version)
    v.fail("unsupported version " + json_excerpt(v.value()) + " (this pase reads version " + std::to_string(version) + ")");
}

std::vector<JsonReader> JsonReader::items(const std::string& of) const {
  if (!value_->is_array())
    fail("expected an array" + (of.empty() ? "" : " of " + of) + ", got " + json_type_phrase(*value_));
  std::vector<JsonReader> result;
  result.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i) result.push_back(item(i));
  return result;
}

int64_t JsonReader::as_int() const {
  const json& v = *value_;
  if (v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    fail("integer " + v.dump() + " does not fit in 64 bits");
  if (!v.is_number_integer()) {
    if (v.is_number_float()) {
      double d = v.get<double>();
      if (d > 9.2e18 || d < -9.2e18) fail("number " + v.dump() + " does not fit in 64 bits");
    }
    fail("expected an integer, got " + type_and_value(v));
  }
  return v.get<int64_t>();
}

int64_t JsonReader::as_positive(const std::string& noun) const {
  int64_t v = as_int();
  if (v <= 0) fail("expected a positive " + noun + ", got " + std::to_string(v));
  return v;
}

int64_t JsonReader::as_non_negative() const {
  int64_t v = as_int();
  if (v < 0) fail("expected a non-negative integer, got " + std::to_string(v));
  return v;
}

double JsonReader::as_number() const {
  if (!value_->is_number()) fail("expected a number, got " + json_type_phrase(*value_));
  return value_->get<double>();
}

double JsonReader::as_positive_number() const {
  if (!value_->is_number()) fail("expected a positive number, got " + json_type_phrase(*value_));
  double v = value_->get<double>();
  if (!(v > 0) || !std::isfinite(v)) fail("expected a positive number, got " + json_excerpt(*value_));
  return v;
}

std::string JsonReader::as_string() const {
  if (!value_->is_string()) fail("expected a string, got " + json_type_phrase(*value_));
  return value_->get<std::string>();
}

bool JsonReader::is_string() const { return value_->is_string(); }

bool JsonReader::as_bool() const {
  if (!value_->is_boolean()) fail("expected true or false, got " + json_type_phrase(*value_));
  return value_->get<bool>();
}

Shape JsonReader::as_shape(bool allow_minus_one) const {
  std::vector<JsonReader> sizes = items("sizes");
  if (sizes.empty()) fail("expected at least one size, got []");
  Shape shape;
  shape.reserve(sizes.size());
  for (const JsonReader& size : sizes) {
    const json& v = size.value();
    // Parsed non-negative integers are unsigned; only a signed one can be -1.
    if (allow_minus_one && v.is_number_integer() && !v.is_number_unsigned() && v.get<int64_t>() == -1) {
      shape.push_back(-1);
      continue;
    }
    shape.push_back(size.as_positive());
  }
  if (!allow_minus_one && !checked_product(shape)) {
    std::string text = shape_to_string(shape);
    fail((text.size() <= kNameLimit ? "sizes " + text : "the " + std::to_string(shape.size()) + " sizes") +
         " multiply to more than 2^63");
  }
  return shape;
}

std::vector<int64_t> JsonReader::as_int_list() const {
  std::vector<int64_t> list;
  for (const JsonReader& entry : items("integers")) list.push_back(entry.as_int());
  return list;
}

}  // namespace pase
