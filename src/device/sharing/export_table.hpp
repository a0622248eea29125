// The generations behind buffers shared between processes (accel/device/process_sharing.hpp).
//
// Each exporting process keeps one table of its exports in a shared memory object named after its process id
// ("/accel-exports-<pid>"): per export a generation (0 once retired) and the process ids of its importers. An
// importer maps the table, registers itself in the export's entry, and checks the generation (and that the exporter
// lives) on import and on every use. Registering first and checking second, against an exporter that retires first
// and looks for importers second, means one of the two always sees the other: either the import is refused, or the
// exporter knows to keep the memory.
//
// Everything in the table is another process's bytes: an importer reads only its entry's generation and writes only
// its own cell; the exporter reads importers' ids only to ask whether those processes live.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>

#include "accel/core/result.hpp"
#include "accel/device/process_sharing.hpp"
#include "device/sharing/shared_object.hpp"

namespace accel::device::sharing {

inline constexpr std::uint32_t kExportEntries = 4096;
inline constexpr std::size_t kImportersPerExport = 14;

struct alignas(64) ExportEntry {
  std::atomic<std::uint64_t> generation;                     // the live export's; 0: none
  std::atomic<std::int32_t> importers[kImportersPerExport];  // process ids; 0: a free cell
};
static_assert(sizeof(ExportEntry) == 64 && std::atomic<std::uint64_t>::is_always_lock_free &&
              std::atomic<std::int32_t>::is_always_lock_free);

// invalid_argument naming what is wrong with `exported`, an ExportedBuffer from outside (its text, or a request).
[[nodiscard]] Status check_exported(const ExportedBuffer& exported);
// check_exported(), and that `exported` is of the importing device's kind (`device` names it in the error).
[[nodiscard]] Status check_import(const ExportedBuffer& exported, DeviceKind kind, std::string_view device);

// The table's name for process `pid`.
[[nodiscard]] std::string export_table_name(int pid);

// This process's table, made at its first export and removed (every generation retired first) when the process
// ends normally. Thread-safe.
class ExportTable {
 public:
  static Result<ExportTable*> instance();

  struct Claim {
    std::uint32_t slot = 0;
    std::uint64_t generation = 0;
  };
  // A free entry (retired, no importer left) with a new generation; resource_exhausted when every entry is taken.
  [[nodiscard]] Result<Claim> claim();
  // Retires the export: every importer's next check fails.
  void retire(std::uint32_t slot) noexcept;
  // Whether a live process still imports the export in `slot` (the cells of ended ones are cleared).
  [[nodiscard]] bool still_imported(std::uint32_t slot) noexcept;
  [[nodiscard]] const std::string& name() const noexcept { return object_.name(); }
  // What every export of `claim` holds: kind, element type and count, this process, this table, the entry.
  [[nodiscard]] ExportedBuffer describe(const Claim& claim, DeviceKind kind, DType dtype, std::uint64_t count) const;

  ~ExportTable();

 private:
  explicit ExportTable(SharedObject object) : object_(std::move(object)) {}
  [[nodiscard]] ExportEntry& entry(std::uint32_t slot) const noexcept;

  SharedObject object_;
  std::mutex mutex_;  // claim() against claim()
  std::uint64_t next_generation_ = 1;
};

// Retires every export of the ended process `pid` and removes its table and CPU memory objects (an isolated worker's
// supervisor calls it when the worker is lost, so that nobody mistakes a process that later takes its id for it).
// Absent table: nothing to do. (The first export of every process also removes what killed processes left, and what
// an earlier process with its id left.)
void retire_exports_of(int pid) noexcept;

// An importer's hold on one export: its registration in the exporter's table, given up when destroyed.
class ImportWatch {
 public:
  // Registers this process as an importer of `exported` and checks it is live: `stale_handle` when it was retired
  // (or its exporter ended), `invalid_argument` for a table that is not one.
  static Result<std::unique_ptr<ImportWatch>> open(const ExportedBuffer& exported);
  ImportWatch(const ImportWatch&) = delete;
  ImportWatch& operator=(const ImportWatch&) = delete;
  ~ImportWatch();

  // Whether the export is live: its generation unchanged and its exporter running (an atomic load and a kill(pid, 0)).
  [[nodiscard]] bool live() const noexcept;
  // OK while the export is live; else `stale_handle`, naming it as `operand`.
  [[nodiscard]] Status check(std::string_view operand) const;

 private:
  ImportWatch(std::shared_ptr<const SharedObject> table, const ExportedBuffer& exported, std::uint32_t cell);
  std::shared_ptr<const SharedObject> table_;
  ExportEntry* entry_;
  std::uint64_t generation_;
  int exporter_;
  std::uint32_t cell_;
};

}  // namespace accel::device::sharing
