#include "cli/svg_step_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "cli/svg_chart.h"

namespace pase {
namespace {

std::string num(double value) { return svg_number(value); }
std::string label(double value) { return svg_label(value); }

constexpr const char* kSeriesColour = "#0072B2";
constexpr const char* kBoundColour = "#D55E00";
constexpr const char* kLimitColour = "#555555";
constexpr size_t kMostMarkers = 80;  // past this many points the line alone reads better

// An axis from `lo` to `hi` on whole tick steps, with a little room.
struct Axis {
  double lo, hi, step;
};

Axis make_axis(double lo, double hi, bool from_zero) {
  if (from_zero) lo = 0;
  if (!(hi > lo)) hi = lo + (lo != 0 ? std::abs(lo) * 0.1 : 1.0);
  const double pad = (hi - lo) * 0.05;
  const double step = svg_tick_step(hi - lo + 2 * pad);
  Axis axis;
  axis.step = step;
  axis.lo = from_zero ? 0 : std::floor((lo - pad) / step) * step;
  axis.hi = std::ceil((hi + pad) / step) * step;
  return axis;
}

// The plot area and its axes.
struct Frame {
  double width = 900, height = 560, left = 90, right = 40, top = 50, bottom = 70;
  double plot_w = 0, plot_h = 0;
  Axis xa{}, ya{};
  bool limit_shown = false;  // the limit line within the x axis
  [[nodiscard]] double x_of(double x) const { return left + plot_w * (x - xa.lo) / (xa.hi - xa.lo); }
  [[nodiscard]] double y_of(double y) const { return top + plot_h * (1.0 - (y - ya.lo) / (ya.hi - ya.lo)); }
};

Frame make_frame(const StepChart& chart) {
  Frame f;
  f.plot_w = f.width - f.left - f.right;
  f.plot_h = f.height - f.top - f.bottom;
  double x_lo = chart.x.empty() ? 0 : chart.x.front(), x_hi = chart.x.empty() ? 1 : chart.x.back();
  // The limit stretches the axis only while the data keeps half the width.
  const double span = std::max(x_hi - x_lo, std::abs(x_hi) * 1e-3);
  if (std::isfinite(chart.limit_x) && chart.limit_x <= x_hi + span && chart.limit_x >= x_lo - span) {
    f.limit_shown = true;
    x_lo = std::min(x_lo, chart.limit_x);
    x_hi = std::max(x_hi, chart.limit_x);
  }
  double y_hi = 0;
  for (double y : chart.y) y_hi = std::max(y_hi, y);
  f.xa = make_axis(x_lo, x_hi, false);
  f.ya = make_axis(0, y_hi, true);
  return f;
}

void grid(std::ostringstream& svg, const Frame& f) {
  for (double v = f.ya.lo; v <= f.ya.hi + f.ya.step / 2; v += f.ya.step) {
    svg << "<line x1=\"" << num(f.left) << "\" y1=\"" << num(f.y_of(v)) << "\" x2=\"" << num(f.left + f.plot_w)
        << "\" y2=\"" << num(f.y_of(v)) << "\" stroke=\"#dddddd\"/>\n";
    svg << "<text x=\"" << num(f.left - 6) << "\" y=\"" << num(f.y_of(v) + 4) << "\" text-anchor=\"end\">" << label(v)
        << "</text>\n";
  }
  for (double v = f.xa.lo; v <= f.xa.hi + f.xa.step / 2; v += f.xa.step) {
    svg << "<line x1=\"" << num(f.x_of(v)) << "\" y1=\"" << num(f.top) << "\" x2=\"" << num(f.x_of(v)) << "\" y2=\""
        << num(f.top + f.plot_h) << "\" stroke=\"#eeeeee\"/>\n";
    svg << "<text x=\"" << num(f.x_of(v)) << "\" y=\"" << num(f.top + f.plot_h + 18) << "\" text-anchor=\"middle\">"
        << label(v) << "</text>\n";
  }
}

void bound_line(std::ostringstream& svg, const StepChart& chart, const Frame& f) {
  if (chart.bound_x.empty()) return;
  svg << "<polyline fill=\"none\" stroke=\"" << kBoundColour << "\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\" points=\"";
  for (size_t i = 0; i < chart.bound_x.size(); ++i)
    svg << (i ? " " : "") << num(f.x_of(chart.bound_x[i])) << "," << num(f.y_of(chart.bound_y[i]));
  svg << "\"/>\n";
}

// The steps: flat from each point to the next one's memory, then down; the
// points marked, proven ones filled.
void steps(std::ostringstream& svg, const StepChart& chart, const Frame& f) {
  if (chart.x.empty()) return;
  svg << "<polyline fill=\"none\" stroke=\"" << kSeriesColour << "\" stroke-width=\"2\" points=\"";
  for (size_t i = 0; i < chart.x.size(); ++i) {
    svg << (i ? " " : "") << num(f.x_of(chart.x[i])) << "," << num(f.y_of(chart.y[i]));
    const double next = i + 1 < chart.x.size() ? chart.x[i + 1] : f.xa.hi;
    svg << " " << num(f.x_of(next)) << "," << num(f.y_of(chart.y[i]));
  }
  svg << "\"/>\n";
  // Markers only where they stay apart; hundreds of points read better as the line alone.
  for (size_t i = 0; i < chart.x.size() && chart.x.size() <= kMostMarkers; ++i) {
    const bool proven = chart.proven.empty() || chart.proven[i];
    svg << "<circle cx=\"" << num(f.x_of(chart.x[i])) << "\" cy=\"" << num(f.y_of(chart.y[i])) << "\" r=\"3.5\" fill=\""
        << (proven ? kSeriesColour : "white") << "\" stroke=\"" << kSeriesColour << "\" stroke-width=\"1.5\"><title>"
        << label(chart.x[i]) << ", " << label(chart.y[i]) << "</title></circle>\n";
  }
}

void limit_line(std::ostringstream& svg, const StepChart& chart, const Frame& f) {
  if (!f.limit_shown) return;
  const double x = f.x_of(chart.limit_x);
  svg << "<line x1=\"" << num(x) << "\" y1=\"" << num(f.top) << "\" x2=\"" << num(x) << "\" y2=\"" << num(f.top + f.plot_h)
      << "\" stroke=\"" << kLimitColour << "\" stroke-width=\"1.5\" stroke-dasharray=\"2,3\"/>\n";
  // The tag on the side with more room.
  const bool left_half = x < f.left + f.plot_w / 2;
  svg << "<text x=\"" << num(left_half ? x + 4 : x - 4) << "\" y=\"" << num(f.top + f.plot_h - 8) << "\" text-anchor=\""
      << (left_half ? "start" : "end") << "\" fill=\"" << kLimitColour << "\">" << svg_escape(chart.limit_tag)
      << "</text>\n";
}

// One legend row: a line (solid, dashed, dotted), a marker (filled or hollow) or nothing, then its text.
struct LegendRow {
  std::string text;
  std::string key;  // "line", "bound", "limit", "proven", "unproven", "" (text only)
};

void legend(std::ostringstream& svg, const StepChart& chart, const Frame& f) {
  std::vector<LegendRow> rows = {{chart.series, "line"}};
  if (!chart.bound_x.empty()) rows.push_back({chart.bound_series, "bound"});
  const bool marked = chart.x.size() <= kMostMarkers;
  if (marked && std::find(chart.proven.begin(), chart.proven.end(), false) != chart.proven.end())
    rows.push_back({chart.proven_series, "proven"}), rows.push_back({chart.unproven_series, "unproven"});
  if (std::isfinite(chart.limit_x))
    rows.push_back(f.limit_shown ? LegendRow{chart.limit_label, "limit"}
                                 : LegendRow{chart.limit_label + (chart.limit_x > f.xa.hi ? ", right of the chart"
                                                                                          : ", left of the chart"),
                                             "limit"});
  size_t longest = 0;
  for (const LegendRow& row : rows) longest = std::max(longest, row.text.size());
  // Top right, as wide as its longest text (about 7 px a character at 12 px).
  const double legend_w = 52 + 7.0 * static_cast<double>(longest);
  const double lx = f.left + f.plot_w - legend_w, ly = f.top + 16;
  svg << "<rect x=\"" << num(lx - 10) << "\" y=\"" << num(ly - 14) << "\" width=\"" << num(legend_w) << "\" height=\""
      << num(6 + 20.0 * static_cast<double>(rows.size())) << "\" fill=\"white\" stroke=\"#cccccc\"/>\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const double y = ly + 20.0 * static_cast<double>(i);
    const std::string& key = rows[i].key;
    if (key == "line" || key == "bound" || key == "limit")
      svg << "<line x1=\"" << num(lx) << "\" y1=\"" << num(y - 4) << "\" x2=\"" << num(lx + 24) << "\" y2=\""
          << num(y - 4) << "\" stroke=\"" << (key == "line" ? kSeriesColour : key == "bound" ? kBoundColour : kLimitColour)
          << "\" stroke-width=\"" << (key == "line" ? "2" : "1.5") << "\""
          << (key == "bound" ? " stroke-dasharray=\"6,4\"" : key == "limit" ? " stroke-dasharray=\"2,3\"" : "") << "/>\n";
    else if (key == "proven" || key == "unproven")
      svg << "<circle cx=\"" << num(lx + 12) << "\" cy=\"" << num(y - 4) << "\" r=\"3.5\" fill=\""
          << (key == "proven" ? kSeriesColour : "white") << "\" stroke=\"" << kSeriesColour << "\" stroke-width=\"1.5\"/>\n";
    svg << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(y) << "\">" << svg_escape(rows[i].text) << "</text>\n";
  }
}

}  // namespace

std::string render_svg(const StepChart& chart) {
  const Frame f = make_frame(chart);
  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << f.width << "\" height=\"" << f.height
      << "\" viewBox=\"0 0 " << f.width << " " << f.height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << num(f.left + f.plot_w / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">"
      << svg_escape(chart.title) << "</text>\n";
  grid(svg, f);
  bound_line(svg, chart, f);
  steps(svg, chart, f);
  limit_line(svg, chart, f);
  // Axes and their labels.
  svg << "<line x1=\"" << num(f.left) << "\" y1=\"" << num(f.top) << "\" x2=\"" << num(f.left) << "\" y2=\""
      << num(f.top + f.plot_h) << "\" stroke=\"black\"/>\n";
  svg << "<line x1=\"" << num(f.left) << "\" y1=\"" << num(f.top + f.plot_h) << "\" x2=\"" << num(f.left + f.plot_w)
      << "\" y2=\"" << num(f.top + f.plot_h) << "\" stroke=\"black\"/>\n";
  svg << "<text x=\"" << num(f.left + f.plot_w / 2) << "\" y=\"" << num(f.height - 22) << "\" text-anchor=\"middle\">"
      << svg_escape(chart.x_label) << "</text>\n";
  svg << "<text transform=\"translate(22," << num(f.top + f.plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
      << svg_escape(chart.y_label) << "</text>\n";
  legend(svg, chart, f);
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace pase
