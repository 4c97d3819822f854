// Control flow: Loop, If and Scan are refused (imported as pass-throughs
// only with --lenient).
#include "onnximport/lowerings/lowerings.h"


namespace pase {

void Lowerer::lower_control_flow(const onnx::NodeProto& node, const std::vector<int>& /*slots*/) {
  unsupported(node, "control flow");
}

std::vector<LoweringEntry> control_flow_lowerings() {
  return {
      {"Loop", &Lowerer::lower_control_flow},
      {"If", &Lowerer::lower_control_flow},
      {"Scan", &Lowerer::lower_control_flow}};
}

}  // namespace pase
