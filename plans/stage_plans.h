#pragma once
// Pipeline plans (docs/pipeline.md, "Plans per stage"): every stage has its
// own mesh on its own devices, each layer's layouts are on its stage's mesh,
// and an input made by an earlier stage's layer is sent point to point. A
// stage's part of such a plan is a plan of its own: what plan-check and the
// exports take, stage by stage.
#include <cstdint>

#include "base/shape.h"
#include "plans/plan.h"
#include "plans/plan_reader.h"

namespace pase {

/// Stage `k` of a pipeline plan as a plan on its own mesh: its layers, in
/// order, with their written texts; inputs sent from earlier stages keep
/// their send records (no layer of the part makes them).
[[nodiscard]] PlanFile stage_plan_file(const PlanFile& file, size_t k);

/// The most elements any device of `mesh` holds of a tensor of `shape` laid
/// out by `spec`: the product over dimensions of ceil(size / split). What a
/// device of the receiving stage needs of a send, none of which it holds.
[[nodiscard]] int64_t largest_tile(const Shape& shape, const AxisSpec& spec, const Mesh& mesh);

/// Marks, in a plan whose layers carry their stages, every input that an
/// earlier stage's layer makes: its from_stage, its model words (the
/// tensor's elements over the smaller stage's devices, the pairs the model
/// prices a send over) and realized words (largest_tile on the reader's mesh).
void mark_sends(Plan& plan);

}  // namespace pase
