// Memory shared with NumPy, PyTorch and CuPy without copies, through the device's ShareMemory request: accel.Buffer's
// __dlpack__, __dlpack_device__ and __cuda_array_interface__, and accel.from_dlpack (docs/ARCHITECTURE.md, "Python").
//
// Note [Shared memory's lifetime]
// An exported capsule owns a copy of the PyBuffer (so the buffer's memory lives until the consumer's deleter runs,
// on any thread: it touches no Python object). An adopted tensor's producer (its capsule, renamed "used_..." as DLPack
// asks, and its deleter) lives in a capsule of accel's own that the buffer's owner holds; when the last reference to
// the buffer goes, the owner frees the buffer with a Free request and keeps the producer alive until that request is
// answered, which follows every request sent to the device before it (a CUDA stream finishes its work on external
// memory before answering Free). Closing a device frees its buffers' memory even while a consumer still maps it.
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>
#include <charconv>
#include <memory>

#include "python/dlpack.hpp"
#include "python/futures.hpp"

namespace accel::python {

using namespace nb::literals;

namespace {

int ordinal_of(const PyDevice& device) {
  const std::string& name = device.device.name();  // "cuda:1"
  int ordinal = 0;
  const std::size_t colon = name.rfind(':');
  if (colon != std::string::npos) std::from_chars(name.data() + colon + 1, name.data() + name.size(), ordinal);
  return ordinal;
}

// DLPack's (device_type, device_id) for the buffers of `device`.
std::pair<std::int32_t, std::int32_t> dlpack_device_of(const PyDevice& device) {
  if (device.device.kind() == DeviceKind::cpu) return {dlpack::kCpu, 0};
  return {dlpack::kCuda, ordinal_of(device)};
}

SharedMemory share(const PyDevice& device, ShareMemory request) {
  return wait_released(send_released([&] { return device.device.ask(request); }));
}

// What an exported capsule owns (Note [Shared memory's lifetime]).
struct Export {
  PyBuffer buffer;
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> strides;
  dlpack::ManagedTensor legacy{};
  dlpack::ManagedTensorVersioned versioned{};
};

template <class Managed>
void delete_export(Managed* managed) {
  delete static_cast<Export*>(managed->manager_ctx);
}

// An unconsumed capsule frees what it owns; a consumed one was renamed and its consumer calls the deleter.
template <class Managed>
void export_capsule_destructor(PyObject* capsule) {
  const char* name = std::is_same_v<Managed, dlpack::ManagedTensor> ? dlpack::kLegacyName : dlpack::kVersionedName;
  if (!PyCapsule_IsValid(capsule, name)) return;
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  managed->deleter(managed);
}

// The consumer's stream for a ShareMemory export, from __dlpack__'s `stream` (None: CUDA's legacy default stream).
void set_consumer_stream(ShareMemory& request, std::int32_t device_type, nb::handle stream) {
  if (device_type == dlpack::kCpu) {
    if (!stream.is_none() && nb::cast<std::int64_t>(stream) != -1) {
      throw nb::value_error("accel.Buffer.__dlpack__: a CPU device's buffer takes stream=None");
    }
    return;
  }
  const std::int64_t value = stream.is_none() ? 1 : nb::cast<std::int64_t>(stream);
  if (value == 0) throw nb::value_error("accel.Buffer.__dlpack__: stream=0 is ambiguous (DLPack): pass 1 or 2");
  if (value == -1) return;  // the consumer orders itself
  request.order_consumer = true;
  request.consumer_stream = static_cast<std::uint64_t>(value);
}

nb::object export_dlpack(const PyBuffer& buffer, nb::handle stream, nb::handle max_version, nb::handle dl_device,
                         nb::handle copy) {
  buffer.device.check_open("the buffer");
  const auto [device_type, device_id] = dlpack_device_of(buffer.device);
  if (!dl_device.is_none()) {
    const auto wanted = nb::cast<std::pair<std::int32_t, std::int32_t>>(dl_device);
    if (wanted.first != device_type || wanted.second != device_id) {
      throw nb::buffer_error(fmt::format("accel.Buffer.__dlpack__: the buffer is on DLPack device ({}, {}), not ({}, "
                                         "{}); accel shares memory and does not copy it",
                                         device_type, device_id, wanted.first, wanted.second)
                                 .c_str());
    }
  }
  if (!copy.is_none() && nb::cast<bool>(copy)) {
    throw nb::buffer_error("accel.Buffer.__dlpack__: copy=True: accel shares its buffers' memory and does not copy");
  }
  ShareMemory request{.buffer = buffer.handle};
  set_consumer_stream(request, device_type, stream);
  const SharedMemory shared = share(buffer.device, request);
  const DLPackType type = dlpack_type_of(buffer.handle.dtype);

  auto owned = std::make_unique<Export>(Export{.buffer = buffer, .shape = buffer.shape});
  Export& exported = *owned;
  exported.strides.assign(exported.shape.size(), 1);
  for (std::size_t i = exported.shape.size(); i-- > 1;) {
    exported.strides[i - 1] = exported.strides[i] * exported.shape[i];
  }
  const dlpack::Tensor tensor{.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(shared.address)),
                              .device = {device_type, device_id},
                              .ndim = static_cast<std::int32_t>(exported.shape.size()),
                              .dtype = {type.code, type.bits, 1},
                              .shape = exported.shape.data(),
                              .strides = exported.strides.data(),
                              .byte_offset = 0};
  const bool versioned = !max_version.is_none() && nb::cast<std::int64_t>(nb::tuple(max_version)[0]) >= 1;
  PyObject* capsule = nullptr;
  if (versioned) {
    exported.versioned = {.version = {dlpack::kMajorVersion, dlpack::kMinorVersion},
                          .manager_ctx = &exported,
                          .deleter = &delete_export<dlpack::ManagedTensorVersioned>,
                          .flags = 0,
                          .dl_tensor = tensor};
    capsule = PyCapsule_New(&exported.versioned, dlpack::kVersionedName,
                            &export_capsule_destructor<dlpack::ManagedTensorVersioned>);
  } else {
    exported.legacy = {.dl_tensor = tensor, .manager_ctx = &exported, .deleter = &delete_export<dlpack::ManagedTensor>};
    capsule = PyCapsule_New(&exported.legacy, dlpack::kLegacyName, &export_capsule_destructor<dlpack::ManagedTensor>);
  }
  if (capsule == nullptr) throw nb::python_error();
  (void)owned.release();  // the capsule owns it now
  return nb::steal(capsule);
}

nb::dict cuda_array_interface(const PyBuffer& buffer) {
  if (buffer.device.device.kind() != DeviceKind::cuda) {
    throw nb::attribute_error(fmt::format("accel.Buffer on {} has no __cuda_array_interface__ (a CUDA device's "
                                          "buffer has one); use __dlpack__ or numpy()",
                                          buffer.device.device.name())
                                  .c_str());
  }
  buffer.device.check_open("the buffer");
  if (buffer.handle.dtype == DType::bf16) {
    raise_status(not_supported("__cuda_array_interface__ has no typestr for bfloat16; use __dlpack__"));
  }
  // The stream consumers synchronise on: this device's, ordered after the buffer's users on every stream of it.
  const SharedMemory stream = share(buffer.device, ShareMemory{});
  const SharedMemory shared = share(
      buffer.device, ShareMemory{.buffer = buffer.handle, .consumer_stream = stream.stream, .order_consumer = true});
  nb::dict interface;
  interface["shape"] = nb::tuple(nb::cast(buffer.shape));
  interface["typestr"] = nb::module_::import_("numpy").attr("dtype")(dtype_name(buffer.handle.dtype)).attr("str");
  interface["data"] = nb::make_tuple(shared.address, false);
  interface["strides"] = nb::none();
  interface["version"] = 3;
  interface["stream"] = shared.stream;
  return interface;
}

// -- adopting another library's memory ----------------------------------------------------------------

// Calls the producer's deleter when accel's capsule over it goes (with the GIL, as a capsule destructor runs).
template <class Managed>
void producer_capsule_destructor(PyObject* capsule) {
  auto* managed = static_cast<Managed*>(PyCapsule_GetPointer(capsule, "accel.dlpack_producer"));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

// An adopted buffer's owner (Note [Shared memory's lifetime]).
struct Adopted {
  PyDevice device;
  BufferHandle handle;
  nb::object producer;
};

void release_adopted(Adopted* adopted) {
  std::unique_ptr<Adopted> owned(adopted);
  if (!nb::is_alive()) {
    (void)owned->producer.release();  // the interpreter is gone: the producer's deleter may not run
    return;
  }
  nb::gil_scoped_acquire gil;
  Future<Done> freed = send_released([&] { return owned->device.device.free(owned->handle); });
  (void)make_done_future(std::move(freed), std::move(owned->producer));
}

bool device_matches(const PyDevice& device, const dlpack::Device& dl) {
  if (device.device.kind() == DeviceKind::cpu)
    return dl.device_type == dlpack::kCpu || dl.device_type == dlpack::kCudaHost;
  return (dl.device_type == dlpack::kCuda || dl.device_type == dlpack::kCudaManaged) &&
         dl.device_id == ordinal_of(device);
}

// The element count of a C-contiguous tensor; InvalidArgument naming what is wrong otherwise.
std::uint64_t check_tensor(const PyDevice& device, const dlpack::Tensor& tensor) {
  if (!device_matches(device, tensor.device)) {
    raise_status(
        invalid_argument(fmt::format("accel.from_dlpack: the tensor is on DLPack device ({}, {}), not on {}",
                                     tensor.device.device_type, tensor.device.device_id, device.device.name())));
  }
  std::uint64_t count = 1;
  for (std::int32_t i = 0; i < tensor.ndim; ++i) count *= static_cast<std::uint64_t>(tensor.shape[i]);
  if (count == 0) raise_status(invalid_argument("accel.from_dlpack: the tensor holds no elements"));
  std::int64_t expected = 1;
  for (std::int32_t i = tensor.ndim; i-- > 0;) {
    const std::int64_t extent = tensor.shape[i];
    if (tensor.strides != nullptr && extent != 1 && tensor.strides[i] != expected) {
      raise_status(
          invalid_argument(fmt::format("accel.from_dlpack: the tensor is not C-contiguous (dimension {} has "
                                       "stride {}, not {}); pass a contiguous copy",
                                       i, tensor.strides[i], expected)));
    }
    expected *= extent;
  }
  return count;
}

template <class Managed>
PyBuffer adopt(const PyDevice& device, nb::handle capsule, const char* used_name, Managed* managed, bool read_only) {
  const dlpack::Tensor& tensor = managed->dl_tensor;
  const std::optional<DType> dtype =
      tensor.dtype.lanes == 1 ? dtype_of_dlpack({tensor.dtype.code, tensor.dtype.bits}) : std::nullopt;
  if (!dtype) {
    raise_status(
        invalid_argument(fmt::format("accel.from_dlpack: DLPack dtype (code {}, {} bits, {} lanes) has no "
                                     "accel dtype",
                                     tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)));
  }
  const std::uint64_t count = check_tensor(device, tensor);
  if (read_only) {
    raise_status(
        invalid_argument("accel.from_dlpack: the tensor is read-only, and accel's requests may write any "
                         "buffer; pass a writable copy"));
  }
  std::vector<std::int64_t> shape(tensor.shape, tensor.shape + tensor.ndim);
  const std::uint64_t address = reinterpret_cast<std::uintptr_t>(tensor.data) + tensor.byte_offset;
  // Consumed: the producer's memory is accel's to release from here on (through `producer`).
  if (PyCapsule_SetName(capsule.ptr(), used_name) != 0) throw nb::python_error();
  PyObject* raw = PyCapsule_New(managed, "accel.dlpack_producer", &producer_capsule_destructor<Managed>);
  if (raw == nullptr) {
    managed->deleter(managed);
    throw nb::python_error();
  }
  nb::object producer = nb::steal(raw);
  const SharedMemory shared = share(device, ShareMemory{.address = address, .dtype = *dtype, .count = count});
  auto* adopted = new Adopted{.device = device, .handle = shared.buffer, .producer = std::move(producer)};
  std::shared_ptr<const void> owner(adopted, [adopted](const void*) { release_adopted(adopted); });
  return PyBuffer{.device = device, .owner = std::move(owner), .handle = shared.buffer, .shape = std::move(shape)};
}

PyBuffer adopt_capsule(const PyDevice& device, nb::handle capsule) {
  PyObject* raw = capsule.ptr();
  if (PyCapsule_IsValid(raw, dlpack::kVersionedName)) {
    auto* managed = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(raw, dlpack::kVersionedName));
    if (managed->version.major != dlpack::kMajorVersion) {
      raise_status(not_supported(fmt::format("accel.from_dlpack: DLPack {}.{} is not supported (accel reads 1.x)",
                                             managed->version.major, managed->version.minor)));
    }
    return adopt(device, capsule, dlpack::kUsedVersionedName, managed, (managed->flags & dlpack::kFlagReadOnly) != 0);
  }
  if (PyCapsule_IsValid(raw, dlpack::kLegacyName)) {
    auto* managed = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(raw, dlpack::kLegacyName));
    return adopt(device, capsule, dlpack::kUsedLegacyName, managed, false);
  }
  if (PyCapsule_IsValid(raw, dlpack::kUsedVersionedName) || PyCapsule_IsValid(raw, dlpack::kUsedLegacyName)) {
    raise_status(
        invalid_argument("accel.from_dlpack: the DLPack capsule was consumed already (a capsule is "
                         "consumed once); ask its producer's __dlpack__ for another"));
  }
  raise_status(invalid_argument("accel.from_dlpack: the capsule is not a DLPack tensor"));
}

PyBuffer from_dlpack(nb::object source, const PyDevice& device) {
  device.check_open("accel.from_dlpack's device");
  if (PyCapsule_CheckExact(source.ptr())) return adopt_capsule(device, source);
  if (!nb::hasattr(source, "__dlpack__")) {
    raise_status(invalid_argument(
        fmt::format("accel.from_dlpack: a {} has no __dlpack__", nb::cast<std::string>(nb::type_name(source.type())))));
  }
  if (nb::hasattr(source, "__dlpack_device__")) {
    const auto [type, id] = nb::cast<std::pair<std::int32_t, std::int32_t>>(source.attr("__dlpack_device__")());
    if (!device_matches(device, dlpack::Device{type, id})) {
      raise_status(
          invalid_argument(fmt::format("accel.from_dlpack: the tensor is on DLPack device ({}, {}), not on "
                                       "{}; copy it there first",
                                       type, id, device.device.name())));
    }
  }
  // A CUDA producer orders its work before accel's stream (DLPack's stream hand-off); the CPU has no streams.
  nb::object stream = nb::none();
  if (device.device.kind() == DeviceKind::cuda) stream = nb::cast(share(device, ShareMemory{}).stream);
  nb::object capsule;
  try {
    capsule = source.attr("__dlpack__")("stream"_a = stream, "max_version"_a = nb::make_tuple(1, 1));
  } catch (nb::python_error& error) {
    if (!error.matches(PyExc_TypeError)) throw;  // a producer older than DLPack 1.0 takes no max_version
    capsule = source.attr("__dlpack__")("stream"_a = stream);
  }
  return adopt_capsule(device, capsule);
}

}  // namespace

void bind_interop(nb::module_& module, nb::class_<PyBuffer>& buffer) {
  buffer
      .def("__dlpack__", &export_dlpack, nb::kw_only(), "stream"_a = nb::none(), "max_version"_a = nb::none(),
           "dl_device"_a = nb::none(), "copy"_a = nb::none(),
           "A DLPack capsule over the buffer's memory (no copy): versioned when max_version >= (1, 0). On a CUDA "
           "device the consumer's `stream` (None: the legacy default stream; -1: none) waits for the buffer's "
           "requests by an event. The memory lives until the consumer's deleter runs.")
      .def(
          "__dlpack_device__", [](const PyBuffer& b) { return dlpack_device_of(b.device); },
          "(device_type, device_id) as DLPack numbers them: (1, 0) for the CPU, (2, ordinal) for CUDA.")
      .def_prop_ro("__cuda_array_interface__", &cuda_array_interface,
                   "The CUDA array interface (version 3) of a CUDA device's buffer; its `stream` follows the "
                   "buffer's requests. AttributeError on the CPU device.");
  module.def("from_dlpack", &from_dlpack, "source"_a, nb::kw_only(), "device"_a,
             "A buffer over another library's tensor memory (no copy): a NumPy array on the CPU device, a torch or "
             "CuPy CUDA tensor on the CUDA device of its ordinal. The producer stays alive as long as the buffer. "
             "Refuses non-contiguous, read-only, empty tensors, dtypes accel has not and other devices' tensors.");
}

}  // namespace accel::python
