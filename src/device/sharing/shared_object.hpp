// A POSIX shared memory object mapped into this process: the memory and the tables that processes of one host
// share by name (process_sharing.hpp). Names are "/accel-..." and at most kMaxNameBytes long.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "accel/core/result.hpp"

namespace accel::device::sharing {

inline constexpr std::size_t kMaxNameBytes = 47;  // ExportedBuffer::table holds it and its NUL

class SharedObject {
 public:
  // A new object of `bytes` zeroed bytes; failed_precondition with raw code EEXIST when the name is taken.
  static Result<SharedObject> create(std::string name, std::size_t bytes);
  // The existing object `name`, which must hold at least `min_bytes`; stale_handle with raw code ENOENT when there is
  // none.
  static Result<SharedObject> open(std::string name, std::size_t min_bytes);

  SharedObject(SharedObject&& other) noexcept;
  SharedObject& operator=(SharedObject&& other) noexcept;
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  ~SharedObject();  // unmaps; the object lives on while its name or another mapping does

  // Removes the name: nobody opens it again; mappings stay valid until unmapped.
  void unlink() const noexcept;

  [[nodiscard]] void* data() const noexcept { return data_; }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }

 private:
  SharedObject(std::string name, void* data, std::size_t size) : name_(std::move(name)), data_(data), size_(size) {}
  std::string name_;
  void* data_ = nullptr;
  std::size_t size_ = 0;
};

// Whether `name` is one this module makes: "/accel-", then [a-z0-9-], at most kMaxNameBytes in all.
[[nodiscard]] bool is_shared_object_name(std::string_view name) noexcept;

// Whether the process `pid` exists (a zombie counts until reaped).
[[nodiscard]] bool process_alive(int pid) noexcept;

}  // namespace accel::device::sharing
