#include "costmodel/builtin_machines.h"

#include <filesystem>

#include "base/error.h"
#include "base/closest_name.h"

namespace pase {
namespace {

struct BuiltinMachine {
  const char* name;
  const char* text;
};

// One entry per data/machines/*.json, in name order.
const BuiltinMachine kBuiltinMachines[] = {
#include "builtin_machine_texts.inc"
};

}  // namespace

std::vector<std::string> builtin_machine_names() {
  std::vector<std::string> names;
  for (const BuiltinMachine& m : kBuiltinMachines) names.emplace_back(m.name);
  return names;
}

MachineProfile load_machine_profile(const std::string& name_or_path) {
  // A file wins over a built-in of the same name: a user's edited copy in
  // the working directory is what they mean.
  std::error_code error;
  if (std::filesystem::is_regular_file(name_or_path, error)) return read_machine_profile(name_or_path);
  for (const BuiltinMachine& m : kBuiltinMachines)
    if (name_or_path == m.name) return parse_machine_profile(m.text, "data/machines/" + name_or_path + ".json");
  const std::vector<std::string> names = builtin_machine_names();
  std::string list;
  for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
  const std::string hint = closest_name(name_or_path, names);
  throw InputError("machine '" + name_or_path + "': no such file and no built-in profile of that name (" +
                   (hint.empty() ? "" : "did you mean '" + hint + "'? ") + "built-in: " + list + ")");
}

}  // namespace pase
