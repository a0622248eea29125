// The operation contract: the one shape every library request has, whatever its family and whatever device
// runs it. A family writes it once, next to its code, as a specialisation of Operation<Request> (and, for CUDA,
// CudaOperation<Request> in cuda_operation.hpp); the devices run every request through one generic path.
//
// Note [The operation contract]
// Rationale: before this, each request was wired by hand into every device tier (the CPU device, the CUDA
// stream, the isolated proxy, the worker), each with its own plan lifecycle and its own list of the buffers
// it touches, so one new request cost edits to about fifteen files.
// Approach: a request is described by what does not depend on the device —
//   validate(request)                  -> Result<Checked>  every check that needs no buffer and no device
//                                                          (sizes, dtypes, layouts, aliasing of handles);
//                                                          Checked is what the later steps need (a geometry)
//   operands(request, checked, list)                       the buffers it reads and writes, with the range
//                                                          and element type each must have: the one list
//                                                          from which resolution and stream ordering follow
//   check_cpu_support(checked)         -> Status           optional: what the CPU implementation cannot do
//   run_cpu(request, checked, views)   -> Status           optional; without it the CPU device answers
//                                                          not_supported (a compile-time default, not a stub)
// and on CUDA (cuda_operation.hpp) by plan (support check and cached plan), workspace_bytes and run. The
// generic path is validate -> plan (cached) -> resolve operands -> order on the stream -> workspace -> run ->
// complete; plan and run are separate steps so that a graph layer can record the runs of a sequence of plans.
// Requests that are not plain data also say how they cross to an isolated worker (encode / decode, see
// staged_codec.hpp); plain ones cross byte for byte.
// Registration: the family's request list (include/accel/libs/<family>/requests.hpp) is named once in
// include/accel/device/protocol.hpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/library_report.hpp"
#include "accel/core/result.hpp"

namespace accel {

template <class Request>
struct Operation;  // specialised by each family

enum class Access : std::uint8_t { read, write };

// A buffer resolved for one request: where its memory is, what it holds.
struct BufferView {
  void* data = nullptr;
  DType dtype = DType::f32;
  std::uint64_t count = 0;
  // The version of the contents this request finds: a number the device gives each write of a buffer, never
  // reused by another write of that device. Equal versions of a buffer are equal contents, so a family may keep
  // what it derived from them (SpGemm's counted product). 0: not tracked, the same as never seen.
  std::uint64_t version = 0;

  [[nodiscard]] std::uint64_t bytes() const noexcept { return count * size_of(dtype); }
  // The address of element `index` (no bounds check: the range was checked when the view was resolved).
  [[nodiscard]] std::byte* at(std::uint64_t index) const noexcept {
    return static_cast<std::byte*>(data) + index * size_of(dtype);
  }
};

// One buffer a request touches. An optional operand with a null handle is absent: it keeps its place in the
// list (its view is empty) and is neither resolved nor ordered. A null handle elsewhere is an error.
struct Operand {
  BufferHandle buffer;
  std::string name;  // how errors name it ("a", "bias", "argument 3")
  Access access = Access::read;
  std::uint64_t first = 0;  // elements [first, first + count) must lie inside the buffer
  std::uint64_t count = 0;
  bool check_dtype = false;  // if set, the buffer must hold `dtype`
  DType dtype = DType::f32;
  bool optional = false;
  // A written operand that must not share its buffer with any other operand of the request.
  bool exclusive = false;
};

// The operands of one request, in an order its run step knows.
class Operands {
 public:
  Operands() { list_.reserve(8); }

  // A buffer that must hold `count` elements of `dtype` from its start.
  Operands& typed(BufferHandle buffer, std::string name, Access access, DType dtype, std::uint64_t count) {
    list_.push_back({.buffer = buffer,
                     .name = std::move(name),
                     .access = access,
                     .count = count,
                     .check_dtype = true,
                     .dtype = dtype});
    return *this;
  }
  // A buffer whose elements [first, first + count) are used, whatever it holds.
  Operands& range(BufferHandle buffer, std::string name, Access access, std::uint64_t first, std::uint64_t count) {
    list_.push_back({.buffer = buffer, .name = std::move(name), .access = access, .first = first, .count = count});
    return *this;
  }
  // An operand the request does without (its place kept, so that the run step's indices do not move).
  Operands& absent(std::string name) {
    list_.push_back({.name = std::move(name), .optional = true});
    return *this;
  }
  Operands& add(Operand operand) {
    list_.push_back(std::move(operand));
    return *this;
  }

  [[nodiscard]] std::span<const Operand> list() const noexcept { return list_; }
  [[nodiscard]] std::size_t size() const noexcept { return list_.size(); }

 private:
  std::vector<Operand> list_;
};

// The checks of an operand that its handle alone answers (a handle carries its buffer's dtype and count): not null,
// elements [first, first + count) inside, the dtype the request needs. The device's buffer table makes them once it
// has confirmed the handle; a family may make them earlier, before an expensive plan. Optional operands left null
// pass.
[[nodiscard]] Status check_not_null(std::string_view operand, const BufferHandle& buffer);
[[nodiscard]] Status check_operand_range(std::string_view operand, const BufferHandle& buffer, std::uint64_t first,
                                         std::uint64_t count);
[[nodiscard]] Status check_against_handle(const Operand& operand);
[[nodiscard]] Status check_against_handles(const Operands& operands);

// What a family may know of a device's options and name while it runs on the CPU device.
struct CpuTarget {
  std::string_view device_name;
};

// Whether the family wrote a CPU implementation of `Request`.
template <class Request>
concept HasCpuRun = requires(const Request& request, const typename Operation<Request>::Checked& checked,
                             std::span<const BufferView> views, const CpuTarget& target) {
  { Operation<Request>::run_cpu(request, checked, views, target) } -> std::same_as<Status>;
};

// The buffer handles of a request compared without a table: the same slot of the same device is the same buffer.
[[nodiscard]] inline bool same_buffer(const BufferHandle& a, const BufferHandle& b) noexcept {
  return !a.is_null() && !b.is_null() && a.device == b.device && a.slot == b.slot;
}

}  // namespace accel
