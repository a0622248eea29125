// Buffers of a CUDA device shared with other processes (accel/device/process_sharing.hpp): CUDA IPC memory handles
// over allocations of their own, with the generations of device/sharing/export_table.hpp.
#include <unistd.h>

#include <fmt/format.h>

#include <cstring>

#include "device/cuda/cuda_context.hpp"

namespace accel::device::cuda {

Result<ExportedBuffer> CudaContext::export_buffer(cudaStream_t stream, const BufferHandle& handle) {
  ACCEL_ASSIGN_OR_RETURN(const BufferView view, table_.resolve(handle, "buffer"));
  free_unimported_exports();
  if (auto done = exports_.find(handle.generation); done != exports_.end()) return done->second.exported;
  if (imports_.contains(handle.generation)) {
    return failed_precondition(fmt::format(
        "ExportBuffer: {} is imported from another process; pass on the ExportedBuffer it was imported from",
        to_string(handle)));
  }
  if (table_.is_shared(handle)) {
    return failed_precondition(
        fmt::format("ExportBuffer: {} is memory another library of this process holds "
                    "(ShareMemory, DLPack); export a buffer before sharing it in-process",
                    to_string(handle)));
  }
  ACCEL_ASSIGN_OR_RETURN(sharing::ExportTable * table, sharing::ExportTable::instance());
  ACCEL_ASSIGN_OR_RETURN(const sharing::ExportTable::Claim claim, table->claim());
  // Pool memory has no IPC handle: the buffer moves into an allocation of its own, after every use of the old one.
  void* memory = nullptr;
  cudaIpcMemHandle_t ipc{};
  Status moved = check(cudaSetDevice(ordinal_), "cudaSetDevice");
  if (moved.ok()) moved = check(cudaMalloc(&memory, view.bytes()), "cudaMalloc (an exported buffer's memory)");
  if (moved.ok()) moved = check(cudaIpcGetMemHandle(&ipc, memory), "cudaIpcGetMemHandle");
  if (moved.ok()) moved = order_all_before_free(stream, handle);
  if (moved.ok()) {
    moved = check(cudaMemcpyAsync(memory, view.data, view.bytes(), cudaMemcpyDeviceToDevice, stream),
                  "cudaMemcpyAsync (an exported buffer's contents)");
  }
  if (moved.ok()) moved = check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (an exported buffer's move)");
  if (!moved.ok()) {
    if (memory != nullptr) cudaFree(memory);
    table->retire(claim.slot);
    return moved;
  }
  ACCEL_ASSIGN_OR_RETURN(void* old, table_.hand_over(handle, memory));
  ACCEL_RETURN_IF_ERROR(check(cudaFreeAsync(old, stream), "cudaFreeAsync (an exported buffer's old memory)"));
  ExportedBuffer exported = table->describe(claim, DeviceKind::cuda, view.dtype, view.count);
  static_assert(sizeof ipc <= sizeof exported.memory);
  std::memcpy(exported.memory.data(), &ipc, sizeof ipc);
  exports_.emplace(handle.generation, SharedAllocation{.memory = memory, .bytes = view.bytes(), .exported = exported});
  return exported;
}

Result<BufferHandle> CudaContext::import_buffer(const ExportedBuffer& exported) {
  ACCEL_RETURN_IF_ERROR(sharing::check_import(exported, DeviceKind::cuda, name_));
  if (exported.process == ::getpid()) {
    return invalid_argument(
        fmt::format("ImportBuffer: the buffer was exported by this process ({}), whose own exports "
                    "CUDA cannot open: use the buffer itself, or copy_between_devices",
                    exported.process));
  }
  ACCEL_ASSIGN_OR_RETURN(std::unique_ptr<sharing::ImportWatch> watch, sharing::ImportWatch::open(exported));
  ACCEL_RETURN_IF_ERROR(check(cudaSetDevice(ordinal_), "cudaSetDevice"));
  cudaIpcMemHandle_t ipc{};
  std::memcpy(&ipc, exported.memory.data(), sizeof ipc);
  void* memory = nullptr;
  // A handle CUDA does not recognise is the exporter's mistake or a stranger's bytes, not this device's fault.
  if (const cudaError_t error = cudaIpcOpenMemHandle(&memory, ipc, cudaIpcMemLazyEnablePeerAccess);
      error != cudaSuccess) {
    (void)cudaGetLastError();
    return invalid_argument(fmt::format("ImportBuffer: cudaIpcOpenMemHandle on {} refused the exported buffer: {}",
                                        name_, cudaGetErrorString(error)));
  }
  const BufferHandle handle = table_.insert_imported(memory, exported.dtype, exported.count, *watch);
  ++stats_.live_buffers;
  imports_.emplace(handle.generation,
                   SharedAllocation{.memory = memory, .bytes = exported.bytes(), .watch = std::move(watch)});
  return handle;
}

bool CudaContext::release_shared(const BufferHandle& handle) {
  if (auto imported = imports_.find(handle.generation); imported != imports_.end()) {
    cudaIpcCloseMemHandle(imported->second.memory);
    imports_.erase(imported);
    return true;
  }
  auto exported = exports_.find(handle.generation);
  if (exported == exports_.end()) return false;
  if (Result<sharing::ExportTable*> table = sharing::ExportTable::instance(); table.ok())
    (*table)->retire(exported->second.exported.slot);
  stats_.in_use_bytes -= exported->second.bytes;
  ++stats_.frees;
  retired_exports_.push_back(std::move(exported->second));
  exports_.erase(exported);
  free_unimported_exports();
  return true;
}

void CudaContext::free_unimported_exports() {
  Result<sharing::ExportTable*> table = sharing::ExportTable::instance();
  if (!table.ok()) return;
  std::erase_if(retired_exports_, [&](const SharedAllocation& retired) {
    if ((*table)->still_imported(retired.exported.slot)) return false;
    cudaFree(retired.memory);
    return true;
  });
}

void CudaContext::retire_exports() {
  Result<sharing::ExportTable*> table = sharing::ExportTable::instance();
  for (auto& [generation, exported] : exports_) {
    if (table.ok()) (*table)->retire(exported.exported.slot);
    retired_exports_.push_back(std::move(exported));
  }
  exports_.clear();
}

void CudaContext::release_all_shared(bool closing) {
  for (auto& [generation, imported] : imports_) cudaIpcCloseMemHandle(imported.memory);
  imports_.clear();
  retire_exports();
  if (!closing) {
    free_unimported_exports();
    return;
  }
  // The context's memory goes now, imported elsewhere or not (process_sharing.hpp says so).
  for (const SharedAllocation& retired : retired_exports_) cudaFree(retired.memory);
  retired_exports_.clear();
}

}  // namespace accel::device::cuda
