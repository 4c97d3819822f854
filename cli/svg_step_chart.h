#pragma once
// A step chart written as a standalone SVG document: y as a step function of
// x (the best cost as the memory cap grows), its points marked (proven ones
// filled), an optional dashed lower-bound curve and an optional limit line
// (the machine's memory). No plotting dependency.
#include <limits>
#include <string>
#include <vector>

namespace pase {

struct StepChart {
  std::string title, x_label, y_label;
  std::vector<double> x, y;              ///< the steps' corners, x rising; y holds from x[i] up to x[i + 1]
  std::vector<double> bound_x, bound_y;  ///< a lower bound to draw dashed (empty: none)
  std::string series = "cost", bound_series = "lower bound";
  /// Per point: proven (a filled marker) or not (hollow); empty: all filled, no legend entry.
  std::vector<bool> proven;
  std::string proven_series = "proven optimal at its memory", unproven_series = "found by search";
  /// A limit on x to draw as a vertical line (the machine's memory), with its
  /// label; NaN: none. The axis stretches to show it when that leaves the
  /// data at least half the width; else the legend says where it is.
  double limit_x = std::numeric_limits<double>::quiet_NaN();
  std::string limit_label;  ///< in the legend
  std::string limit_tag;    ///< beside the line (its value)
};

/// The chart as an SVG document.
[[nodiscard]] std::string render_svg(const StepChart& chart);

}  // namespace pase
