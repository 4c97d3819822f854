#pragma once
// The machine profiles shipped in data/machines/, compiled into the library
// (docs/calibration.md#the-shipped-profiles), and the lookup that accepts a
// built-in name or a profile file.
#include <string>
#include <vector>

#include "costmodel/machine_profile.h"

namespace pase {

/// Names of the built-in profiles (file stems of data/machines/*.json), sorted.
[[nodiscard]] std::vector<std::string> builtin_machine_names();

/// The profile called `name_or_path`: an existing file is read as a profile;
/// otherwise a built-in name. Anything else is one InputError line with the
/// closest built-in name and the list.
[[nodiscard]] MachineProfile load_machine_profile(const std::string& name_or_path);

}  // namespace pase
