// Splits frameworks run (costmodel/kernel_splits.h): the rows a
// configuration leaves each tensor, worked by hand on a small layer.
#include <doctest/doctest.h>

#include "costmodel/kernel_splits.h"

using namespace pase;

namespace {

// A layer over (b, l, k) = (4, 256, 128) reading and writing one b x l x k
// tensor, and holding a weight [k, w] = [128, 64] split as k.
VertexModel three_dimensional_layer() {
  VertexModel model;
  model.letters = "blk";
  model.domain = {4, 256, 128};
  model.splittable = {1, 1, 1};
  model.inputs = {{{0}, {1}, {2}}};
  model.outputs = {{{0}, {1}, {2}}};
  model.weights = {{"weight", {128, 64}, {{2}, {}}}};
  return model;
}

bool keeps(const VertexModel& model, std::vector<int32_t> config, int64_t min_row = 128) {
  return keeps_rows(model, config.data(), min_row);
}

}  // namespace

TEST_CASE("keeps_rows: a device's row is the innermost split dimension's piece times the extents after it") {
  const VertexModel layer = three_dimensional_layer();
  CHECK(keeps(layer, {1, 1, 1}));    // nothing split
  CHECK(keeps(layer, {4, 1, 1}));    // rows of 256 x 128 (and the weight whole)
  CHECK(keeps(layer, {1, 256, 1}));  // one position a device: rows of 128, exactly the minimum
  CHECK(keeps(layer, {2, 128, 1}));  // the innermost split is l: rows of 2 x 128
  // The head width k split: rows of 64 in the activations (the weight's
  // rows, 64 of k times 64 of w, would pass on their own).
  CHECK_FALSE(keeps(layer, {1, 1, 2}));
  CHECK_FALSE(keeps(layer, {4, 1, 2}));
  CHECK(keeps(layer, {1, 1, 2}, 64));  // a shorter minimum admits it
  CHECK(keeps(layer, {1, 1, 128}, 0)); // no rule: everything passes
}

TEST_CASE("keeps_rows: a weight's rows count with its own shape") {
  VertexModel layer = three_dimensional_layer();
  layer.inputs.clear();
  layer.outputs.clear();
  // [k, w] = [128, 64] split 4 ways on k: rows of 32 x 64 = 2048, kept; the
  // same weight stored [w, k] (k innermost) leaves rows of 32.
  CHECK(keeps(layer, {1, 1, 4}));
  layer.weights = {{"weight", {64, 128}, {{}, {2}}}};
  CHECK_FALSE(keeps(layer, {1, 1, 4}));
  CHECK(keeps(layer, {1, 1, 1}));
}
