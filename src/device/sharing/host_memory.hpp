// CPU memory shared between processes (accel/device/process_sharing.hpp): an export owns a shared memory object and
// its entry in this process's table of exports; an import maps the object and holds a watch on that entry.
#pragma once

#include <memory>

#include "accel/device/process_sharing.hpp"
#include "device/sharing/export_table.hpp"
#include "device/sharing/shared_object.hpp"
#include "operation/host_slack.hpp"

namespace accel::device::sharing {

class ExportedHostMemory {
 public:
  // New zeroed shared memory for `count` elements of `dtype`, with a live export of it.
  static Result<std::unique_ptr<ExportedHostMemory>> create(DType dtype, std::uint64_t count);
  ExportedHostMemory(const ExportedHostMemory&) = delete;
  ExportedHostMemory& operator=(const ExportedHostMemory&) = delete;
  // Retires the export and removes the object's name; importers' mappings stay valid until they let go.
  ~ExportedHostMemory();

  // The buffer's first byte, kHostSlackBytes into the object (operation/host_slack.hpp).
  [[nodiscard]] void* data() const noexcept { return static_cast<std::byte*>(memory_.data()) + kHostSlackBytes; }
  [[nodiscard]] const ExportedBuffer& exported() const noexcept { return exported_; }

 private:
  ExportedHostMemory(ExportTable& table, SharedObject memory, ExportedBuffer exported)
      : table_(table), memory_(std::move(memory)), exported_(exported) {}
  ExportTable& table_;
  SharedObject memory_;
  ExportedBuffer exported_;
};

class ImportedHostMemory {
 public:
  // Maps the memory of a CPU export, once the watch says it is live.
  static Result<std::unique_ptr<ImportedHostMemory>> open(const ExportedBuffer& exported);

  [[nodiscard]] void* data() const noexcept { return static_cast<std::byte*>(memory_.data()) + kHostSlackBytes; }
  [[nodiscard]] const ImportWatch& watch() const noexcept { return *watch_; }

 private:
  ImportedHostMemory(std::unique_ptr<ImportWatch> watch, SharedObject memory)
      : watch_(std::move(watch)), memory_(std::move(memory)) {}
  std::unique_ptr<ImportWatch> watch_;
  SharedObject memory_;
};

}  // namespace accel::device::sharing
