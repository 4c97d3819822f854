#include "solve/policy.h"

#include <unistd.h>

namespace pase {

uint64_t default_table_limit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return uint64_t{4} << 30;
  return static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) / 2;
}

SolveOptions default_solve_options() {
  SolveOptions options;
  options.dp.max_table_bytes = default_table_limit();
  return options;
}

}  // namespace pase
