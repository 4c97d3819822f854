#pragma once
// What a person looks at of a simulated step (docs/simulate.md, "Timelines"):
// the Chrome trace event format (Perfetto, chrome://tracing: a process per
// stage, a thread per stream, an event per task with its layer and
// micro-batch), and a static SVG timeline (stages by time, coloured by kind,
// the bubbles blank).
#include <string>

#include "simulate/step_model.h"
#include "simulate/step_simulation.h"
#include "simulate/task_graph.h"

namespace pase {

/// The trace as JSON text: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}.
/// Times in microseconds where the model's unit is seconds, else in its unit.
[[nodiscard]] std::string chrome_trace(const StepModel& model, const TaskGraph& graph, const SimulatedStep& simulated,
                                       const std::string& title);

/// An SVG timeline `width` pixels wide: a row per stage and stream, a
/// legend, the step's time axis; tasks narrower than half a pixel merged
/// with their neighbours of the same kind.
[[nodiscard]] std::string timeline_svg(const StepModel& model, const TaskGraph& graph, const SimulatedStep& simulated,
                                       const std::string& title, int width = 1200);

}  // namespace pase
