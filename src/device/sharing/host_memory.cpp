#include "device/sharing/host_memory.hpp"

#include "operation/host_slack.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>

namespace accel::device::sharing {

Result<std::unique_ptr<ExportedHostMemory>> ExportedHostMemory::create(DType dtype, std::uint64_t count) {
  ACCEL_ASSIGN_OR_RETURN(ExportTable * table, ExportTable::instance());
  ACCEL_ASSIGN_OR_RETURN(const ExportTable::Claim claim, table->claim());
  ExportedBuffer exported = table->describe(claim, DeviceKind::cpu, dtype, count);
  const std::string name = fmt::format("/accel-buffer-{}-{}", exported.process, claim.generation);
  Result<SharedObject> memory = SharedObject::create(name, exported.bytes() + 2 * kHostSlackBytes);
  if (!memory.ok()) {
    table->retire(claim.slot);
    return memory.status();
  }
  std::memcpy(exported.memory.data(), name.data(), name.size());  // kMaxNameBytes leaves room for the NUL
  return std::unique_ptr<ExportedHostMemory>(new ExportedHostMemory(*table, std::move(*memory), exported));
}

ExportedHostMemory::~ExportedHostMemory() {
  table_.retire(exported_.slot);
  memory_.unlink();
}

Result<std::unique_ptr<ImportedHostMemory>> ImportedHostMemory::open(const ExportedBuffer& exported) {
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<ImportWatch> watch, ImportWatch::open(exported));
  const char* name = reinterpret_cast<const char*>(exported.memory.data());
  Result<SharedObject> memory = SharedObject::open(std::string(name, ::strnlen(name, exported.memory.size())),
                                                   exported.bytes() + 2 * kHostSlackBytes);
  if (memory.status().raw_code() == ENOENT) {  // freed between the watch's check and now
    return Status(Code::stale_handle, "ImportBuffer: the exported buffer was freed by the process that exported it");
  }
  ACCEL_RETURN_IF_ERROR(memory.status());
  return std::unique_ptr<ImportedHostMemory>(new ImportedHostMemory(std::move(watch), std::move(*memory)));
}

}  // namespace accel::device::sharing
