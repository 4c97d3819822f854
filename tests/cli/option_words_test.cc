// Library messages name no command-line flags: an error about an option of a
// library call says it in the library's words and carries the option's field
// name, and each command spells it as its own flag.
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/exit_status.h"
#include "base/error.h"
#include "dp/dp.h"
#include "dp/ordering.h"
#include "test_support.h"

using namespace pase;

namespace {

// Two vertices joined by an edge, a handful of configurations each.
Objective pair_objective() {
  Objective objective;
  objective.vertex_cost = {{1.0, 2.0, 3.0}, {3.0, 2.0, 1.0}};
  PairCost pair;
  pair.u = 0;
  pair.v = 1;
  pair.u_class = pair.v_class = {0, 1, 2};
  pair.u_classes = pair.v_classes = 3;
  pair.cost = std::make_shared<std::vector<double>>(9, 1.0);
  objective.pairs.push_back(pair);
  return objective;
}

// The string literals of a C++ source (comments skipped; raw strings included).
std::vector<std::string> string_literals(const std::string& text) {
  std::vector<std::string> literals;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
    } else if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i);
      if (i == std::string::npos) break;
      ++i;
    } else if (text[i] == '\'' && i > 0 && !std::isalnum(static_cast<unsigned char>(text[i - 1]))) {
      for (++i; i < text.size() && text[i] != '\''; ++i)
        if (text[i] == '\\') ++i;
    } else if (text.compare(i, 2, "R\"") == 0) {
      const size_t open = text.find('(', i);
      const std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      const size_t end = text.find(close, open);
      literals.push_back(text.substr(open + 1, end - open - 1));
      i = end + close.size() - 1;
    } else if (text[i] == '"') {
      std::string literal;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') literal += text[i++];
        literal += text[i];
      }
      literals.push_back(literal);
    }
  }
  return literals;
}

// Whether `text` holds a flag: "--" and a letter, not inside a word or a longer run of dashes.
bool names_a_flag(const std::string& text) {
  for (size_t i = text.find("--"); i != std::string::npos; i = text.find("--", i + 1)) {
    const bool starts = i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '-' || text[i - 1] == '_');
    if (starts && i + 2 < text.size() && std::islower(static_cast<unsigned char>(text[i + 2]))) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("library errors about an option: the library's words, the option's field name") {
  SUBCASE("an unknown order kind") {
    try {
      (void)parse_order_kind("dfs");
      FAIL("parse_order_kind accepted 'dfs'");
    } catch (const OptionError& error) {
      CHECK(error.words().option == "order");
      CHECK(std::string(error.what()) == "order kind: unknown order 'dfs' (did you mean 'bfs'? choose generateseq, bfs, mindegree or minfill)");
    }
  }
  SUBCASE("the DP's limits") {
    const Objective objective = pair_objective();
    const EliminationPlan plan = make_plan(undirected_neighbours(objective), OrderKind::MinDegree, objective.config_counts());
    const std::vector<std::string> names = {"a", "b"};
    DpOptions options;
    options.max_table_bytes = 10;
    try {
      (void)solve_dp(objective, plan, names, options);
      FAIL("solve_dp ignored the table byte limit");
    } catch (const LimitError& error) {
      CHECK(error.words().option == "max_table_bytes");
      const std::string message = error.what();
      CHECK(message.rfind("the DP tables would need ", 0) == 0);
      CHECK(message.find("above the limit of 10 (the table byte limit); the largest is vertex 'a' with 3 entries") !=
            std::string::npos);
    }
    options = DpOptions{};
    options.max_work = 5;
    try {
      (void)solve_dp(objective, plan, names, options);
      FAIL("solve_dp ignored the work limit");
    } catch (const LimitError& error) {
      CHECK(error.words().option == "max_work");
      CHECK(std::string(error.what()).find("above the limit of 5 (the work limit; about 10^9 steps per second per core)") !=
            std::string::npos);
    }
  }
}

TEST_CASE("with_option_spellings: a command's flag in place of the library's words") {
  const OptionSpellings spellings = {{"order", "--order"}, {"max_work", "--max-work"}};
  auto message_of = [&](const std::function<int()>& body) -> std::string {
    try {
      with_option_spellings(spellings, body);
    } catch (const ResourceError& error) {
      return std::string("refused: ") + error.what();
    } catch (const InputError& error) {
      return error.what();
    }
    return "";
  };
  CHECK(message_of([]() -> int { throw OptionError({"order", "order kind", "", ": unknown order 'x'"}); }) ==
        "--order: unknown order 'x'");
  CHECK(message_of([]() -> int { throw LimitError({"max_work", "the work limit", "over (", ")"}); }) ==
        "refused: over (--max-work)");
  // An option the command does not set keeps the library's words.
  CHECK(message_of([]() -> int { throw LimitError({"max_table_bytes", "the table byte limit", "over (", ")"}); }) ==
        "refused: over (the table byte limit)");
  CHECK(with_option_spellings(spellings, [] { return 7; }) == 7);
}

TEST_CASE("pase: flags in messages are the command's own") {
  SUBCASE("models export --batch") {
    test::CommandResult result = test::run_pase("models export alexnet --batch -3");
    CHECK(result.status == 1);
    CHECK(result.error == "error: --batch: expected a positive number, got -3\n");
  }
  SUBCASE("solve --max-table-bytes, --max-work and --order") {
    const std::string graph = test::source_path("data/graphs/alexnet.json");
    test::CommandResult bytes = test::run_pase("solve " + graph + " --devices 4 --max-table-bytes 10");
    CHECK(bytes.status == 3);
    CHECK(bytes.error.find("above the limit of 10 (--max-table-bytes); the largest is vertex '") != std::string::npos);
    test::CommandResult work = test::run_pase("solve " + graph + " --devices 4 --max-work 10");
    CHECK(work.status == 3);
    CHECK(work.error.find("above the limit of 10 (--max-work; about 10^9 steps per second per core)") != std::string::npos);
  }
}

TEST_CASE("library sources name no command-line flag in their strings") {
  CHECK(names_a_flag("raise --max-configs"));
  CHECK(names_a_flag("--batch: expected"));
  CHECK_FALSE(names_a_flag("x--y"));
  CHECK_FALSE(names_a_flag("---- --1"));
  for (const char* dir : {"base", "graphs", "dp", "costmodel", "memorycap", "plans", "strategy", "onnximport"}) {
    for (const auto& entry : std::filesystem::directory_iterator(test::source_path(dir))) {
      const std::string ext = entry.path().extension().string();
      if (ext != ".cc" && ext != ".h") continue;
      std::ifstream file(entry.path());
      std::stringstream text;
      text << file.rdbuf();
      for (const std::string& literal : string_literals(text.str())) {
        CAPTURE(entry.path().string());
        CHECK_MESSAGE(!names_a_flag(literal), "a flag in \"", literal, "\"");
      }
    }
  }
}
