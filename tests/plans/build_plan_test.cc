// Placing strategies on meshes: the default mesh, the --mesh syntax,
// realizability, axis assignments, realized redistribution, and plans of the zoo.
#include <doctest/doctest.h>

#include <chrono>

#include "costmodel/cost_model.h"
#include "costmodel/cost_tables.h"
#include "base/error.h"
#include "plans/assignment_bound.h"
#include "plans/build_plan.h"
#include "plans/mesh.h"
#include "plans/realized_words.h"
#include "dp/solve.h"
#include "test_support.h"

using namespace pase;

TEST_CASE("default_mesh: prime factors, largest first") {
  CHECK(default_mesh(8, 0).shape == std::vector<int64_t>{2, 2, 2});
  CHECK(default_mesh(12, 0).shape == std::vector<int64_t>{3, 2, 2});
  CHECK(default_mesh(6, 0).shape == std::vector<int64_t>{3, 2});
  CHECK(default_mesh(7, 0).shape == std::vector<int64_t>{7});
  CHECK(default_mesh(1, 0).shape == std::vector<int64_t>{1});
  CHECK(default_mesh(12, 4).axes == std::vector<std::string>{"x0", "x1", "x2"});
  CHECK(default_mesh(12, 4).devices_per_node == 4);
}

TEST_CASE("parse_mesh") {
  CHECK(parse_mesh("2x4", 8, 0).shape == std::vector<int64_t>{2, 4});
  CHECK(parse_mesh("2x4", 8, 0).axes == std::vector<std::string>{"x0", "x1"});
  Mesh named = parse_mesh("dp=2,tp=4", 8, 8);
  CHECK(named.axes == std::vector<std::string>{"dp", "tp"});
  CHECK(named.shape == std::vector<int64_t>{2, 4});
  CHECK(named.devices_per_node == 8);
  CHECK(parse_mesh("auto", 12, 0).shape == std::vector<int64_t>{3, 2, 2});
  auto message = [](const std::string& text) {
    try {
      (void)parse_mesh(text, 8, 0);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(message("2x2") == "the mesh '2x2': its sizes multiply to 4, not to the 8 devices");
  CHECK(message("2xx4") == "the mesh '2xx4': expected a size, got ''");
  CHECK(message("2x0x4") == "the mesh '2x0x4': axis sizes must be at least 1, got 0");
  CHECK(message("dp=2,dp=4") == "the mesh 'dp=2,dp=4': axis 'dp' is named twice");
  CHECK(message("dp=2,4") == "the mesh 'dp=2,4': expected NAME=SIZE, got '4'");
  CHECK(message("2d=2,tp=4") == "the mesh '2d=2,tp=4': '2d' is not an axis name (a letter, then letters, digits or _)");
}

TEST_CASE("axis_assignments and realizable") {
  Mesh mesh = parse_mesh("2x4", 8, 0);
  const int32_t both[2] = {2, 4};
  AxisAssignments found = axis_assignments(mesh, both, 2, 100);
  REQUIRE(found.list.size() == 1);  // only x0 makes 2 and x1 makes 4
  CHECK(found.list[0] == std::vector<std::vector<int>>{{0}, {1}});
  const int32_t two_twos[2] = {2, 2};
  CHECK_FALSE(realizable(mesh, two_twos, 2));  // the 4-axis cannot be halved
  Mesh cube = default_mesh(8, 0);
  CHECK(realizable(cube, two_twos, 2));
  const int32_t eight[1] = {8};
  AxisAssignments orders = axis_assignments(cube, eight, 1, 100);
  CHECK(orders.list.size() == 6);  // every order of the three axes
  CHECK(orders.list[0] == std::vector<std::vector<int>>{{0, 1, 2}});  // mesh order first
  CHECK(orders.complete);
  AxisAssignments cut = axis_assignments(cube, eight, 1, 4);
  CHECK(cut.list.size() == 4);
  CHECK_FALSE(cut.complete);
  const int32_t three[1] = {3};
  CHECK_FALSE(realizable(cube, three, 1));
  // Nine axes of 2: whether the axes make each split, whatever their order.
  const Mesh nine = default_mesh(512, 8);
  const int32_t too_many[2] = {1024, 1};
  CHECK_FALSE(realizable(nine, too_many, 2));
  const int32_t fits[3] = {2, 64, 4};
  CHECK(realizable(nine, fits, 3));
  const int32_t over[3] = {4, 64, 4};
  CHECK_FALSE(realizable(nine, over, 3));
}

TEST_CASE("grouped_assignments: the layouts of every two-axis grouping, each device holding the coarse mesh's tile") {
  const Mesh fine = default_mesh(16, 4);  // x0..x3, each 2; x2, x3 inside a node of 4
  CHECK(layout_space(fine) == LayoutSpace::Grouped);
  CHECK(layout_space(default_mesh(8, 4)) == LayoutSpace::Every);
  CHECK(layout_space(parse_mesh("dp=16,tp=4", 64, 8)) == LayoutSpace::Every);
  // (4, 4): only the grouping 4 | 4 gives each dimension a group of its own, in either order.
  const int32_t four_four[2] = {4, 4};
  const AxisAssignments halves = grouped_assignments(fine, four_four, 2, 100);
  CHECK(halves.list == std::vector<std::vector<std::vector<int>>>{{{0, 1}, {2, 3}}, {{2, 3}, {0, 1}}});
  // (16): both groups on the one dimension, in either order, for every cut; the mesh order once.
  const int32_t sixteen[1] = {16};
  const AxisAssignments whole = grouped_assignments(fine, sixteen, 1, 100);
  CHECK(whole.list == std::vector<std::vector<std::vector<int>>>{
                          {{0, 1, 2, 3}}, {{1, 2, 3, 0}}, {{2, 3, 0, 1}}, {{3, 0, 1, 2}}});
  CHECK(grouped_assignments(fine, sixteen, 1, 2).list.size() == 2);
  CHECK_FALSE(grouped_assignments(fine, sixteen, 1, 2).complete);
  // Three dimensions split have no layout in two groups, though the mesh runs them.
  const int32_t three_ways[3] = {2, 2, 4};
  CHECK(grouped_assignments(fine, three_ways, 3, 100).list.empty());
  CHECK(realizable(fine, three_ways, 3));

  // Every grouped layout is one of the mesh's, and gives each device the tile the coarse mesh's
  // layout does (8 x 4 | 2: coarse dp=8, tp=2).
  const int32_t eight_two[2] = {8, 2};
  const Mesh coarse = parse_mesh("dp=8,tp=2", 16, 4);
  const AxisAssignments on_fine = grouped_assignments(fine, eight_two, 2, 100);
  const AxisAssignments on_coarse = axis_assignments(coarse, eight_two, 2, 100);
  REQUIRE(on_coarse.list.size() == 1);
  const AxisAssignments every = axis_assignments(fine, eight_two, 2, 100000);
  const Shape shape = {32, 16};
  const SplitMap identity = {{0}, {1}};
  const std::vector<Block> coarse_tiles =
      device_blocks(shape, tensor_spec(identity, on_coarse.list[0]), coarse, mesh_coordinates(coarse));
  bool matched = false;
  for (const AxisAssignment& layout : on_fine.list) {
    CHECK(std::find(every.list.begin(), every.list.end(), layout) != every.list.end());
    matched = matched || device_blocks(shape, tensor_spec(identity, layout), fine, mesh_coordinates(fine)) == coarse_tiles;
  }
  CHECK(matched);
  // The cuts 2 | 8 (the 8 on the last three axes) and 8 | 2 (the coarse mesh's).
  CHECK(on_fine.list == std::vector<AxisAssignment>{{{1, 2, 3}, {0}}, {{0, 1, 2}, {3}}});
}

TEST_CASE("realized_words: by enumerating devices") {
  Mesh mesh = parse_mesh("2x2", 4, 0);
  std::vector<std::vector<int64_t>> coordinates = mesh_coordinates(mesh);
  Shape shape = {8, 8};
  // Same layout: nothing moves.
  CHECK(realized_words(shape, {{0}, {1}}, {{0}, {1}}, mesh, coordinates) == 0);
  // Rows on x0 held, columns on x0 needed: each device lacks half of its 4x8 tile... its needed 8x4 tile
  // overlaps its held 4x8 tile in 4x4.
  CHECK(realized_words(shape, {{0}, {}}, {{}, {0}}, mesh, coordinates) == 32 - 16);
  // Nested: held on (x0), needed on (x0, x1): inside; needed on (x1, x0): device (1, 0) needs block 1, holds block 1
  // of 2 ... block 1 of 4 = [2, 4) is inside [4, 8)? no: it lies outside.
  CHECK(realized_words(shape, {{0}, {}}, {{0, 1}, {}}, mesh, coordinates) == 0);
  CHECK(realized_words(shape, {{0}, {}}, {{1, 0}, {}}, mesh, coordinates) == 16);
  // A dimension that is not a multiple of its split: blocks of ceil(7/2) = 4, the last 3.
  CHECK(realized_words({7}, {{}}, {{0}}, mesh, coordinates) == 0);
  CHECK(realized_words({7}, {{0}}, {{}}, mesh, coordinates) == 4);
}

TEST_CASE("canonical_spec: one form per relabelling of equal-size axes") {
  Mesh cube = default_mesh(8, 0);  // [2, 2, 2]
  CHECK(canonical_spec({{2}, {0, 1}}, cube) == AxisSpec{{0}, {1, 2}});
  CHECK(canonical_spec({{1}, {2, 0}}, cube) == AxisSpec{{0}, {1, 2}});
  CHECK(canonical_spec({{}, {}}, cube) == AxisSpec{{}, {}});
  Mesh mixed = default_mesh(12, 0);  // [3, 2, 2]: the 3-axis keeps its label
  CHECK(canonical_spec({{2}, {0}}, mixed) == AxisSpec{{1}, {0}});
  CHECK(canonical_spec({{0, 2}, {1}}, mixed) == AxisSpec{{0, 1}, {2}});
}

// The bound against its definition: the least over every pair of assignments,
// each pair's words counted device by device.
TEST_CASE("AssignmentBound: the least edge cost over all assignment pairs") {
  Machine machine;
  for (int64_t p : {8, 12, 16}) {
    machine.devices = p;
    PaseCostModel model(machine);
    Mesh mesh = default_mesh(p, 0);
    const auto coordinates = mesh_coordinates(mesh);
    AssignmentBound bound(mesh, model, 100000);
    const Shape tensor = {12, 8, 6};
    const SplitMap held_map = {{0}, {1}, {2}};      // a layer "abc" writing "abc"
    const SplitMap needed_map = {{0}, {2, 1}, {}};  // a layer "abcd" reading "a(cb)-"
    int cases = 0;
    for (const auto& held_config : std::vector<std::vector<int32_t>>{{2, 2, 1}, {4, 1, 2}, {1, 2, 2}, {2, 1, 3}})
      for (const auto& needed_config : std::vector<std::vector<int32_t>>{{2, 2, 2, 1}, {1, 4, 1, 2}, {4, 1, 1, 1}, {3, 2, 1, 1}}) {
        AxisAssignments held = axis_assignments(mesh, held_config.data(), 3, 100000);
        AxisAssignments needed = axis_assignments(mesh, needed_config.data(), 4, 100000);
        if (held.list.empty() || needed.list.empty()) continue;
        double least = 1e300;
        for (const auto& a : held.list)
          for (const auto& b : needed.list) {
            const AxisSpec from = tensor_spec(held_map, a), to = tensor_spec(needed_map, b);
            least = std::min(least, model.fetch_cost(realized_words(tensor, from, to, mesh, coordinates),
                                                     std::max(spec_devices(from, mesh), spec_devices(to, mesh))));
          }
        std::optional<double> found = bound.least_edge_cost(tensor, held_map, held_config, needed_map, needed_config);
        REQUIRE(found.has_value());
        CHECK(*found == least);
        ++cases;
      }
    CHECK(cases >= 6);
  }
  Machine big;
  big.devices = 64;
  PaseCostModel model(big);
  AssignmentBound capped(default_mesh(64, 0), model, 100);  // 720 assignments of an 8 x 8 split: no bound
  CHECK_FALSE(capped.least_edge_cost({64, 64}, {{0}, {1}}, {8, 8}, {{0}, {1}}, {8, 8}).has_value());
}

// Plans of the zoo, each proven optimal among all axis assignments; and the
// same realized cost as a DP over every assignment of every layer where that
// DP is affordable (p <= 32).
TEST_CASE("build_plan: the zoo's realized redistribution is at most the model's") {
  int unproven = 0;
  for (const char* name : {"alexnet", "resnet101", "inception3", "rnnlm", "transformer"}) {
    const std::string name_text = name;
    Graph graph = load_graph(test::source_path("data/graphs/" + name_text + ".json"));
    for (int64_t p : {4, 8, 12, 32, 64}) {
      CAPTURE(name);
      CAPTURE(p);
      Machine machine;
      machine.devices = p;
      PaseCostModel model(machine);
      Mesh mesh = default_mesh(p, 0);
      // As `--mesh auto` solves: only configurations the mesh realizes.
      CostTables tables = build_cost_tables(graph, model, kDefaultMaxConfigs,
                                            [&](const VertexModel& m, const int32_t* config) { return realizable(mesh, config, static_cast<int>(m.domain.size())); });
      Solution solution = solve(tables.objective, graph.vertex_names(), SolveOptions{});
      REQUIRE(unrealizable_reason(graph, tables, solution.choice, mesh).empty());
      auto start = std::chrono::steady_clock::now();
      PlanResult result = build_plan(graph, tables, solution.choice, mesh, model, PlanOptions{});
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      MESSAGE(name_text << " p=" << p << ": model edges " << result.model_edge_cost << ", realized " << result.realized_edge_cost
                   << ", exact " << result.exact << ", largest candidate set " << result.largest_candidate_set << ", "
                   << seconds << " s");
      CHECK(result.exact);
      CHECK(result.realized_edge_cost <= result.model_edge_cost * (1 + 1e-12));
      CHECK(result.plan.realized_total_cost <= solution.cost * (1 + 1e-12));
      CHECK(result.edge_lower_bound <= result.realized_edge_cost * (1 + 1e-12));
      if (p <= 32) {
        PlanOptions everything;
        everything.stop_at_bound = false;
        PlanResult oracle = build_plan(graph, tables, solution.choice, mesh, model, everything);
        REQUIRE(oracle.proof == PlanProof::AllAssignments);
        CHECK(result.realized_edge_cost == doctest::Approx(oracle.realized_edge_cost).epsilon(1e-12));
        // One candidate per layer and no proof by the bound: the plan is not
        // exact, and the bound it reports is below the true optimum.
        PlanOptions first_only;
        first_only.max_assignments = 1;
        first_only.stop_at_bound = false;
        PlanResult rough = build_plan(graph, tables, solution.choice, mesh, model, first_only);
        if (rough.proof == PlanProof::None) {
          CHECK_FALSE(rough.plan.assignment_exact);
          CHECK(rough.edge_lower_bound <= oracle.realized_edge_cost * (1 + 1e-12));
          CHECK(rough.plan.realized_total_lower_bound <= oracle.plan.realized_total_cost * (1 + 1e-12));
          ++unproven;
        }
      }
    }
  }
  CHECK(unproven >= 5);  // the comparison above ran
}
