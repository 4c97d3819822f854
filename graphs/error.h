#pragma once
// How the libraries report bad input: one exception type whose message is a
// single line that already names the file, node and field. Only the CLI prints.
#include <stdexcept>
#include <string>

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

}  // namespace pase
