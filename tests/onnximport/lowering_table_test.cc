// The importer's table from ONNX op type to lowering: one family per op type,
// and every op a family file lists is found; an op no family lowers is not.
#include <doctest/doctest.h>

#ifdef PASE_HAVE_ONNX
#include <algorithm>
#include <string>
#include <vector>

#include "onnximport/lowerer.h"
#include "onnximport/lowering_table.h"

using namespace pase;

TEST_CASE("lowering table: op types to the lowering of their family") {
  const std::vector<std::string> types = lowered_op_types();
  CHECK(std::adjacent_find(types.begin(), types.end()) == types.end());
  CHECK(types.size() == 92);  // 53 of them elementwise
  for (const char* op : {"Conv", "MatMul", "Einsum", "Relu", "Add", "Dropout", "LayerNormalization", "Reshape", "Gather",
                         "Softmax", "TopK", "ScatterND", "LSTM", "GRU", "Loop"})
    CHECK_MESSAGE(find_lowering(op) != nullptr, op);
  CHECK(*find_lowering("Conv") == &Lowerer::lower_conv);
  CHECK(*find_lowering("ArgMin") == &Lowerer::lower_argmax);
  CHECK(*find_lowering("Expand") == &Lowerer::lower_reshape);
  CHECK(*find_lowering("GatherND") == &Lowerer::lower_gather_nd);
  CHECK(find_lowering("NonMaxSuppression") == nullptr);
  CHECK(find_lowering("conv") == nullptr);  // op types are case-sensitive
}
#endif  // PASE_HAVE_ONNX
