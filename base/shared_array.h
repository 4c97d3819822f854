#pragma once
// An immutable array whose copies share one storage. The priced graph holds a
// cost vector and a configuration list per vertex and class maps per edge;
// a deep model's identical blocks would otherwise hold one copy each (the
// GPT-3 shape at p = 256: 600 MB more resident memory for 1000 layers than
// for 100). Copying shares, so a vertex priced like another costs a pointer.
#include <cstddef>
#include <initializer_list>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace pase {

template <typename T>
class SharedArray {
 public:
  SharedArray() = default;
  /// Takes the values (implicit: a std::vector stands wherever a SharedArray is expected).
  SharedArray(std::vector<T> values)  // NOLINT(google-explicit-constructor)
      : storage_(std::make_shared<const std::vector<T>>(std::move(values))),
        data_(storage_->data()),
        size_(storage_->size()) {}
  SharedArray(std::initializer_list<T> values) : SharedArray(std::vector<T>(values)) {}
  SharedArray(const SharedArray&) = default;
  SharedArray& operator=(const SharedArray&) = default;
  // A moved-from array is empty (not a view of storage it no longer owns).
  SharedArray(SharedArray&& other) noexcept
      : storage_(std::move(other.storage_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  SharedArray& operator=(SharedArray&& other) noexcept {
    storage_ = std::move(other.storage_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }
  ~SharedArray() = default;

  // Pointer and size kept beside the storage: reads are one indirection, as a vector's.
  [[nodiscard]] const T& operator[](size_t i) const { return data_[i]; }
  [[nodiscard]] const T* data() const { return data_; }
  [[nodiscard]] size_t size() const { return size_; }
  [[nodiscard]] bool empty() const { return size_ == 0; }
  [[nodiscard]] const T* begin() const { return data_; }
  [[nodiscard]] const T* end() const { return data_ + size_; }
  /// The values as a new vector (to edit them, then assign back).
  [[nodiscard]] std::vector<T> copy() const { return std::vector<T>(begin(), end()); }
  /// Whether both hold the very same storage (not merely equal values).
  [[nodiscard]] bool shares_with(const SharedArray& other) const { return storage_ == other.storage_; }
  /// Identifies the storage (null when empty and never assigned).
  [[nodiscard]] const void* storage_id() const { return storage_.get(); }
  /// Bytes of the values.
  [[nodiscard]] size_t bytes() const { return size_ * sizeof(T); }

  friend bool operator==(const SharedArray& a, const SharedArray& b) {
    if (a.data_ == b.data_ && a.size_ == b.size_) return true;
    if (a.size_ != b.size_) return false;
    for (size_t i = 0; i < a.size_; ++i)
      if (!(a.data_[i] == b.data_[i])) return false;
    return true;
  }
  friend bool operator!=(const SharedArray& a, const SharedArray& b) { return !(a == b); }
  /// Lexicographic, as std::vector's.
  friend bool operator<(const SharedArray& a, const SharedArray& b) {
    if (a.data_ == b.data_ && a.size_ == b.size_) return false;
    for (size_t i = 0; i < a.size_ && i < b.size_; ++i) {
      if (a.data_[i] < b.data_[i]) return true;
      if (b.data_[i] < a.data_[i]) return false;
    }
    return a.size_ < b.size_;
  }

 private:
  std::shared_ptr<const std::vector<T>> storage_;
  const T* data_ = nullptr;
  size_t size_ = 0;
};

/// Numbers `arrays` by value, in order of first appearance: equal ids if and
/// only if equal values. Copies sharing storage are compared once, so a deep
/// model's thousand copies of a block cost a hash lookup each.
template <typename T>
[[nodiscard]] std::vector<int> value_ids(const std::vector<SharedArray<T>>& arrays) {
  std::unordered_map<const void*, int> by_storage;
  std::map<SharedArray<T>, int> by_value;
  std::vector<int> id(arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    auto [known, inserted] = by_storage.try_emplace(arrays[i].storage_id(), 0);
    if (inserted) known->second = by_value.try_emplace(arrays[i], static_cast<int>(by_value.size())).first->second;
    id[i] = known->second;
  }
  return id;
}

}  // namespace pase
