// The text of an ExportedBuffer (accel/device/process_sharing.hpp), which a process reads from another (a pipe, a
// file, an argument) before importing the buffer: any bytes. What it accepts must pass the import's own checks and
// write back as the very text it was read from.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "accel/device/process_sharing.hpp"
#include "device/sharing/export_table.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const accel::Result<accel::ExportedBuffer> exported = accel::parse_exported_buffer(text);
  if (!exported.ok()) return 0;
  if (!accel::device::sharing::check_exported(*exported).ok()) std::abort();
  if (accel::to_text(*exported) != text) std::abort();
  if (exported->count == 0 || exported->generation == 0 || exported->process <= 0) std::abort();
  return 0;
}
