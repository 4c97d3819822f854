#pragma once
// A grouped bar chart written as a standalone SVG document (like the PaSE
// paper's Fig. 6): one group per x value, one bar per series, a legend, axis
// labels and an optional dashed reference line. No plotting dependency.
#include <string>
#include <vector>

namespace pase {

struct BarChart {
  std::string title, x_label, y_label;
  std::vector<std::string> groups;          ///< x categories ("4", "8", ...)
  std::vector<std::string> series;          ///< one bar per series in every group, in legend order
  std::vector<std::vector<double>> values;  ///< [group][series]; NaN: no bar (series does not apply)
  double reference = 0.0;                   ///< draw a dashed line at this y (0: none)
};

/// The chart as an SVG document.
[[nodiscard]] std::string render_svg(const BarChart& chart);

/// `text` with &, <, > and " escaped for SVG text and attributes.
[[nodiscard]] std::string svg_escape(const std::string& text);

/// A coordinate as SVG writes it (one decimal).
[[nodiscard]] std::string svg_number(double value);
/// A tick label (%g).
[[nodiscard]] std::string svg_label(double value);
/// A 1-2-2.5-5 tick step that gives at most about six intervals over `span`.
[[nodiscard]] double svg_tick_step(double span);

}  // namespace pase
