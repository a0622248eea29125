#include "device/sharing/export_table.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <string_view>

namespace accel::device::sharing {
namespace {

constexpr std::uint64_t kTableMagic = 0x31'70'78'65'6c'65'63'61;  // "accelexp1", little-endian, cut to 8
constexpr std::uint32_t kTableVersion = 1;

struct alignas(64) TableHeader {
  std::uint64_t magic = kTableMagic;
  std::uint32_t version = kTableVersion;
  std::uint32_t entries = kExportEntries;
};
constexpr std::size_t kTableBytes = sizeof(TableHeader) + kExportEntries * sizeof(ExportEntry);

ExportEntry* entries_of(const SharedObject& table) {
  return reinterpret_cast<ExportEntry*>(static_cast<std::byte*>(table.data()) + sizeof(TableHeader));
}

std::mutex instance_mutex;

// This process's table, made by instance(); a static, so that a normal exit retires every export of this process.
struct TableAtExit {
  std::unique_ptr<ExportTable> table;
  int owner = 0;  // the process that made it (a forked child makes its own)
  ~TableAtExit() {
    // A forked child inherits the parent's table and must not retire the parent's exports.
    if (owner != ::getpid()) (void)table.release();
  }
};
TableAtExit at_exit;

std::mutex imported_tables_mutex;
std::map<std::string, std::weak_ptr<const SharedObject>> imported_tables;

Result<std::shared_ptr<const SharedObject>> open_table(const std::string& name) {
  std::lock_guard lock(imported_tables_mutex);
  if (std::shared_ptr<const SharedObject> open = imported_tables[name].lock()) return open;
  ACCEL_ASSIGN_OR_RETURN(SharedObject table, SharedObject::open(name, kTableBytes));
  const TableHeader& header = *static_cast<const TableHeader*>(table.data());
  if (header.magic != kTableMagic || header.version != kTableVersion || header.entries != kExportEntries)
    return invalid_argument(
        fmt::format("the shared memory object {} is no table of exports (version {})", name, kTableVersion));
  auto shared = std::make_shared<const SharedObject>(std::move(table));
  imported_tables[name] = shared;
  return shared;
}

void retire_all(const SharedObject& table) noexcept {
  ExportEntry* entries = entries_of(table);
  for (std::uint32_t slot = 0; slot < kExportEntries; ++slot) entries[slot].generation.store(0);
}

// The process id in a name this module gives ("/accel-exports-<pid>", "/accel-buffer-<pid>-<generation>"), or 0.
int owner_of(std::string_view name) {
  for (const std::string_view prefix : {std::string_view("accel-exports-"), std::string_view("accel-buffer-")}) {
    if (!name.starts_with(prefix)) continue;
    int pid = 0;
    for (const char c : name.substr(prefix.size())) {
      if (c < '0' || c > '9' || pid > 100'000'000) break;
      pid = pid * 10 + (c - '0');
    }
    return pid;
  }
  return 0;
}

// Removes the tables and CPU memory objects of the ended processes `ended` picks: /dev/shm is memory, and what a killed
// process left there would stay until the host restarts. Their importers' mappings stay valid.
template <class Ended>
void remove_objects_of(Ended&& ended) {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/dev/shm", error)) {
    const std::string name = entry.path().filename().string();
    const int pid = owner_of(name);
    if (pid > 0 && ended(pid)) ::shm_unlink(("/" + name).c_str());
  }
}

}  // namespace

std::string export_table_name(int pid) { return fmt::format("/accel-exports-{}", pid); }

Result<ExportTable*> ExportTable::instance() {
  std::lock_guard lock(instance_mutex);
  const int self = ::getpid();
  if (at_exit.table != nullptr && at_exit.owner == self) return at_exit.table.get();
  // What ended processes left, and what an earlier process with this id left (nothing of ours exists before this
  // table).
  remove_objects_of([self](int pid) { return pid == self || !process_alive(pid); });
  const std::string name = export_table_name(self);
  Result<SharedObject> object = SharedObject::create(name, kTableBytes);
  ACCEL_RETURN_IF_ERROR(object.status());
  new (object->data()) TableHeader{};                        // the entries are zero bytes: no export, no importer
  if (at_exit.owner != self) (void)at_exit.table.release();  // the parent's, in a forked child
  at_exit.table.reset(new ExportTable(std::move(*object)));
  at_exit.owner = self;
  return at_exit.table.get();
}

ExportTable::~ExportTable() {
  retire_all(object_);
  object_.unlink();
}

ExportEntry& ExportTable::entry(std::uint32_t slot) const noexcept { return entries_of(object_)[slot]; }

ExportedBuffer ExportTable::describe(const Claim& claim, DeviceKind kind, DType dtype, std::uint64_t count) const {
  ExportedBuffer exported{.kind = kind,
                          .dtype = dtype,
                          .count = count,
                          .process = static_cast<std::int32_t>(::getpid()),
                          .slot = claim.slot,
                          .generation = claim.generation};
  std::copy_n(name().begin(), std::min(name().size(), exported.table.size() - 1), exported.table.begin());
  return exported;
}

Result<ExportTable::Claim> ExportTable::claim() {
  std::lock_guard lock(mutex_);
  for (std::uint32_t slot = 0; slot < kExportEntries; ++slot) {
    if (entry(slot).generation.load() != 0 || still_imported(slot)) continue;
    const std::uint64_t generation = next_generation_++;
    entry(slot).generation.store(generation);
    return Claim{.slot = slot, .generation = generation};
  }
  return Status(Code::resource_exhausted,
                fmt::format("{} buffers of this process are exported, or still imported by other processes after "
                            "being freed: free some first",
                            kExportEntries));
}

void ExportTable::retire(std::uint32_t slot) noexcept { entry(slot).generation.store(0); }

bool ExportTable::still_imported(std::uint32_t slot) noexcept {
  bool imported = false;
  for (std::atomic<std::int32_t>& cell : entry(slot).importers) {
    std::int32_t pid = cell.load();
    if (pid == 0) continue;
    if (process_alive(pid)) {
      imported = true;
    } else {
      cell.compare_exchange_strong(pid, 0);  // an importer that ended without letting go
    }
  }
  return imported;
}

void retire_exports_of(int pid) noexcept {
  const std::string name = export_table_name(pid);
  Result<SharedObject> table = SharedObject::open(name, kTableBytes);
  if (!table.ok()) return;
  const TableHeader& header = *static_cast<const TableHeader*>(table->data());
  if (header.magic == kTableMagic && header.entries == kExportEntries) retire_all(*table);
  remove_objects_of([pid](int owner) { return owner == pid; });
}

Result<std::unique_ptr<ImportWatch>> ImportWatch::open(const ExportedBuffer& exported) {
  const std::string name(exported.table.data(), ::strnlen(exported.table.data(), exported.table.size()));
  if (exported.slot >= kExportEntries)
    return invalid_argument(
        fmt::format("ImportBuffer: export entry {} is past the table's {}", exported.slot, kExportEntries));
  Result<std::shared_ptr<const SharedObject>> table = open_table(name);
  if (table.status().raw_code() == ENOENT) {
    return Status(Code::stale_handle, fmt::format("ImportBuffer: the exporting process {} has ended (its table {} is "
                                                  "gone)",
                                                  exported.process, name));
  }
  ACCEL_RETURN_IF_ERROR(table.status());
  ExportEntry& entry = entries_of(**table)[exported.slot];
  const std::int32_t self = ::getpid();
  for (std::uint32_t cell = 0; cell < kImportersPerExport; ++cell) {
    std::int32_t expected = 0;
    if (!entry.importers[cell].compare_exchange_strong(expected, self)) continue;
    std::unique_ptr<ImportWatch> watch(new ImportWatch(std::move(*table), exported, cell));
    ACCEL_RETURN_IF_ERROR(watch->check("the exported buffer"));  // the destructor gives the cell back
    return watch;
  }
  return Status(Code::resource_exhausted,
                fmt::format("ImportBuffer: {} processes import this buffer already, the most one export serves",
                            kImportersPerExport));
}

ImportWatch::ImportWatch(std::shared_ptr<const SharedObject> table, const ExportedBuffer& exported, std::uint32_t cell)
    : table_(std::move(table)),
      entry_(&entries_of(*table_)[exported.slot]),
      generation_(exported.generation),
      exporter_(exported.process),
      cell_(cell) {}

ImportWatch::~ImportWatch() {
  std::int32_t self = ::getpid();
  entry_->importers[cell_].compare_exchange_strong(self, 0);
}

bool ImportWatch::live() const noexcept { return entry_->generation.load() == generation_ && process_alive(exporter_); }

Status ImportWatch::check(std::string_view operand) const {
  if (live()) return Status();
  return Status(Code::stale_handle,
                fmt::format("{} was freed by the process that exported it (process {}, export generation {})", operand,
                            exporter_, generation_));
}

}  // namespace accel::device::sharing
