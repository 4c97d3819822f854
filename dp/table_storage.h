#pragma once
// The DP's tables in memory (internal to the dp library): cost tables left
// uninitialised, argmins in their narrowest type, and a finished table on its
// way to the vertex that consumes it.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pase {

// A buffer left uninitialised: every DP table entry is written before it is
// read, and zero-filling fresh tables first cost a pass over memory and page
// faults (visible on small solves).
template <typename T>
class RawBuffer {
 public:
  RawBuffer() = default;
  explicit RawBuffer(size_t size) : data_(size ? new T[size] : nullptr), size_(size) {}
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  [[nodiscard]] size_t size() const { return size_; }

 private:
  std::unique_ptr<T[]> data_;
  size_t size_ = 0;
};

// Argmins in the narrowest unsigned type that holds the vertex's configuration count.
class ArgminTable {
 public:
  static int width_for(size_t configs) { return configs <= 256 ? 1 : configs <= 65536 ? 2 : 4; }

  ArgminTable() = default;
  ArgminTable(size_t entries, size_t configs) : width_(width_for(configs)), bytes_(entries * static_cast<size_t>(width_)) {}

  void set(size_t i, uint32_t value) {
    uint8_t* p = bytes_.data() + i * static_cast<size_t>(width_);
    for (int b = 0; b < width_; ++b) p[b] = static_cast<uint8_t>(value >> (8 * b));
  }
  [[nodiscard]] uint32_t get(size_t i) const {
    const uint8_t* p = bytes_.data() + i * static_cast<size_t>(width_);
    uint32_t value = 0;
    for (int b = 0; b < width_; ++b) value |= static_cast<uint32_t>(p[b]) << (8 * b);
    return value;
  }
  [[nodiscard]] size_t bytes() const { return bytes_.size(); }

 private:
  int width_ = 1;
  RawBuffer<uint8_t> bytes_;
};

// A finished table waiting for the vertex that consumes it.
struct Message {
  RawBuffer<double> cost;
  int producer_position = 0;     // where the producing vertex sits in the order
  std::vector<int> scope;        // D(w), latest first; the consumer is last (stride 1)
  std::vector<uint64_t> stride;  // mixed-radix strides of `scope`
};

}  // namespace pase
