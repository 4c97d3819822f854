#include "onnximport/lowering_table.h"

#include <algorithm>
#include <unordered_map>

#include "base/check.h"
#include "onnximport/lowerings/lowerings.h"

namespace pase {
namespace {

const std::unordered_map<std::string, Lowering>& table() {
  static const std::unordered_map<std::string, Lowering> by_op = [] {
    std::unordered_map<std::string, Lowering> map;
    auto add = [&map](const std::vector<LoweringEntry>& family) {
      for (const LoweringEntry& entry : family) {
        const bool fresh = map.emplace(entry.op_type, entry.lower).second;
        PASE_ASSERT(fresh, entry.op_type);  // one family per op type
      }
    };
#define PASE_ADD_FAMILY(family) add(family##_lowerings());
    PASE_LOWERING_FAMILIES(PASE_ADD_FAMILY)
#undef PASE_ADD_FAMILY
    return map;
  }();
  return by_op;
}

}  // namespace

const Lowering* find_lowering(const std::string& op_type) {
  auto it = table().find(op_type);
  return it == table().end() ? nullptr : &it->second;
}

std::vector<std::string> lowered_op_types() {
  std::vector<std::string> types;
  for (const auto& [type, lowering] : table()) types.push_back(type);
  std::sort(types.begin(), types.end());
  return types;
}

}  // namespace pase
