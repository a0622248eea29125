// What the Python module's files share: the binding functions each file defines, errors raised as Python exceptions,
// and the device and buffer types the request bindings read.
//
// Note [The GIL and accel's threads]
// accel answers requests on its actors' threads, which never hold the GIL. The module therefore keeps Python objects
// away from those threads: a completion stores C++ values only (FutureCore), and touches Python (done callbacks, the
// host arrays a copy reads or writes) only after taking the GIL, never while the interpreter is finalizing. Every
// wait for C++ (Future.result, a copy, a model load) releases the GIL and wakes every 100 ms to let signals in. Sending
// a request releases it too (send_released, futures.hpp): a send may wait for room (an isolated device's channel) that
// only an accel thread can make, and that thread may be waiting for the GIL to run a done callback.
#pragma once

#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "accel/core/result.hpp"
#include "accel/device/device.hpp"

namespace accel::python {

namespace nb = nanobind;

// -- errors (errors.cpp) ----------------------------------------------------------
// Raises the Python exception of the status's code (accel.InvalidArgument, accel.StaleHandle, ...: python/accel/
// _errors.py), its message the C++ Status::to_string(). Needs the GIL.
[[noreturn]] void raise_status(const Status& status);

template <class T>
T unwrap(Result<T> result) {
  if (!result.ok()) raise_status(result.status());
  return *std::move(result);
}

// Waits for `future` with the GIL released (Note [The GIL and accel's threads]), then unwraps it.
template <class T>
T wait_released(Future<T> future);

// -- devices (devices.cpp) --------------------------------------------------------
// A device as Python holds it: the device and the System its actors belong to, kept alive as long as the device.
struct PyDevice {
  std::shared_ptr<System> system;
  Device device;

  // StaleHandle once the device was closed (its buffers name memory that is gone); else the device's health.
  void check_open(std::string_view what) const;
};

// The System of devices (and pools) opened without one: made on first use, shut down at interpreter exit
// (accel._shutdown, registered with atexit by python/accel/__init__.py) so that no actor thread outlives the
// interpreter's objects.
std::shared_ptr<System>& default_system();

// -- buffers (buffers.cpp) --------------------------------------------------------
// accel.Buffer: a device buffer of one dtype with a shape (C++ buffers have a length only). The allocation is owned
// through the typed Buffer<T> it was made as (type-erased here); copies of the Python object share it.
struct PyBuffer {
  PyDevice device;
  std::shared_ptr<const void> owner;
  BufferHandle handle;
  std::vector<std::int64_t> shape;

  // The handle for a request on `device`, after checking that this buffer's device is the same and still open.
  [[nodiscard]] BufferHandle use_on(const PyDevice& on, std::string_view operand) const;
};

// Allocates a buffer of `count` elements of `dtype` with the given shape (GIL released while waiting).
PyBuffer allocate_buffer(const PyDevice& device, DType dtype, std::vector<std::int64_t> shape);
// A new buffer holding a copy of `value` (anything numpy.ascontiguousarray takes, converted to `dtype` unless None).
PyBuffer upload_array(const PyDevice& device, nb::handle value, nb::handle dtype);
// The memory of `array` (a C-contiguous array on the host that nanobind's ndarray takes: NumPy's, or a pinned torch
// tensor's) as a host copy names it: InvalidArgument for a dtype accel lacks, TypeError for what is not such an array.
[[nodiscard]] HostDestination host_memory_of(nb::handle array);
// Whether `array` (as above) may be written.
[[nodiscard]] bool writable(nb::handle array);
// host_memory_of(array), to be copied to or from `buffer`: same dtype and element count, and writable when `written`
// (InvalidArgument naming what differs).
[[nodiscard]] HostDestination host_memory_for(nb::handle array, const PyBuffer& buffer, bool written);
// DType from its Python name ("float32", "complex64", ...) or a NumPy dtype; InvalidArgument naming it otherwise.
DType dtype_from_python(nb::handle value);
std::string dtype_name(DType dtype);
// A dtype as DLPack codes it (code: 0 int, 1 uint, 2 float, 4 bfloat, 5 complex; one lane), both ways.
struct DLPackType {
  std::uint8_t code = 0;
  std::uint8_t bits = 0;
};
[[nodiscard]] DLPackType dlpack_type_of(DType dtype);
[[nodiscard]] std::optional<DType> dtype_of_dlpack(DLPackType type);

// -- binding functions, one per file ----------------------------------------------
void bind_errors(nb::module_& module);
void bind_futures(nb::module_& module);
void bind_devices(nb::module_& module);
void bind_buffers(nb::module_& module);  // and, from it:
void bind_interop(nb::module_& module, nb::class_<PyBuffer>& buffer);
void bind_requests(nb::module_& module);  // and, from it:
void bind_blas_requests(nb::module_& module);
void bind_solver_requests(nb::module_& module);
void bind_sparse_requests(nb::module_& module);
void bind_embeddings(nb::module_& module);
void bind_pool(nb::module_& module);
void bind_recording(nb::module_& module);
void bind_graphs(nb::module_& module);
void bind_collectives(nb::module_& module);
void bind_dnn_requests(nb::module_& module);
void bind_dnn_graphs(nb::module_& module);
void bind_jit_requests(nb::module_& module);

}  // namespace accel::python
