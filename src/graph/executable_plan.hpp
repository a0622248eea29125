// A graph specialised for one binding of its symbols (an exact shape, or a bucket's rungs): every tensor's place
// (one arena per executable, reused by liveness; parameters in the weights buffer) and the ops to run in order.
// Device-independent; the CPU and CUDA executors run it, and its encoding is what the persistent cache keeps.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "accel/graph/graph.hpp"

namespace accel::graph {

enum class Storage : std::uint8_t { none, arena, weights };

struct Slot {
  Storage storage = Storage::none;
  std::uint64_t offset = 0;  // bytes from the start of the arena or of the weights
  friend bool operator==(const Slot&, const Slot&) = default;
};

// The value of `dim` under `values` (every symbol of the graph has one).
[[nodiscard]] std::int64_t evaluate(const Dim& dim, const SymbolValues& values);
// The elements of `shape` under `values`: only for bindings check_sizes accepted.
[[nodiscard]] std::uint64_t element_count(const Shape& shape, const SymbolValues& values);

// The most bytes one tensor may hold (as dnn's tensors): far beyond any device, far below where sizes overflow.
inline constexpr std::uint64_t kMaxTensorBytes = 1ull << 48;
// invalid_argument naming the tensor when a dim is negative or a tensor's bytes pass kMaxTensorBytes under
// `values` (symbols without a value count as 1, so a graph's constant dims can be checked before any binding).
[[nodiscard]] Status check_sizes(const Graph& graph, const SymbolValues& values);

class ExecutablePlan {
 public:
  // Specialises `graph` for `binding` (a value for every symbol). Errors: a missing or negative symbol value.
  static Result<ExecutablePlan> make(std::shared_ptr<const Graph> graph, SymbolValues binding);
  // An encoding made by encode(), for `graph`; refuses bytes that do not fit the graph (a damaged entry).
  static Result<ExecutablePlan> decode(std::shared_ptr<const Graph> graph, std::span<const std::byte> bytes);
  [[nodiscard]] std::vector<std::byte> encode() const;

  [[nodiscard]] const Graph& graph() const noexcept { return *graph_; }
  [[nodiscard]] const SymbolValues& binding() const noexcept { return binding_; }
  // The nodes that run, in order (inputs, parameters and reshapes run nothing).
  [[nodiscard]] const std::vector<std::uint32_t>& steps() const noexcept { return steps_; }
  // Where each tensor lives (a reshape shares its source's place).
  [[nodiscard]] const Slot& slot(std::uint32_t tensor) const noexcept { return slots_[tensor]; }
  [[nodiscard]] std::uint64_t arena_bytes() const noexcept { return arena_bytes_; }
  // What the arena would need without reuse (the memory plan's saving is the difference).
  [[nodiscard]] std::uint64_t unshared_bytes() const noexcept { return unshared_bytes_; }

 private:
  ExecutablePlan() = default;

  std::shared_ptr<const Graph> graph_;
  SymbolValues binding_;
  std::vector<std::uint32_t> steps_;
  std::vector<Slot> slots_;
  std::uint64_t arena_bytes_ = 0;
  std::uint64_t unshared_bytes_ = 0;
};

}  // namespace accel::graph
