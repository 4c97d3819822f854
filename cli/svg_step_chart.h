#pragma once
// A step chart written as a standalone SVG document: y as a step function of
// x (the best cost as the memory cap grows), its points marked, and an
// optional dashed lower-bound curve. No plotting dependency.
#include <string>
#include <vector>

namespace pase {

struct StepChart {
  std::string title, x_label, y_label;
  std::vector<double> x, y;              ///< the steps' corners, x rising; y holds from x[i] up to x[i + 1]
  std::vector<double> bound_x, bound_y;  ///< a lower bound to draw dashed (empty: none)
  std::string series = "cost", bound_series = "lower bound";
};

/// The chart as an SVG document.
[[nodiscard]] std::string render_svg(const StepChart& chart);

}  // namespace pase
