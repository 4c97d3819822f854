#include "simulate/step_views.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/json_text.h"

namespace pase {
namespace {

std::string task_name(const StepModel& model, const SimTask& task) {
  const SimStage& stage = model.stages[static_cast<size_t>(task.stage)];
  const std::string layer = task.layer >= 0 ? stage.layers[static_cast<size_t>(task.layer)].name : std::string();
  switch (task.kind) {
    case TaskKind::Forward: return "F " + layer;
    case TaskKind::Backward: return "B " + layer;
    case TaskKind::Send: return "send";
    case TaskKind::GradientSync: return "gradient sync " + layer;
    case TaskKind::Update: return "update " + layer;
    case TaskKind::Gather: return (task.before_backward ? "gather for B " : "gather for F ") + layer;
    case TaskKind::Scatter: return "reduce-scatter " + layer;
  }
  return layer;
}

// A send's receiving stage: forward sends go on, backward sends back (round
// the stages, as an interleaved pipeline's last stage hands on to the first).
std::string send_name(const TaskGraph& graph, size_t i, int stages) {
  const SimTask& task = graph.tasks()[i];
  const SimTask& before = graph.tasks()[static_cast<size_t>(task.after.front())];
  const int to = (before.kind == TaskKind::Forward ? task.stage + 1 : task.stage - 1 + stages) % stages;
  return (before.kind == TaskKind::Forward ? "send activations to stage " : "send gradients to stage ") + std::to_string(to);
}

// The streams some task with work runs on (compute always): the trace's threads, the timeline's rows.
std::vector<bool> used_streams(const TaskGraph& graph) {
  std::vector<bool> used(kStreamKinds, false);
  used[static_cast<size_t>(StreamKind::Compute)] = true;
  for (const SimTask& task : graph.tasks())
    if (task.duration > 0) used[static_cast<size_t>(task.stream)] = true;
  return used;
}

}  // namespace

std::string chrome_trace(const StepModel& model, const TaskGraph& graph, const SimulatedStep& simulated,
                         const std::string& title) {
  const double scale = model.unit == "seconds" ? 1e6 : 1.0;  // trace times are microseconds
  std::string out = "{\"traceEvents\": [\n";
  bool first = true;
  const auto open_event = [&]() {
    out += first ? "  " : ",\n  ";
    first = false;
  };
  const std::vector<bool> used = used_streams(graph);
  for (size_t k = 0; k < model.stages.size(); ++k) {
    const SimStage& stage = model.stages[k];
    open_event();
    out += "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": " + std::to_string(k) + ", \"args\": {\"name\": ";
    append_json_string(out, "stage " + std::to_string(k) + " (devices " + std::to_string(stage.first_device) + "-" +
                                std::to_string(stage.first_device + stage.devices - 1) + ")");
    out += "}}";
    for (int s = 0; s < kStreamKinds; ++s) {
      if (!used[static_cast<size_t>(s)]) continue;
      open_event();
      out += "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": " + std::to_string(k) + ", \"tid\": " +
             std::to_string(s) + ", \"args\": {\"name\": \"" + stream_name(static_cast<StreamKind>(s)) + "\"}}";
    }
  }
  for (size_t i = 0; i < graph.size(); ++i) {
    const SimTask& task = graph.tasks()[i];
    if (task.duration <= 0) continue;
    open_event();
    out += "{\"name\": ";
    append_json_string(out, task.kind == TaskKind::Send ? send_name(graph, i, static_cast<int>(model.stages.size())) : task_name(model, task));
    out += ", \"cat\": \"" + std::string(task_kind_name(task.kind)) + "\", \"ph\": \"X\", \"ts\": ";
    append_json_number(out, simulated.start[i] * scale);
    out += ", \"dur\": ";
    append_json_number(out, task.duration * scale);
    out += ", \"pid\": " + std::to_string(task.stage) + ", \"tid\": " + std::to_string(static_cast<int>(task.stream)) +
           ", \"args\": {\"micro_batch\": " + std::to_string(task.micro_batch) + ", \"layer\": ";
    append_json_string(out, task.layer >= 0 ? model.stages[static_cast<size_t>(task.stage)].layers[static_cast<size_t>(task.layer)].name : "");
    out += "}}";
  }
  out += "\n], \"displayTimeUnit\": \"ms\", \"otherData\": {\"title\": ";
  append_json_string(out, title);
  out += ", \"unit\": ";
  append_json_string(out, model.unit == "seconds" ? "microseconds" : model.unit);
  out += ", \"step\": ";
  append_json_number(out, simulated.step);
  out += "}}\n";
  return out;
}

namespace {

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

std::string number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

const char* colour(TaskKind kind) {
  switch (kind) {
    case TaskKind::Forward: return "#4e79a7";
    case TaskKind::Backward: return "#f28e2b";
    case TaskKind::Send: return "#59a14f";
    case TaskKind::GradientSync: return "#e15759";
    case TaskKind::Update: return "#b07aa1";
    case TaskKind::Gather: return "#76b7b2";
    case TaskKind::Scatter: return "#edc948";
  }
  return "#999999";
}

std::string time_label(double value, const std::string& unit) {
  char buffer[48];
  if (unit == "seconds") {
    if (value >= 1) std::snprintf(buffer, sizeof buffer, "%.3g s", value);
    else if (value >= 1e-3) std::snprintf(buffer, sizeof buffer, "%.3g ms", value * 1e3);
    else std::snprintf(buffer, sizeof buffer, "%.3g us", value * 1e6);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.3g", value);
  }
  return buffer;
}

}  // namespace

std::string timeline_svg(const StepModel& model, const TaskGraph& graph, const SimulatedStep& simulated,
                         const std::string& title, int width) {
  const double left = 150, right = 20, top = 50, row = 18, gap = 8;
  const double plot = width - left - right;
  const double step = simulated.step > 0 ? simulated.step : 1;
  const size_t stages = model.stages.size();
  // A row per stream some stage uses (compute always), in the streams' order.
  const std::vector<bool> used = used_streams(graph);
  std::vector<int> row_of(kStreamKinds, -1);
  int rows = 0;
  for (size_t s = 0; s < used.size(); ++s)
    if (used[s]) row_of[s] = rows++;
  const double height = top + static_cast<double>(stages) * (rows * row + gap) + 60;
  std::string out = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                    number(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out += "<text x=\"" + number(left) + "\" y=\"20\" font-size=\"14\">" + escaped(title) + "</text>\n";
  const auto row_y = [&](size_t k, int s) {
    return top + static_cast<double>(k) * (rows * row + gap) + row_of[static_cast<size_t>(s)] * row;
  };
  for (size_t k = 0; k < stages; ++k)
    for (int s = 0; s < kStreamKinds; ++s) {
      if (row_of[static_cast<size_t>(s)] < 0) continue;
      const double y = row_y(k, s);
      out += "<rect x=\"" + number(left) + "\" y=\"" + number(y) + "\" width=\"" + number(plot) + "\" height=\"" +
             number(row - 2) + "\" fill=\"#f4f4f4\"/>\n";
      out += "<text x=\"" + number(left - 6) + "\" y=\"" + number(y + row - 6) + "\" text-anchor=\"end\">stage " +
             std::to_string(k) + " " + stream_name(static_cast<StreamKind>(s)) + "</text>\n";
    }
  // Tasks in order per row, a run of one kind narrower than half a pixel drawn as one.
  struct Run {
    double from = 0, to = 0;
    TaskKind kind = TaskKind::Forward;
    int64_t micro_batch = -1;
    bool open = false;
  };
  std::vector<Run> runs(stages * kStreamKinds);
  const auto flush = [&](size_t r) {
    Run& run = runs[r];
    if (!run.open) return;
    const double x = left + run.from / step * plot, w = std::max(0.5, (run.to - run.from) / step * plot);
    out += "<rect x=\"" + number(x) + "\" y=\"" + number(row_y(r / kStreamKinds, static_cast<int>(r % kStreamKinds))) +
           "\" width=\"" + number(w) + "\" height=\"" + number(row - 2) + "\" fill=\"" + colour(run.kind) +
           "\" stroke=\"white\" stroke-width=\"0.5\"/>\n";
    run.open = false;
  };
  for (size_t i = 0; i < graph.size(); ++i) {
    const SimTask& task = graph.tasks()[i];
    if (task.duration <= 0) continue;
    const size_t r = static_cast<size_t>(task.stage) * kStreamKinds + static_cast<size_t>(task.stream);
    Run& run = runs[r];
    const double half_pixel = 0.5 * step / plot;
    // One micro-batch's pass is one run (its layers), a pass narrower than half a pixel joins the next.
    if (run.open && run.kind == task.kind && simulated.start[i] - run.to < half_pixel &&
        (run.micro_batch == task.micro_batch || run.to - run.from < half_pixel)) {
      run.to = simulated.end[i];
      continue;
    }
    flush(r);
    run = {simulated.start[i], simulated.end[i], task.kind, task.micro_batch, true};
  }
  for (size_t r = 0; r < runs.size(); ++r) flush(r);
  // The time axis and the legend.
  const double axis = top + static_cast<double>(stages) * (rows * row + gap) + 4;
  for (int tick = 0; tick <= 4; ++tick) {
    const double x = left + plot * tick / 4;
    out += "<line x1=\"" + number(x) + "\" y1=\"" + number(axis) + "\" x2=\"" + number(x) + "\" y2=\"" + number(axis + 5) +
           "\" stroke=\"black\"/>\n<text x=\"" + number(x) + "\" y=\"" + number(axis + 17) + "\" text-anchor=\"middle\">" +
           escaped(time_label(step * tick / 4, model.unit)) + "</text>\n";
  }
  double x = left;
  for (TaskKind kind : {TaskKind::Forward, TaskKind::Backward, TaskKind::Send, TaskKind::GradientSync, TaskKind::Update,
                        TaskKind::Gather, TaskKind::Scatter}) {
    const bool zero_work = kind == TaskKind::Gather || kind == TaskKind::Scatter;  // in the legend only where there is some
    if (zero_work && std::none_of(graph.tasks().begin(), graph.tasks().end(),
                                  [&](const SimTask& task) { return task.kind == kind && task.duration > 0; }))
      continue;
    out += "<rect x=\"" + number(x) + "\" y=\"" + number(axis + 28) + "\" width=\"12\" height=\"12\" fill=\"" +
           colour(kind) + "\"/>\n<text x=\"" + number(x + 16) + "\" y=\"" + number(axis + 38) + "\">" +
           task_kind_name(kind) + "</text>\n";
    x += 130;
  }
  return out + "</svg>\n";
}

}  // namespace pase
