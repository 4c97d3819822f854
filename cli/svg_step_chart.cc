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

}  // namespace

std::string render_svg(const StepChart& chart) {
  const double width = 900, height = 560;
  const double left = 90, right = 40, top = 50, bottom = 70;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double x_lo = chart.x.empty() ? 0 : chart.x.front(), x_hi = chart.x.empty() ? 1 : chart.x.back();
  double y_hi = 0;
  for (double y : chart.y) y_hi = std::max(y_hi, y);
  // The last step runs on to the right edge: past the last point, a larger cap changes nothing.
  const Axis xa = make_axis(x_lo, x_hi, false), ya = make_axis(0, y_hi, true);
  auto x_of = [&](double x) { return left + plot_w * (x - xa.lo) / (xa.hi - xa.lo); };
  auto y_of = [&](double y) { return top + plot_h * (1.0 - (y - ya.lo) / (ya.hi - ya.lo)); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">"
      << svg_escape(chart.title) << "</text>\n";
  for (double v = ya.lo; v <= ya.hi + ya.step / 2; v += ya.step) {
    svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(y_of(v)) << "\" x2=\"" << num(left + plot_w) << "\" y2=\""
        << num(y_of(v)) << "\" stroke=\"#dddddd\"/>\n";
    svg << "<text x=\"" << num(left - 6) << "\" y=\"" << num(y_of(v) + 4) << "\" text-anchor=\"end\">" << label(v)
        << "</text>\n";
  }
  for (double v = xa.lo; v <= xa.hi + xa.step / 2; v += xa.step) {
    svg << "<line x1=\"" << num(x_of(v)) << "\" y1=\"" << num(top) << "\" x2=\"" << num(x_of(v)) << "\" y2=\""
        << num(top + plot_h) << "\" stroke=\"#eeeeee\"/>\n";
    svg << "<text x=\"" << num(x_of(v)) << "\" y=\"" << num(top + plot_h + 18) << "\" text-anchor=\"middle\">"
        << label(v) << "</text>\n";
  }
  // The lower bound, dashed.
  if (!chart.bound_x.empty()) {
    svg << "<polyline fill=\"none\" stroke=\"#D55E00\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\" points=\"";
    for (size_t i = 0; i < chart.bound_x.size(); ++i)
      svg << (i ? " " : "") << num(x_of(chart.bound_x[i])) << "," << num(y_of(chart.bound_y[i]));
    svg << "\"/>\n";
  }
  // The steps: flat from each point to the next one's memory, then down.
  if (!chart.x.empty()) {
    svg << "<polyline fill=\"none\" stroke=\"#0072B2\" stroke-width=\"2\" points=\"";
    for (size_t i = 0; i < chart.x.size(); ++i) {
      svg << (i ? " " : "") << num(x_of(chart.x[i])) << "," << num(y_of(chart.y[i]));
      const double next = i + 1 < chart.x.size() ? chart.x[i + 1] : xa.hi;
      svg << " " << num(x_of(next)) << "," << num(y_of(chart.y[i]));
    }
    svg << "\"/>\n";
    // Markers only where they stay apart; hundreds of points read better as the line alone.
    for (size_t i = 0; i < chart.x.size() && chart.x.size() <= 80; ++i)
      svg << "<circle cx=\"" << num(x_of(chart.x[i])) << "\" cy=\"" << num(y_of(chart.y[i]))
          << "\" r=\"3\" fill=\"#0072B2\"><title>" << label(chart.x[i]) << ", " << label(chart.y[i])
          << "</title></circle>\n";
  }
  // Axes, labels and legend.
  svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(top) << "\" x2=\"" << num(left) << "\" y2=\""
      << num(top + plot_h) << "\" stroke=\"black\"/>\n";
  svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(top + plot_h) << "\" x2=\"" << num(left + plot_w)
      << "\" y2=\"" << num(top + plot_h) << "\" stroke=\"black\"/>\n";
  svg << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(height - 22) << "\" text-anchor=\"middle\">"
      << svg_escape(chart.x_label) << "</text>\n";
  svg << "<text transform=\"translate(22," << num(top + plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
      << svg_escape(chart.y_label) << "</text>\n";
  // Legend, top right, as wide as its longer text (about 7 px a character at 12 px).
  const size_t longest = std::max(chart.series.size(), chart.bound_x.empty() ? 0 : chart.bound_series.size());
  const double legend_w = 52 + 7.0 * static_cast<double>(longest);
  const double lx = left + plot_w - legend_w, ly = top + 16;
  svg << "<rect x=\"" << num(lx - 10) << "\" y=\"" << num(ly - 14) << "\" width=\"" << num(legend_w) << "\" height=\""
      << (chart.bound_x.empty() ? "26" : "46") << "\" fill=\"white\" stroke=\"#cccccc\"/>\n";
  svg << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly - 4) << "\" x2=\"" << num(lx + 24) << "\" y2=\"" << num(ly - 4)
      << "\" stroke=\"#0072B2\" stroke-width=\"2\"/>\n";
  svg << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(ly) << "\">" << svg_escape(chart.series) << "</text>\n";
  if (!chart.bound_x.empty()) {
    svg << "<line x1=\"" << num(lx) << "\" y1=\"" << num(ly + 16) << "\" x2=\"" << num(lx + 24) << "\" y2=\""
        << num(ly + 16) << "\" stroke=\"#D55E00\" stroke-width=\"1.5\" stroke-dasharray=\"6,4\"/>\n";
    svg << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(ly + 20) << "\">" << svg_escape(chart.bound_series)
        << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace pase
