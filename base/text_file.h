#pragma once
// Whole files in and out, with errors that name the file.
#include <string>

namespace pase {

/// Reads a whole file into a string, or throws InputError naming it.
[[nodiscard]] std::string read_text_file(const std::string& path);

/// Writes (replaces) a file, or throws InputError naming it.
void write_text_file(const std::string& path, const std::string& text);

}  // namespace pase
