#pragma once
// "Did you mean": the known name closest to a misspelt one.
#include <string>
#include <vector>

namespace pase {

/// The closest known name to `word` (for "did you mean"), or "" if none is close.
[[nodiscard]] std::string closest_name(const std::string& word, const std::vector<std::string>& names);

}  // namespace pase
