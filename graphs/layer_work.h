#pragma once
// What one device does for one vertex configuration during a training step:
// the single description of a layer's work that every cost model prices.
// Each op describes its own work (graphs/ops/); `pase` prices it in FLOP
// (costmodel/costs.cc), `calibrated` in seconds (calibrated_cost_model.cc).
#include <array>
#include <cstdint>

#include "base/check.h"
#include "graphs/vertex_model.h"

namespace pase {

/// A GEMM layer's per-device shape (the G of docs/formats.md): `batch`
/// independent (m×k)·(k×n) products, forward plus two backward, with
/// `pointwise` fused ops per output element, and the split counts whose
/// all-reduces recombine the output (ck), input gradient (cn) and weight
/// gradient (cm).
struct GemmShape {
  double batch = 1, m = 1, n = 1, k = 1;  ///< Bpp and per-device m, n, k
  double cm = 1, cn = 1, ck = 1;          ///< split counts of the m, n and k roles
  double pointwise = 0;
};

/// `times` ring all-reduces of `words` per device over `group` devices.
/// `what` names what is reduced, as a noun phrase a breakdown prints
/// ("norm statistics"); no cost model reads it.
struct AllReduceWork {
  double words = 0, group = 1, times = 1;
  const char* what = "";
  /// The sum of a weight's gradient over its replicas: paid once per step,
  /// not per micro-batch, and sharded by ZeRO (docs/training.md).
  bool weight_gradient = false;
};

/// `times` point-to-point transfers of `words` per device inside a group of
/// `group` devices; `what` names what moves ("lstm state").
struct TransferWork {
  double words = 0, group = 1, times = 1;
  const char* what = "";
};

/// A pooling window's halo: each of a device's `batch`×`channels` planes
/// receives `added_area` elements from neighbours in a group of `group`.
struct HaloWork {
  double batch = 0, channels = 0, added_area = 0, group = 1;
};

/// A short list with fixed capacity: a layer's work is described once per
/// configuration while pricing, so it never allocates.
template <typename T, int Capacity>
struct WorkList {
  std::array<T, Capacity> items{};
  int count = 0;
  void add(const T& item) {
    PASE_ASSERT(count < Capacity, count, Capacity);
    items[static_cast<size_t>(count++)] = item;
  }
  [[nodiscard]] const T* begin() const { return items.data(); }
  [[nodiscard]] const T* end() const { return items.data() + count; }
};

struct LayerWork {
  double pointwise = 0;  ///< memory-bound elementwise operations per device
  bool has_gemm = false;
  GemmShape gemm;
  bool has_halo = false;
  HaloWork halo;
  WorkList<AllReduceWork, 2> all_reduces;
  WorkList<TransferWork, 1> transfers;
};

/// The GEMM roles of `model.work` (batch, m, n, k, scales, pointwise) under `config`.
[[nodiscard]] GemmShape gemm_shape(const VertexModel& model, const int32_t* config);

/// The work of one configuration, as the vertex's op describes it.
[[nodiscard]] LayerWork describe_work(const VertexModel& model, const int32_t* config);

}  // namespace pase
