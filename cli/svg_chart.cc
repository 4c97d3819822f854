#include "cli/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

namespace pase {
namespace {

// Colour-blind-safe palette (Okabe-Ito), cycled if there are more series.
const char* const kColours[] = {"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000"};

}  // namespace

std::string svg_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

std::string svg_label(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", value);
  return buffer;
}

double svg_tick_step(double span) {
  double magnitude = std::pow(10.0, std::floor(std::log10(span)));
  for (double factor : {0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 2.5, 5.0, 10.0})
    if (span / (factor * magnitude) <= 6.0) return factor * magnitude;
  return 10.0 * magnitude;
}

namespace {

std::string escape(const std::string& text) { return svg_escape(text); }

std::string num(double value) { return svg_number(value); }
std::string label(double value) { return svg_label(value); }

double tick_step(double top) { return svg_tick_step(top); }

}  // namespace

std::string render_svg(const BarChart& chart) {
  const double width = 760, height = 440;
  const double left = 70, right = 170, top = 50, bottom = 60;
  const double plot_w = width - left - right, plot_h = height - top - bottom;

  double highest = chart.reference;
  for (const auto& row : chart.values)
    for (double v : row)
      if (std::isfinite(v)) highest = std::max(highest, v);
  if (!(highest > 0)) highest = 1.0;
  const double step = tick_step(highest * 1.05);
  const double y_max = std::ceil(highest * 1.05 / step) * step;
  auto y_of = [&](double v) { return top + plot_h * (1.0 - v / y_max); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"28\" text-anchor=\"middle\" font-size=\"15\">"
      << escape(chart.title) << "</text>\n";

  // Grid lines and y tick labels.
  for (double v = 0; v <= y_max + step / 2; v += step) {
    svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(y_of(v)) << "\" x2=\"" << num(left + plot_w) << "\" y2=\""
        << num(y_of(v)) << "\" stroke=\"#dddddd\"/>\n";
    svg << "<text x=\"" << num(left - 6) << "\" y=\"" << num(y_of(v) + 4) << "\" text-anchor=\"end\">" << label(v)
        << "</text>\n";
  }

  // Bars: each group takes an equal slot; 80% of it is split among the series.
  const size_t groups = chart.groups.size(), series = std::max<size_t>(chart.series.size(), 1);
  const double slot = groups ? plot_w / static_cast<double>(groups) : plot_w;
  const double bar_w = slot * 0.8 / static_cast<double>(series);
  for (size_t g = 0; g < groups; ++g) {
    double x0 = left + slot * static_cast<double>(g) + slot * 0.1;
    for (size_t s = 0; s < chart.series.size() && g < chart.values.size() && s < chart.values[g].size(); ++s) {
      double v = chart.values[g][s];
      if (!std::isfinite(v)) continue;
      double x = x0 + bar_w * static_cast<double>(s), y = y_of(std::max(v, 0.0));
      svg << "<rect class=\"bar\" x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(bar_w - 1)
          << "\" height=\"" << num(top + plot_h - y) << "\" fill=\"" << kColours[s % 8] << "\"><title>"
          << escape(chart.groups[g] + " " + chart.series[s] + ": " + label(v)) << "</title></rect>\n";
      char text[32];
      std::snprintf(text, sizeof text, bar_w < 28 ? "%.1f" : "%.2f", v);  // narrow bars: keep labels apart
      svg << "<text x=\"" << num(x + bar_w / 2) << "\" y=\"" << num(y - 3)
          << "\" text-anchor=\"middle\" font-size=\"8\">" << text << "</text>\n";
    }
    svg << "<text x=\"" << num(left + slot * (static_cast<double>(g) + 0.5)) << "\" y=\"" << num(top + plot_h + 18)
        << "\" text-anchor=\"middle\">" << escape(chart.groups[g]) << "</text>\n";
  }
  if (chart.reference > 0)
    svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(y_of(chart.reference)) << "\" x2=\"" << num(left + plot_w)
        << "\" y2=\"" << num(y_of(chart.reference)) << "\" stroke=\"#444444\" stroke-dasharray=\"5,4\"/>\n";

  // Axes and their labels.
  svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(top) << "\" x2=\"" << num(left) << "\" y2=\""
      << num(top + plot_h) << "\" stroke=\"black\"/>\n";
  svg << "<line x1=\"" << num(left) << "\" y1=\"" << num(top + plot_h) << "\" x2=\"" << num(left + plot_w)
      << "\" y2=\"" << num(top + plot_h) << "\" stroke=\"black\"/>\n";
  svg << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(height - 16) << "\" text-anchor=\"middle\">"
      << escape(chart.x_label) << "</text>\n";
  svg << "<text transform=\"translate(20," << num(top + plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\">"
      << escape(chart.y_label) << "</text>\n";

  // Legend.
  for (size_t s = 0; s < chart.series.size(); ++s) {
    double y = top + 10 + 22.0 * static_cast<double>(s);
    svg << "<rect x=\"" << num(left + plot_w + 20) << "\" y=\"" << num(y - 10) << "\" width=\"14\" height=\"14\" fill=\""
        << kColours[s % 8] << "\"/>\n";
    svg << "<text x=\"" << num(left + plot_w + 40) << "\" y=\"" << num(y + 2) << "\">" << escape(chart.series[s])
        << "</text>\n";
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace pase
