#include "cli/explain_boundary.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/byte_size.h"
#include "base/error.h"
#include "cli/exit_status.h"
#include "cli/graph_input.h"
#include "cli/text_output.h"
#include "solve/solve_request.h"
#include "stages/boundary_moves.h"
#include "stages/pipeline_document.h"

namespace pase {
namespace {

// The devices, schedule, setup and cap the file's pipeline was solved with;
// its stages solved for their optimum (boundary_moves sets where they begin).
PipelineRequest recorded_request(const BoundaryQuestion& q) {
  const TrainingRecord& record = *q.file->training;
  PipelineRequest request;
  request.stages = static_cast<int>(record.stages);
  request.stage_devices = record.stage_devices;
  request.devices = q.devices;
  try {
    request.schedule = parse_schedule(record.schedule);
  } catch (const OptionError&) {
    throw InputError(q.strategy_path + ": field 'training.pipeline.schedule': '" + record.schedule +
                     "' is not a schedule (1f1b, gpipe)");
  }
  request.stage = pricing_request(q.training, nullptr);
  request.stage.min_row = search_min_row(q.model);
  if (q.file->memory) request.stage.cap = q.file->memory->cap;
  const CostModelOptions model = q.model;
  request.make_model = [model](const TrainingSetup& setup, int64_t n) { return make_cost_model(model, n, setup); };
  return request;
}

std::string percent_change(double step, double here) {
  char text[64];
  std::snprintf(text, sizeof text, "%+.3f%%", 100 * (step - here) / here);
  return text;
}

std::string where_words(const BoundaryMove& move) {
  return move.moved == 0 ? "here" : move.moved < 0 ? "1 earlier" : "1 later";
}

void print_table(const BoundaryQuestion& q, const Graph& graph, double file_step, const std::vector<BoundaryMove>& moves,
                 const std::string& unit) {
  const int k = q.boundary;
  std::cout << graph.name << " on " << q.devices << " devices in " << q.file->training->stages << " pipeline stages ("
            << q.file->training->schedule << "), " << q.file->training->micro_batches
            << " micro-batches: boundary " << k << ", where stage " << k << " begins; step as "
            << q.strategy_path << " gives it " << format_total(file_step, unit) << " " << unit << "\n";
  std::cout << "Each row: stage " << k << " beginning there, every other boundary kept, each stage its optimum.\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-40s  %12s  %12s  %10s  %10s  %16s  %10s\n", "stage begins at", "t before",
                "t after", "mem before", "mem after", "step", "vs here");
  std::cout << line;
  const double here = moves.front().outcome.solved() ? moves.front().outcome.step : NAN;
  for (const BoundaryMove& move : moves) {
    const std::string name = graph.vertices[static_cast<size_t>(move.start)].name + " (" + where_words(move) + ")";
    if (!move.outcome.solved()) {
      std::snprintf(line, sizeof line, "%-40s  a stage of it fits no strategy under the cap\n", name.c_str());
      std::cout << line;
      continue;
    }
    const PipelineStage &before = move.outcome.stages[static_cast<size_t>(k - 1)], &after = move.outcome.stages[static_cast<size_t>(k)];
    std::snprintf(line, sizeof line, "%-40s  %12.6g  %12.6g  %6s GiB  %6s GiB  %16s  %10s\n", name.c_str(),
                  before.value.t, after.value.t, format_gib(before.bytes.total()).c_str(),
                  format_gib(after.bytes.total()).c_str(), format_total(move.outcome.step, unit).c_str(),
                  std::isnan(here) ? "" : percent_change(move.outcome.step, here).c_str());
    std::cout << line;
  }
  const auto slowest = [](const PipelineOutcome& outcome) {
    size_t at = 0;
    for (size_t stage = 1; stage < outcome.stages.size(); ++stage)
      if (outcome.stages[stage].value.t > outcome.stages[at].value.t) at = stage;
    return at;
  };
  for (const BoundaryMove& move : moves) {
    if (move.moved == 0 || !move.outcome.solved() || std::isnan(here)) continue;
    const size_t was = slowest(moves.front().outcome), now = slowest(move.outcome);
    std::snprintf(line, sizeof line, "%s: the slowest stage is %zu at t %.6g (here: stage %zu at %.6g), the step %s\n",
                  where_words(move).c_str(), now, move.outcome.stages[now].value.t, was,
                  moves.front().outcome.stages[was].value.t, percent_change(move.outcome.step, here).c_str());
    std::cout << line;
  }
  if (moves.size() == 1)
    std::cout << "It cannot move: the stages on either side hold one place a stage may begin each (docs/pipeline.md, "
                 "\"Where stages begin\").\n";
}

nlohmann::ordered_json boundary_json(const BoundaryQuestion& q, const Graph& graph, double file_step,
                                     const std::vector<BoundaryMove>& moves, const std::string& unit) {
  nlohmann::ordered_json doc;
  doc["format"] = "pase-explain";
  doc["version"] = 1;
  doc["graph"] = graph.name;
  doc["devices"] = q.devices;
  doc["cost_unit"] = unit;
  doc["strategy"] = q.strategy_path;
  doc["boundary"] = q.boundary;
  doc["file_step"] = file_step;
  doc["moves"] = nlohmann::ordered_json::array();
  for (const BoundaryMove& move : moves) {
    nlohmann::ordered_json row = {{"moved", move.moved}, {"begins_at", graph.vertices[static_cast<size_t>(move.start)].name}};
    row["fits"] = move.outcome.solved();
    if (move.outcome.solved()) {
      row["step"] = move.outcome.step;
      for (int side : {q.boundary - 1, q.boundary}) {
        const PipelineStage& stage = move.outcome.stages[static_cast<size_t>(side)];
        row["stages"].push_back({{"stage", side}, {"t", stage.value.t}, {"w", stage.value.w},
                                 {"memory_bytes", stage.bytes.total()}});
      }
    }
    doc["moves"].push_back(row);
  }
  return doc;
}

}  // namespace

int explain_boundary(const BoundaryQuestion& q) {
  const Graph graph = training_graph(read_graph_input(q.graph_path), q.graph_path, q.training);
  Graph given_graph = graph;
  apply_layer_techniques(given_graph, *q.file, q.training, q.strategy_path);
  const GivenPipeline given = given_pipeline(given_graph, *q.file, q.strategy_path);
  if (!given.chunks.empty())
    throw UsageError("--boundary: " + q.strategy_path + " is an interleaved pipeline (" + q.file->training->schedule +
                     "), whose chunks are Megatron-LM's equal split, not moved one by one");
  const PipelineRequest request = recorded_request(q);
  PipelineRequest as_given = request;
  as_given.stage = pricing_request(q.training, q.file);
  as_given.stage.min_row = request.stage.min_row;
  as_given.stage.cap = request.stage.cap;
  as_given.given_starts = given.starts;
  as_given.given_stages = given.stages;
  const PipelineOutcome file_outcome = solve_pipeline(given_graph, as_given);
  std::vector<BoundaryMove> moves;
  try {
    moves = boundary_moves(graph, request, given.starts, q.boundary);
  } catch (const OptionError& error) {
    throw UsageError(error.words().with("--boundary"));
  }
  const std::string unit = file_outcome.solved() ? file_outcome.stages[0].solve->outcome.tables.unit : "";
  const double file_step = file_outcome.solved() ? file_outcome.step : NAN;
  if (q.json) std::cout << boundary_json(q, graph, file_step, moves, unit).dump(2) << "\n";
  else print_table(q, graph, file_step, moves, unit);
  return 0;
}

}  // namespace pase
