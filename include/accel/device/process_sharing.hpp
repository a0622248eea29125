/// @file
/// Buffers shared between processes of one host: one process exports a buffer, others import it and use it in
/// place, with the exporter's generation checked on import and on every use.
///
/// @code
///   // process A
///   accel::ExportedBuffer shared = *gpu.export_buffer(x).wait();
///   send_to_b(accel::to_text(shared));                        // plain text: a pipe, a file, an argument
///   // process B
///   accel::ExportedBuffer received = *accel::parse_exported_buffer(text);
///   accel::Buffer<float> x = *gpu.import_buffer<float>(received).wait();   // the same memory, no copy
/// @endcode
///
/// What each kind shares:
///   - CPU: the buffer's memory moves, at its first export, into a POSIX shared memory object; importers map it.
///   - CUDA: the memory moves, at its first export, into an allocation of its own (`cudaMalloc`: memory of a pool is
///     not shareable this way) whose `cudaIpcMemHandle_t` the export carries; importers open it with
///     `cudaIpcOpenMemHandle`, on the same GPU or a peer of it. A process cannot import its own export (CUDA
///     refuses it): use the buffer, or copy_between_devices.
///   - An isolated device exports and imports in its worker process, like every request of it.
/// Exporting again answers the same ExportedBuffer. A buffer whose address another library of the process holds
/// (ShareMemory, DLPack) cannot move, and is refused.
///
/// Staleness: the exporter keeps a table of its exports in shared memory, one generation per export. Freeing the
/// buffer (or resetting, or closing its device, or the exporting process ending — a replaced isolated worker
/// included) retires its generation, and every importer's next use of the buffer answers `stale_handle`, as does
/// an import of it. Memory an importer still maps is never freed under it: a CUDA exporter defers `cudaFree` until
/// its importers have freed their buffers (or ended); a CPU exporter's shared object lives while anyone maps it.
/// (A device closed while other processes still import its buffers frees them all the same: close it after them.)
///
/// Order: nothing orders requests across processes. The importer sees what the exporter's requests had finished
/// writing; wait for the writer's Future before telling the reader to read.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "accel/core/buffer_handle.hpp"
#include "accel/core/result.hpp"
#include "accel/device/requests.hpp"

namespace accel {

/// A buffer exported to the other processes of this host: plain data, passed as text (to_text and
/// parse_exported_buffer). It names memory, not a copy of it, and stays valid while the exporter's buffer lives.
struct ExportedBuffer {
  DeviceKind kind = DeviceKind::cpu;      ///< the exporting device's kind; imported by a device of the same kind
  DType dtype = DType::f32;               ///< element type
  std::uint64_t count = 0;                ///< elements
  std::int32_t process = 0;               ///< the exporting process's id (an isolated device's worker)
  std::uint32_t slot = 0;                 ///< the export's entry in that process's table of exports
  std::uint64_t generation = 0;           ///< the export's generation there; retired when the buffer is freed
  std::array<char, 48> table{};           ///< the shared memory object holding that table (NUL-padded name)
  std::array<std::uint8_t, 64> memory{};  ///< CPU: the memory's shared object (NUL-padded name); CUDA: its IPC handle

  /// The buffer's size in bytes.
  [[nodiscard]] std::uint64_t bytes() const noexcept { return count * size_of(dtype); }
  /// Equal when every field is.
  friend bool operator==(const ExportedBuffer&, const ExportedBuffer&) noexcept = default;
};

/// "accel-buffer-v1:" and the fields in hex: one line, safe for a command line, a pipe or JSON.
[[nodiscard]] std::string to_text(const ExportedBuffer& exported);
/// The ExportedBuffer `text` holds; `invalid_argument` naming what is wrong with it (text from outside is not trusted).
[[nodiscard]] Result<ExportedBuffer> parse_exported_buffer(std::string_view text);

/// Exports `buffer` to other processes of the host (see the file's description) and answers how to import it.
struct ExportBuffer {
  static constexpr const char* kName = "ExportBuffer";
  using Response = ExportedBuffer;
  BufferHandle buffer;  ///< the buffer to export
};

/// Answers a new buffer of this device over the memory `exported` names (another process's buffer), checked on
/// import and on every use against the exporter's generation: `stale_handle` once the exporter freed it.
/// Freeing the new buffer lets go of the memory, not the exporter's buffer.
struct ImportBuffer {
  static constexpr const char* kName = "ImportBuffer";
  using Response = BufferHandle;
  ExportedBuffer exported;  ///< what the exporter answered
};

}  // namespace accel
