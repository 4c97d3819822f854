#pragma once
// A cost model prices one vertex configuration and one tensor redistribution.
// The DP never sees it: build_cost_tables turns it into an Objective once.
// Prices must depend only on the arguments: build_cost_tables prices each
// distinct vertex model (and each distinct edge) once and copies the result.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "costmodel/cost_terms.h"
#include "costmodel/machine.h"
#include "costmodel/training_setup.h"
#include "graphs/vertex_model.h"

namespace pase {

/// The memory a device keeps from training (docs/memory.md, "The reserve"):
/// 1 GiB for the CUDA context, library workspaces and communication buffers,
/// plus 5% of the rest for the caching allocator's fragmentation; at most a
/// quarter of the device.
[[nodiscard]] uint64_t default_memory_reserve(uint64_t device_bytes);

class CostModel {
 public:
  virtual ~CostModel() = default;
  [[nodiscard]] virtual std::string name() const = 0;  ///< "pase", ...
  [[nodiscard]] virtual std::string unit() const = 0;  ///< "flop", "seconds"
  [[nodiscard]] virtual int64_t devices() const = 0;
  /// Layer cost L(v, config).
  [[nodiscard]] virtual double layer(const VertexModel& model, const int32_t* config) const = 0;
  /// L(v, config) as its parts (compute, each all-reduce, halo, transfers), adding up to layer();
  /// by default one compute term of the whole cost.
  [[nodiscard]] virtual CostTerms layer_terms(const VertexModel& model, const int32_t* config) const;
  /// layer() on a machine of nodes, with each split divided between the
  /// inside of a node and across nodes (`per_node[d]` of config[d]'s pieces in
  /// one node, as a mesh's axes place them): a model that knows the links
  /// prices each collective over the ones its group crosses; by default the
  /// same as layer() (the `pase` model is device-order-free).
  [[nodiscard]] virtual double layer_on_nodes(const VertexModel& model, const int32_t* config,
                                              const int32_t* per_node) const {
    (void)per_node;
    return layer(model, config);
  }
  /// layer_on_nodes() as its parts; by default layer_terms().
  [[nodiscard]] virtual CostTerms layer_terms_on_nodes(const VertexModel& model, const int32_t* config,
                                                       const int32_t* per_node) const {
    (void)per_node;
    return layer_terms(model, config);
  }
  /// fetch_cost() of words that move between nodes (`across_nodes`) or only
  /// inside them; by default fetch_cost().
  [[nodiscard]] virtual double fetch_cost_on_nodes(double words, double group, bool across_nodes) const {
    (void)across_nodes;
    return fetch_cost(words, group);
  }
  /// Edge cost of a tensor produced with split `a` and consumed with split `b`.
  [[nodiscard]] virtual double redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const = 0;
  /// The price of a redistribution in which each device fetches `words`
  /// (forward and backward) from a group of `group` devices: what
  /// redistribution() charges for its words, and what a plan's realized words cost.
  [[nodiscard]] virtual double fetch_cost(double words, double group) const = 0;
  /// Machine facts recorded in the strategy file.
  [[nodiscard]] virtual Machine machine() const = 0;
  /// Devices per node of the machine, 0 when the model does not know: a mesh
  /// records it, and the default mesh keeps its inner axes inside a node.
  [[nodiscard]] virtual int64_t devices_per_node() const { return 0; }
  /// Memory per device of the machine, when the model knows it (a memory
  /// cap "machine" takes it).
  [[nodiscard]] virtual std::optional<uint64_t> memory_per_device() const { return std::nullopt; }
  /// out[i * b.size() + j] = redistribution(tensor, a[i], b[j]); models may do it faster than pair by pair.
  virtual void redistribution_matrix(const Shape& tensor, const std::vector<std::vector<int64_t>>& a,
                                     const std::vector<std::vector<int64_t>>& b, double* out) const;
};

/// The analytic model of the PaSE paper (docs/formats.md), in FLOP.
class PaseCostModel final : public CostModel {
 public:
  /// `training`: micro-batches and ZeRO reshape the step (docs/training.md);
  /// its dtype and optimizer do not enter this model's FLOP.
  explicit PaseCostModel(const Machine& machine, const TrainingSetup& training = {})
      : machine_(machine), training_(training) {}
  [[nodiscard]] std::string name() const override { return "pase"; }
  [[nodiscard]] std::string unit() const override { return "flop"; }
  [[nodiscard]] int64_t devices() const override { return machine_.devices; }
  [[nodiscard]] double layer(const VertexModel& model, const int32_t* config) const override;
  [[nodiscard]] CostTerms layer_terms(const VertexModel& model, const int32_t* config) const override;
  [[nodiscard]] double redistribution(const Shape& tensor, const int64_t* a, const int64_t* b) const override;
  [[nodiscard]] double fetch_cost(double words, double group) const override;
  [[nodiscard]] Machine machine() const override { return machine_; }
  void redistribution_matrix(const Shape& tensor, const std::vector<std::vector<int64_t>>& a,
                             const std::vector<std::vector<int64_t>>& b, double* out) const override;

 private:
  Machine machine_;
  TrainingSetup training_;
};

}  // namespace pase
