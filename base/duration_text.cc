#include "base/duration_text.h"

#include <cstdio>

namespace pase {

std::string format_duration(double seconds) {
  char text[32];
  if (seconds >= 1) std::snprintf(text, sizeof text, "%.3g s", seconds);
  else if (seconds >= 1e-3) std::snprintf(text, sizeof text, "%.3g ms", seconds * 1e3);
  else if (seconds >= 1e-6) std::snprintf(text, sizeof text, "%.3g us", seconds * 1e6);
  else std::snprintf(text, sizeof text, "%.3g ns", seconds * 1e9);
  return text;
}

}  // namespace pase
