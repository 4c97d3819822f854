#pragma once
// How the libraries report bad input: one exception type whose message is a
// single line that already names the file, node and field. Only the CLI prints.
// Library messages name no command-line flags: an error about an option
// carries it by field name (OptionWords), and the CLI spells it as its flag.
#include <stdexcept>
#include <string>
#include <utility>

namespace pase {

/// Bad user input (graph, strategy or option); what() is the whole one-line reason.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A request the solver refuses because it would need too much time or memory.
class ResourceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A message about one option of a library call (a field of its options, e.g.
/// "max_table_bytes"), with the option's name left open: the library says
/// `before + name + after` with its own `name`, and a front end that sets the
/// option its own way (a command-line flag) puts that spelling in its place.
struct OptionWords {
  std::string option;  ///< the options field the message is about
  std::string name;    ///< how the library calls it, e.g. "the table byte limit"
  std::string before, after;

  [[nodiscard]] std::string with(const std::string& spelling) const { return before + spelling + after; }
};

/// Bad input about an option, or that an option would fix; what() is in the library's words.
class OptionError : public InputError {
 public:
  explicit OptionError(OptionWords words) : InputError(words.with(words.name)), words_(std::move(words)) {}
  [[nodiscard]] const OptionWords& words() const { return words_; }

 private:
  OptionWords words_;
};

/// A refusal over the limit an option sets; what() is in the library's words.
class LimitError : public ResourceError {
 public:
  explicit LimitError(OptionWords words) : ResourceError(words.with(words.name)), words_(std::move(words)) {}
  [[nodiscard]] const OptionWords& words() const { return words_; }

 private:
  OptionWords words_;
};

}  // namespace pase
