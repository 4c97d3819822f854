// Megatron-LM's sequence parallelism (graphs/sequence_parallel.h): which
// GEMMs take which role, the Megatron baseline's layout over them, and its
// price restated independently: the column-parallel GEMMs' input-gradient
// all-reduces become exactly the edges' all-gathers and reduce-scatters, and
// the row-parallel GEMMs keep their ring price, so what changes is the
// sequence-split norms' and residual adds' own work.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "costmodel/cost_tables.h"
#include "costmodel/memory_model.h"
#include "graphs/llm_zoo.h"
#include "graphs/sequence_parallel.h"
#include "strategy/baselines.h"
#include "test_support.h"

using namespace pase;

namespace {

// Two blocks, tiny widths; 4 heads, so 4-way tensor parallelism splits them.
const LlmShape kTinyGpt = {/*layers=*/2, /*d_model=*/64, /*heads=*/4, /*kv_heads=*/4, /*ff=*/256, /*seq=*/16,
                           /*vocab=*/100, /*batch=*/2};
// 8 query heads on 2 key/value heads.
const LlmShape kTinyLlama = {/*layers=*/2, /*d_model=*/64, /*heads=*/8, /*kv_heads=*/2, /*ff=*/96, /*seq=*/16,
                             /*vocab=*/100, /*batch=*/4};

Graph tiny(LlmFamily family) {
  const LlmShape& shape = family == LlmFamily::Gpt ? kTinyGpt : kTinyLlama;
  return build_graph(build_llm_graph(family, shape, "tiny"), "tiny.json");
}

SequenceParallel role_of(const Graph& graph, const std::string& name) {
  const int v = graph.find_vertex(name);
  REQUIRE(v >= 0);
  return graph.vertices[static_cast<size_t>(v)].sequence_parallel;
}

std::vector<int32_t> config_of(const Graph& graph, const CostTables& tables, const std::vector<int32_t>& choice,
                               const std::string& name) {
  const int v = graph.find_vertex(name);
  REQUIRE(v >= 0);
  const int32_t* c = tables.configs[static_cast<size_t>(v)][static_cast<size_t>(choice[static_cast<size_t>(v)])];
  return {c, c + tables.configs[static_cast<size_t>(v)].rank};
}

double edges_cost(const Objective& objective, const std::vector<int32_t>& choice) {
  double total = 0;
  for (const PairCost& pair : objective.pairs)
    total += pair.at(static_cast<size_t>(choice[static_cast<size_t>(pair.u)]), static_cast<size_t>(choice[static_cast<size_t>(pair.v)]));
  return total;
}

double product(const Shape& shape) {
  double p = 1;
  for (int64_t d : shape) p *= static_cast<double>(d);
  return p;
}

}  // namespace

TEST_CASE("sequence_parallel_role: row-parallel GEMMs scatter, column-parallel ones gather") {
  Graph llama = tiny(LlmFamily::Llama);
  set_sequence_parallel(llama);
  const std::string block = "model/layers.0/";
  CHECK(role_of(llama, "model/embed_tokens") == SequenceParallel::ScatterOutput);
  for (const char* name : {"self_attn/q_proj", "self_attn/k_proj", "self_attn/v_proj", "mlp/gate_proj", "mlp/up_proj"})
    CHECK(role_of(llama, block + name) == SequenceParallel::GatherInput);
  CHECK(role_of(llama, block + "self_attn/o_proj") == SequenceParallel::ScatterOutput);
  CHECK(role_of(llama, block + "mlp/down_proj") == SequenceParallel::ScatterOutput);
  // The logits: an fc read only by the loss is Megatron's vocabulary-parallel output layer.
  CHECK(role_of(llama, "lm_head") == SequenceParallel::GatherInput);
  // No weight (the attention einsums) or no GEMM: no role.
  for (const char* name : {"self_attn/logits", "self_attn/context", "self_attn/softmax", "input_layernorm",
                           "self_attn/residual", "mlp/act"})
    CHECK(role_of(llama, block + name) == SequenceParallel::None);
  CHECK(role_of(llama, "loss") == SequenceParallel::None);

  Graph gpt = tiny(LlmFamily::Gpt);
  set_sequence_parallel(gpt);
  CHECK(role_of(gpt, "transformer/wte") == SequenceParallel::ScatterOutput);
  CHECK(role_of(gpt, "transformer/wpe") == SequenceParallel::ScatterOutput);
  CHECK(role_of(gpt, "transformer/h.1/attn/c_attn") == SequenceParallel::GatherInput);
  CHECK(role_of(gpt, "transformer/h.1/attn/c_proj") == SequenceParallel::ScatterOutput);
  CHECK(role_of(gpt, "transformer/h.1/mlp/c_fc") == SequenceParallel::GatherInput);
  CHECK(role_of(gpt, "transformer/h.1/mlp/c_proj") == SequenceParallel::ScatterOutput);
  CHECK(sequence_parallel_name(SequenceParallel::ScatterOutput) == std::string("scatter_output"));
  CHECK(sequence_parallel_name(SequenceParallel::GatherInput) == std::string("gather_input"));
  CHECK(sequence_parallel_name(SequenceParallel::None) == std::string(""));
}

TEST_CASE("scatter_output_over_sequence: the output's sequence follows the contraction's heads too") {
  Graph llama = tiny(LlmFamily::Llama);
  set_sequence_parallel(llama);
  const int v = llama.find_vertex("model/layers.0/self_attn/o_proj");  // "bhrlk,ehrk->ble"
  const VertexModel model = build_vertex_model(llama.vertices[static_cast<size_t>(v)]);
  const int l = static_cast<int>(model.letters.find('l')), h = static_cast<int>(model.letters.find('h'));
  REQUIRE(model.outputs[0].size() == 3);
  CHECK(model.outputs[0][1] == std::vector<int>{l, h});
  // Under heads split 2 ways the output's tile is a half of the sequence: a
  // reduce-scatter's, where the all-reduce left every device the whole.
  std::vector<int32_t> config(model.domain.size(), 1);
  config[static_cast<size_t>(h)] = 2;
  std::vector<int64_t> split(3);
  tensor_split(model.outputs[0], config.data(), split.data());
  CHECK(split == std::vector<int64_t>{1, 2, 1});
}

TEST_CASE("megatron under sequence parallelism: norms and residual adds split over the sequence") {
  Graph gpt = tiny(LlmFamily::Gpt);
  set_sequence_parallel(gpt);
  Machine machine;
  machine.devices = 4;
  const CostTables tables = build_cost_tables(gpt, machine);
  const std::vector<int32_t> choice = megatron_choice(gpt, tables, 1, 4);
  // norm "abc" over (batch, sequence, hidden): the sequence 4 ways.
  CHECK(config_of(gpt, tables, choice, "transformer/h.0/ln_1") == std::vector<int32_t>{1, 4, 1});
  CHECK(config_of(gpt, tables, choice, "transformer/h.1/attn/residual") == std::vector<int32_t>{1, 4, 1});
  CHECK(config_of(gpt, tables, choice, "transformer/ln_f") == std::vector<int32_t>{1, 4, 1});
  // The heads stay split inside attention.
  CHECK(config_of(gpt, tables, choice, "transformer/h.0/attn/softmax") == std::vector<int32_t>{1, 4, 1, 1});
  const BaselineResult result = run_baseline("megatron", gpt, tables, McmcOptions{}, 4);
  CHECK(result.note == "m = 1, n = 4, sequence parallel (as asked)");
  // One way of tensor parallelism leaves nothing to split the sequence over.
  CHECK(run_baseline("megatron", gpt, tables, McmcOptions{}, 1).note == "m = 4, n = 1 (as asked)");
}

TEST_CASE("megatron under sequence parallelism, priced: the GEMMs' savings are the edges' cost") {
  for (LlmFamily family : {LlmFamily::Gpt, LlmFamily::Llama}) {
    CAPTURE(llm_family_name(family));
    const int64_t ways = family == LlmFamily::Gpt ? 4 : 2, batch_ways = 2;
    Machine machine;
    machine.devices = ways * batch_ways;
    const Graph plain = tiny(family);
    Graph marked = plain;
    set_sequence_parallel(marked);
    const CostTables before = build_cost_tables(plain, machine);
    const CostTables after = build_cost_tables(marked, machine);
    const std::vector<int32_t> old_choice = megatron_choice(plain, before, batch_ways, ways);
    const std::vector<int32_t> choice = megatron_choice(marked, after, batch_ways, ways);
    const double r = machine.word_cost();
    double gathered = 0;  // the column-parallel GEMMs' input-gradient all-reduces, restated
    for (size_t v = 0; v < marked.vertices.size(); ++v) {
      const Vertex& vertex = marked.vertices[v];
      const double old_cost = before.objective.vertex_cost[v][static_cast<size_t>(old_choice[v])];
      const double cost = after.objective.vertex_cost[v][static_cast<size_t>(choice[v])];
      CAPTURE(vertex.name);
      if (vertex.sequence_parallel == SequenceParallel::GatherInput) {
        // Its activation input, a replica's share of the batch, summed in a ring over the tensor-parallel ways.
        const double words = product(vertex.inputs[0].shape) / static_cast<double>(batch_ways);
        const double all_reduce = r * 2.0 * (static_cast<double>(ways) - 1) / static_cast<double>(ways) * words;
        CHECK(old_cost - cost == doctest::Approx(all_reduce).epsilon(1e-12));
        gathered += all_reduce;
      } else if (vertex.sequence_parallel == SequenceParallel::ScatterOutput) {
        CHECK(cost == doctest::Approx(old_cost).epsilon(1e-12));  // a reduce-scatter and an all-gather: one all-reduce's ring
      } else if (vertex.name.find("residual") != std::string::npos) {
        CHECK(cost == doctest::Approx(old_cost / static_cast<double>(ways)).epsilon(1e-12));  // its share of the rows
      }
      // (A norm does less work too, but sums its weights' gradients over
      // the tensor-parallel ways as well: at these tiny widths it costs more.)
    }
    CHECK(gathered > 0);
    CHECK(edges_cost(before.objective, old_choice) == 0.0);  // tensor parallelism alone moves nothing between layers
    CHECK(edges_cost(after.objective, choice) == doctest::Approx(gathered).epsilon(1e-12));
  }
}

TEST_CASE("sequence parallelism shrinks what the norms and residual stream hold") {
  const Graph plain = tiny(LlmFamily::Gpt);
  Graph marked = plain;
  set_sequence_parallel(marked);
  Machine machine;
  machine.devices = 4;
  const CostTables before = build_cost_tables(plain, machine), after = build_cost_tables(marked, machine);
  const MemoryTables old_memory = build_memory_tables(plain, before, TrainingSetup{});
  const MemoryTables memory = build_memory_tables(marked, after, TrainingSetup{});
  const std::vector<int32_t> old_choice = megatron_choice(plain, before, 1, 4);
  const std::vector<int32_t> choice = megatron_choice(marked, after, 1, 4);
  const int ln = marked.find_vertex("transformer/h.0/ln_1");
  const int proj = marked.find_vertex("transformer/h.0/attn/c_proj");
  // The norm's output (batch 2 x 16 x 64) a quarter of it, as is the row-parallel projection's.
  const double a = static_cast<double>(activation_element_bytes(TrainingSetup{}));
  CHECK(static_cast<double>(old_memory.activations[old_memory.offset[static_cast<size_t>(ln)] + static_cast<size_t>(old_choice[static_cast<size_t>(ln)])]) ==
        2 * 16 * 64 * a);
  CHECK(static_cast<double>(memory.activations[memory.offset[static_cast<size_t>(ln)] + static_cast<size_t>(choice[static_cast<size_t>(ln)])]) ==
        2 * 16 * 64 * a / 4);
  CHECK(static_cast<double>(memory.activations[memory.offset[static_cast<size_t>(proj)] + static_cast<size_t>(choice[static_cast<size_t>(proj)])]) ==
        2 * 16 * 64 * a / 4);
  CHECK(plan_memory(memory, choice).total() < plan_memory(old_memory, old_choice).total());
}
