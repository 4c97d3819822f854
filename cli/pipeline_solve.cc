#include "cli/pipeline_solve.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <iostream>
#include <limits>
#include <sstream>

#include "base/byte_size.h"
#include "base/error.h"
#include "base/text_file.h"
#include "cli/exit_status.h"
#include "cli/layer_table.h"
#include "cli/pipeline_candidates.h"
#include "cli/progress_line.h"
#include "cli/text_output.h"
#include "stages/device_splits.h"
#include "stages/pipeline_document.h"
#include "stages/pipeline_plan.h"
#include "stages/stage_solve.h"
#include "graphs/stage_graph.h"
#include "strategy/strategy_document.h"

namespace pase {
namespace {

// "12,4": each stage's devices.
std::vector<int64_t> parse_stage_devices(const std::string& text) {
  std::vector<int64_t> devices;
  size_t at = 0;
  while (at <= text.size()) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, comma - at);
    const bool digits = !item.empty() && item.size() <= 10 &&
                        item.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || std::stoll(item) < 1)
      throw UsageError("--stage-devices: expected positive device counts separated by commas (12,4), got '" + text + "'");
    devices.push_back(std::stoll(item));
    at = comma + 1;
  }
  return devices;
}

// The stage counts to try: the one given, the stage devices' count, or under
// auto every divisor of the devices.
// With --stage-devices auto (split_unit > 0), under auto every count from 1
// to the units of devices.
std::vector<int> stage_counts(const PipelineCliOptions& o, const std::vector<int64_t>& stage_devices, int64_t devices,
                              int64_t split_unit) {
  if (split_unit > 0 && o.stages == "auto") {
    std::vector<int> counts;
    for (int64_t s = 1; s <= devices / split_unit && s <= 4096; ++s) counts.push_back(static_cast<int>(s));
    return counts;
  }
  if (!stage_devices.empty()) {
    if (o.stages != "1" && o.stages != std::to_string(stage_devices.size()))
      throw UsageError("--stage-devices: gives " + std::to_string(stage_devices.size()) +
                       " stages, but --pipeline-stages is " + o.stages);
    return {static_cast<int>(stage_devices.size())};
  }
  if (o.stages == "auto") {
    std::vector<int> counts;
    for (int64_t s = 1; s <= devices && s <= 4096; ++s)
      if (devices % s == 0) counts.push_back(static_cast<int>(s));
    return counts;
  }
  const bool digits = !o.stages.empty() && o.stages.size() <= 6 && o.stages.find_first_not_of("0123456789") == std::string::npos;
  if (!digits || std::stoi(o.stages) < 1)
    throw UsageError("--pipeline-stages: expected a number of stages or auto, got '" + o.stages + "'");
  return {std::stoi(o.stages)};
}

PipelineSchedule schedule_of(const PipelineCliOptions& o) {
  PipelineSchedule schedule;
  try {
    schedule = parse_schedule(o.schedule);
  } catch (const OptionError& error) {
    throw UsageError(error.words().with("--schedule"));
  }
  return schedule;
}

std::string format_seconds(double cost) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.6g", cost);
  return buffer;
}

// "first .. last (layers)"; an interleaved stage's first chunk, then how many more.
std::string layer_range(const Graph& graph, const PipelineStage& stage) {
  const StageRanges ranges = stage.chunks.empty() ? StageRanges{{stage.begin, stage.end}} : stage.chunks;
  int layers = 0;
  for (const auto& [begin, end] : ranges) layers += end - begin;
  const auto& [begin, end] = ranges.front();
  std::string text = graph.vertices[static_cast<size_t>(begin)].name + " .. " +
                     graph.vertices[static_cast<size_t>(end - 1)].name;
  if (ranges.size() > 1) text += " and " + std::to_string(ranges.size() - 1) + " more chunk" + (ranges.size() > 2 ? "s" : "");
  return text + " (" + std::to_string(layers) + ")";
}

void print_stages(std::ostream& out, const PipelineBest& best, const PipelineSchedule& schedule, int64_t devices,
                  double lower_bound, const std::string& unit, const std::string& given_path) {
  const PipelineOutcome& o = best.outcome;
  out << best.graph.name << " on " << devices << " devices in " << o.stages.size() << " pipeline stages ("
      << schedule_name(schedule) << "), " << best.setup.micro_batches << " micro-batches of " << best.micro_batch_size
      << ", cost in " << unit << "\n";
  size_t width = 6;
  for (const PipelineStage& stage : o.stages) width = std::max(width, layer_range(best.graph, stage).size());
  char line[2048];
  std::snprintf(line, sizeof line, "%5s  %-*s  %11s  %9s  %12s  %12s  %12s  %10s\n", "stage", int(width), "layers",
                "devices", "in flight", "t", "sends", "step work", "memory");
  out << line;
  for (size_t k = 0; k < o.stages.size(); ++k) {
    const PipelineStage& s = o.stages[k];
    const std::string range = std::to_string(s.first_device) + "-" + std::to_string(s.first_device + s.devices - 1);
    std::snprintf(line, sizeof line, "%5zu  %-*s  %11s  %9lld  %12s  %12s  %12s  %6s GiB\n", k, int(width),
                  layer_range(best.graph, s).c_str(), range.c_str(), static_cast<long long>(s.in_flight),
                  format_cost_text(s.value.t, unit).c_str(), format_cost_text(s.send_time, unit).c_str(),
                  format_cost_text(s.value.w, unit).c_str(), format_gib(s.bytes.total()).c_str());
    out << line;
  }
  out << "step time " << format_total(o.step, unit) << " " << unit
      << (schedule.kind == ScheduleKind::Interleaved
              ? " (micro-batches x the largest t + (sum of t - the largest t) / " + std::to_string(schedule.chunks) +
                    " + the largest step work)"
              : std::string(" (sum of t + (micro-batches - 1) x the largest t + the largest step work)"));
  if (std::isnan(lower_bound)) {
    out << (given_path.empty() ? ", stages of equal blocks (not searched)\n"
                               : ", stages and strategy as " + given_path + " gives them (not searched)\n");
    return;
  }
  const double gap = lower_bound > 0 ? (o.step - lower_bound) / lower_bound : 0.0;
  out << ", lower bound " << format_total(lower_bound, unit) << " " << unit << ", gap "
      << (gap <= 1e-12 ? std::string("0 (optimal)") : format_seconds(100 * gap) + "%") << "\n";
}

// Each stage placed on its own mesh (stages/pipeline_plan.h), into the
// document, with a line saying what the layouts realize; or why not.
void attach_plan(StrategyDocument& document, const PipelineBest& best, const PipelineRequest& request,
                 const std::string& unit, std::string& words) {
  const std::unique_ptr<CostModel> model = request.make_model(best.setup, request.devices);
  PipelinePlacement placement = place_pipeline(best.graph, best.outcome, request, model->devices_per_node());
  if (!placement.plan) {
    document.plan_unavailable = placement.unavailable;
    words = "no plan on the stages' default meshes: " + placement.unavailable + "\n";
    return;
  }
  const Plan& plan = *placement.plan;
  words = "plan on a mesh per stage:";
  for (size_t k = 0, next = 0; k < plan.stages.size(); k = next) {  // runs of stages on alike meshes
    for (next = k + 1; next < plan.stages.size() && plan.stages[next].mesh.shape == plan.stages[k].mesh.shape;) ++next;
    words += std::string(k ? "," : "") + (next - k == 1 ? " stage " + std::to_string(k)
                                                        : " stages " + std::to_string(k) + "-" + std::to_string(next - 1)) +
             " " + mesh_shape_words(plan.stages[k].mesh);
  }
  words += "; step with realized redistributions " + format_total(plan.realized_total_cost, unit) + " " + unit +
           " (model " + format_total(best.outcome.step, unit) + "), axis assignment " +
           (plan.assignment_exact ? std::string("exact") : "not proven optimal") + " (" + plan.assignment_proof +
           ")\n";
  document.plan = std::move(placement.plan);
  document.plan_unavailable.clear();
}


}  // namespace

void add_pipeline_options(CLI::App* command, PipelineCliOptions& options) {
  command->add_option("--pipeline-stages", options.stages,
                      "Pipeline stages: a number, or auto (every divisor of the devices); each stage a contiguous range "
                      "of layers on its own devices (docs/pipeline.md; default 1, no pipeline)");
  command->add_option("--schedule", options.schedule,
                      "Pipeline schedule: 1f1b (default), gpipe, or interleaved:V (Megatron-LM's: V chunks of equal "
                      "blocks per stage)");
  command->add_option("--chunks", options.chunks,
                      "Interleaved stages' chunks: equal (Megatron-LM's split, default) or auto (each stage's share of "
                      "the blocks searched, the embedding's and the head's stages fewer where that is faster)");
  command->add_option("--stage-devices", options.stage_devices,
                      "Each stage's devices, e.g. 12,4, or auto: every split in multiples of a node's devices (of one "
                      "device within a node), those the layers' least costs do not rule out searched; frameworks run "
                      "equal stages only (default: the devices split evenly)");
}

PipelineSolveInput pipeline_input(const GraphFileV1& file, const std::string& path, int64_t devices,
                                  const std::vector<int64_t>& counts, const SolveRequest& request,
                                  const CostModelOptions& model, const std::string& out, bool json) {
  PipelineSolveInput input;
  input.file = &file;
  input.path = path;
  input.devices = devices;
  input.micro_batch_counts = counts;
  input.request = request;
  input.make_model = [model](const TrainingSetup& setup, int64_t n) { return make_cost_model(model, n, setup); };
  input.out = out;
  input.json = json;
  return input;
}

namespace {

// --stage-devices auto: the unit of a stage's devices (a node's, when the job is whole nodes).
int64_t split_unit(const PipelineSolveInput& input) {
  if (input.request.source == StrategySource::Baseline || input.given)
    throw UsageError("--stage-devices auto: a baseline's or a file's stages are given, not searched");
  return device_split_unit(input.devices, input.make_model(input.request.memory, input.devices)->devices_per_node());
}

// --chunks: whether the interleaved stages' shares of the blocks are searched.
bool chunks_searched(const PipelineCliOptions& o, const PipelineSchedule& schedule, const PipelineSolveInput& input) {
  if (o.chunks != "equal" && o.chunks != "auto")
    throw UsageError("--chunks: expected equal or auto, got '" + o.chunks + "'");
  if (o.chunks == "equal") return false;
  if (schedule.kind != ScheduleKind::Interleaved)
    throw UsageError("--chunks auto: only with --schedule interleaved:V (1f1b and gpipe stages are ranges whose "
                     "boundaries are searched already)");
  if (input.request.source == StrategySource::Baseline || input.given)
    throw UsageError("--chunks auto: a baseline's or a file's chunks are given, not searched");
  return true;
}

// Every split of the devices into `stages` in multiples of `unit`.
std::vector<std::vector<int64_t>> every_split(int64_t devices, int stages, int64_t unit) {
  try {
    return device_splits(devices, stages, unit, kSplitsPerCount);
  } catch (const OptionError& error) {
    throw UsageError(error.words().with("--stage-devices auto"));
  }
}

}  // namespace

PipelineAnswer best_pipeline(const PipelineCliOptions& o, const PipelineSolveInput& asked) {
  const auto start = std::chrono::steady_clock::now();
  PipelineAnswer answer;
  answer.schedule = schedule_of(o);
  PipelineSolveInput input = asked;
  input.search_chunks = chunks_searched(o, answer.schedule, input);
  const int64_t unit = o.stage_devices == "auto" ? split_unit(input) : 0;
  const std::vector<int64_t> given =
      o.stage_devices.empty() || unit > 0 ? std::vector<int64_t>{} : parse_stage_devices(o.stage_devices);
  answer.stage_counts = stage_counts(o, given, input.devices, unit);
  // The layers' least costs bound every split (split_candidates.h); for
  // one stage (one split) it is listed.
  const bool by_bounds = unit > 0 && *std::max_element(answer.stage_counts.begin(), answer.stage_counts.end()) > 1;
  std::vector<std::vector<std::vector<int64_t>>> splits;
  for (int s : answer.stage_counts) {
    answer.split_count += unit > 0 ? device_split_count(input.devices, s, unit) : 1.0;
    splits.push_back(by_bounds ? std::vector<std::vector<int64_t>>{}
                     : unit > 0 ? every_split(input.devices, s, unit)
                                : std::vector<std::vector<int64_t>>{given});
  }
  if (unit > 0 && answer.split_count == 0)  // one count given, more stages than units
    throw UsageError("--stage-devices auto: " + std::to_string(answer.stage_counts.front()) +
                     " stages need at least as many units of " + std::to_string(unit) + " devices" +
                     (unit > 1 ? " (a node's)" : "") + ", and " + std::to_string(input.devices) + " devices are " +
                     std::to_string(input.devices / unit));
  SearchCounts searched;
  PipelineCandidates candidates(input, answer.schedule, answer.stage_counts, splits, searched, by_bounds ? unit : 0);
  candidates.search();
  if (by_bounds) {
    candidates.add_splits_below(candidates.best_step());
    candidates.search();
  }
  std::optional<PipelineBest> best = candidates.take_best();
  answer.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!best) {
    if (searched.first_limit) std::rethrow_exception(searched.first_limit);  // nothing else searched runs or fits
    if (searched.tried == 0 && !searched.first_refusal.empty()) throw InputError(searched.first_refusal);
    if (searched.tried == 0 && !searched.first_mistake.empty()) throw UsageError(searched.first_mistake);
    throw ResourceError("no pipeline of the stages tried fits the memory cap: some stage of every partition needs "
                        "more than " + std::to_string(input.request.cap.value_or(0)) + " bytes (" +
                        format_gib(input.request.cap.value_or(0)) + " GiB) per device");
  }
  if (!std::isnan(best->outcome.lower_bound)) best->outcome.lower_bound = std::min(searched.lower_bound, best->outcome.step);
  answer.tried = searched.tried, answer.fitted = searched.fitted, answer.bounded_out = searched.bounded_out;
  answer.refused = searched.refused;
  answer.splits_listed = by_bounds ? candidates.splits_listed() : 0;
  answer.splits_left_out = searched.splits_left_out;
  answer.out_of_time = searched.out_of_time;
  answer.stage_solves = searched.stage_solves, answer.ranges = searched.ranges;
  for (const PipelineStage& stage : best->outcome.stages) answer.stage_devices.push_back(stage.devices);
  answer.outcome = std::move(best->outcome);
  answer.graph = std::move(best->graph);
  answer.setup = best->setup;
  answer.micro_batch_size = best->micro_batch_size;
  return answer;
}

namespace {

// Each of the model's chunks in order (chunk c = v S + k: stage k's v-th; a
// stage of contiguous layers is one chunk): its stage and where it begins.
std::vector<std::pair<size_t, int>> model_chunks(const PipelineOutcome& outcome) {
  const size_t stages = outcome.stages.size();
  const size_t v = std::max<size_t>(1, outcome.stages[0].chunks.size());
  std::vector<std::pair<size_t, int>> chunks;
  for (size_t c = 0; c < v * stages; ++c) {
    const PipelineStage& stage = outcome.stages[c % stages];
    chunks.push_back({c % stages, stage.chunks.empty() ? stage.begin : stage.chunks[c / stages].first});
  }
  return chunks;
}

// The sends of every chunk, one direction per micro-batch each: forward to
// the next chunk's stage, the gradient back to the one before's.
void chunk_sends(StepModel& step, const PipelineAnswer& answer, const CostModel& link) {
  const PipelineOutcome& outcome = answer.outcome;
  const std::vector<std::pair<size_t, int>> chunks = model_chunks(outcome);
  const auto across = [&](size_t from, size_t to) {
    const PipelineStage& a = outcome.stages[from];
    const PipelineStage& b = outcome.stages[to];
    return devices_across_nodes(a.first_device, a.devices, b.first_device, b.devices, link.devices_per_node());
  };
  const auto send = [&](size_t from, size_t to, int begin) {
    return send_seconds(crossing_elements(answer.graph, begin), outcome.stages[from].devices,
                        outcome.stages[to].devices, across(from, to), link);
  };
  const size_t stages = outcome.stages.size();
  for (size_t c = 0; c < chunks.size(); ++c) {
    SimStage& sim = step.stages[chunks[c].first];
    const bool last = c + 1 == chunks.size(), first = c == 0;
    const double forward = last ? 0.0 : send(chunks[c].first, chunks[c + 1].first, chunks[c + 1].second);
    const double backward = first ? 0.0 : send(chunks[c - 1].first, chunks[c].first, chunks[c].second);
    if (sim.chunks.empty()) {
      sim.send_forward = forward, sim.send_backward = backward;
    } else {
      sim.chunks[c / stages].send_forward = forward;
      sim.chunks[c / stages].send_backward = backward;
    }
  }
}

// One stage as the simulator's: its layers priced as its solve priced them,
// its chunks' first layers (interleaved), a tied weight's all-reduce last.
SimStage simulated_pipeline_stage(const PipelineAnswer& answer, const PipelineStage& stage,
                                  const PipelineSolveInput& input) {
  TrainingSetup setup = answer.setup;
  setup.activations_in_flight = stage.solve->in_flight;
  const std::unique_ptr<CostModel> model = input.make_model(setup, stage.devices);
  const Graph named = solved_stage_graph(answer.graph, stage);
  SimStage sim = simulated_stage(named, stage.solve->outcome.tables, stage.solve->outcome.solution.choice, *model,
                                 answer.setup.micro_batches);
  sim.first_device = stage.first_device;
  sim.devices = stage.devices;
  sim.across_nodes = devices_across_nodes(stage.first_device, stage.devices, stage.first_device, stage.devices,
                                          model->devices_per_node());
  size_t first = 0;
  for (const auto& [begin, end] : stage.chunks) {
    sim.chunks.push_back({first, 0, 0});
    first += static_cast<size_t>(end - begin);
  }
  double layers_work = 0;  // what the layers pay once per step; the rest of w: a tied weight's all-reduce
  for (const SimLayer& layer : sim.layers) layers_work += layer.step_communication + layer.step_compute;
  sim.layers.back().step_communication += std::max(0.0, stage.value.w - layers_work);
  return sim;
}

}  // namespace

StepModel pipeline_step_model(const PipelineAnswer& answer, const PipelineSolveInput& input,
                              const SimulateCliOptions& options) {
  const PipelineOutcome& outcome = answer.outcome;
  StepModel step;
  step.micro_batches = answer.setup.micro_batches;
  step.schedule = answer.schedule.kind == ScheduleKind::GPipe       ? SimSchedule::GPipe
                  : answer.schedule.kind == ScheduleKind::Interleaved ? SimSchedule::Interleaved
                                                                      : SimSchedule::OneFOneB;
  step.overlap = !options.no_overlap;
  step.bucket_words = bucket_words(options, answer.setup);
  step.unit = outcome.stages[0].solve->outcome.tables.unit;
  for (const PipelineStage& stage : outcome.stages) step.stages.push_back(simulated_pipeline_stage(answer, stage, input));
  chunk_sends(step, answer, *input.make_model(weighted(answer.setup, 1, 0.0), input.devices));
  return step;
}

namespace {

// The best pipeline as the simulator's step and its report.
int simulate_pipeline(const PipelineAnswer& answer, const PipelineSolveInput& input, const SimulateCliOptions& options,
                      std::ostream& out) {
  const PipelineOutcome& outcome = answer.outcome;
  const StepModel step = pipeline_step_model(answer, input, options);
  const std::string title = answer.graph.name + " on " + std::to_string(input.devices) + " devices in " +
                            std::to_string(outcome.stages.size()) + " pipeline stages (" + schedule_name(answer.schedule) + ")";
  return report_simulation(step, outcome.step, "the pipeline's formula (docs/pipeline.md)", title, options, out);
}

}  // namespace

namespace {

// "465 device splits in all", and how many of them the bounds ruled out unsearched.
std::string splits_searched_words(const PipelineAnswer& answer) {
  std::string words = format_seconds(answer.split_count) + " device splits in all";
  const double ruled_out = answer.split_count - static_cast<double>(answer.splits_listed);
  if (answer.splits_listed == 0 || ruled_out <= 0) return words;
  return words + " (" + format_seconds(ruled_out) + " ruled out by their layers' least costs" +
         (answer.splits_left_out ? ", or left out past " + std::to_string(kSplitsPerCount) +
                                       " of a stage count, their least bound kept in the lower bound"
                                 : std::string()) +
         ")";
}

}  // namespace

int run_pipeline_solve(const PipelineCliOptions& o, const PipelineSolveInput& input) {
  PipelineAnswer answer;
  {
    ProgressLine progress;  // on a terminal, cleared before anything is printed
    PipelineSolveInput watched = input;
    if (progress.active()) {
      watched.request.solve.dp.progress = [&progress](const DpProgress& done) { progress.update(done); };
      watched.request.on_phase = [](const char* phase) { set_progress_phase(phase); };
    }
    answer = best_pipeline(o, watched);
  }
  if (input.simulate && input.simulate->on) return simulate_pipeline(answer, input, *input.simulate, std::cout);
  std::ostringstream simulated;  // solve --simulate: said after the table
  if (input.simulate && input.simulate->after_solve) simulate_pipeline(answer, input, *input.simulate, simulated);
  const PipelineSchedule& schedule = answer.schedule;
  const std::vector<int64_t>& stage_devices = answer.stage_devices;
  const std::vector<int>& counts = answer.stage_counts;
  const double seconds = answer.seconds;
  const size_t answer_refused = answer.refused;
  const std::string split_words = splits_searched_words(answer);
  std::optional<PipelineBest> best =
      PipelineBest{std::move(answer.outcome), std::move(answer.graph), answer.setup, answer.micro_batch_size};
  SearchCounts searched;
  searched.tried = answer.tried, searched.fitted = answer.fitted, searched.bounded_out = answer.bounded_out;
  searched.stage_solves = answer.stage_solves, searched.ranges = answer.ranges;
  searched.out_of_time = answer.out_of_time;
  searched.lower_bound = best->outcome.lower_bound;
  const std::string unit = best->outcome.stages[0].solve->outcome.tables.unit;
  StrategyDocument document = pipeline_document(best->graph, best->outcome, best->setup, best->micro_batch_size,
                                                schedule, input.devices, input.request.cap);
  std::string plan_words;
  if (input.request.place)
    attach_plan(document, *best, pipeline_request(input, schedule, stage_devices, best->setup,
                                                  static_cast<int>(best->outcome.stages.size())),
                unit, plan_words);
  const std::string text = write_strategy(document);
  if (!input.out.empty()) write_text_file(input.out, text);
  if (input.json) std::cout << text;
  std::ostream& out = input.json ? std::cerr : std::cout;
  if (!input.json) print_stages(out, *best, schedule, input.devices, searched.lower_bound, unit, input.given_path);
  if (input.given && input.given->total_cost &&
      std::fabs(*input.given->total_cost - best->outcome.step) > 1e-9 * std::fabs(best->outcome.step))
    out << "note: the file records total_cost " << format_total(*input.given->total_cost, unit)
        << " (another machine, cost model or edit)\n";
  out << plan_words;
  if (input.given) {
    out << "priced the file's " << best->outcome.stages.size() << " stages in " << format_seconds(seconds) << " s\n";
    return 0;
  }
  out << "searched " << searched.tried << " pipelines of " << counts.size() << " stage counts x "
      << (o.stage_devices == "auto" ? split_words + " x " : std::string())
      << input.micro_batch_counts.size() << " micro-batch counts (" << searched.fitted << " fit"
      << (searched.bounded_out ? ", " + std::to_string(searched.bounded_out) + " bounded out: a bound reached the best step found"
                               : std::string())
      << (answer_refused ? ", " + std::to_string(answer_refused) + " past the DP's limits, their bounds kept" : std::string())
      << (searched.out_of_time ? ", " + std::to_string(searched.out_of_time) + " not searched: the time limit had passed, their bounds kept"
                               : std::string())
      << "): " << searched.stage_solves << " distinct stages solved for " << searched.ranges << " stage ranges in "
      << format_seconds(seconds) << " s\n";
  out << simulated.str();
  return 0;
}

}  // namespace pase
