// accel.System and accel.Device: opening, closing, and the device's identity. Requests are bound in requests.cpp,
// copies in buffers.cpp.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "accel/device/peer.hpp"
#include "accel/device/pool.hpp"
#include "python/futures.hpp"

namespace accel::python {

std::shared_ptr<System>& default_system() {
  static std::shared_ptr<System> system = std::make_shared<System>();
  return system;
}

namespace {

Isolation isolation_named(const std::string& name) {
  if (name == "in_process") return Isolation::in_process;
  if (name == "worker_process") return Isolation::worker_process;
  raise_status(
      invalid_argument(fmt::format("Device.open: isolation '{}' is not one of 'in_process', 'worker_process'", name)));
}

// `kind`: 'cpu' or 'cuda', with `isolation` and `ordinal` (their defaults where not given); or a device's name as
// every command's --device takes it (accel::parse_device_choice: 'auto', 'cuda:1', 'cpu-isolated', ...), which names
// both itself.
DeviceOptions options_named(const std::string& kind, const std::optional<std::string>& isolation,
                            std::optional<int> ordinal, std::uint64_t memory_limit_bytes) {
  if (kind == "cpu" || kind == "cuda") {
    return DeviceOptions{.kind = kind == "cpu" ? DeviceKind::cpu : DeviceKind::cuda,
                         .ordinal = ordinal.value_or(0),
                         .isolation = isolation_named(isolation.value_or("in_process")),
                         .memory_limit_bytes = memory_limit_bytes};
  }
  if (isolation || ordinal) {
    raise_status(invalid_argument(fmt::format(
        "Device.open: '{}' names its device whole; isolation= and ordinal= go with kind 'cpu' or 'cuda'", kind)));
  }
  Result<DeviceOptions> named = parse_device_choice(kind, {.memory_limit_bytes = memory_limit_bytes});
  if (!named.ok()) raise_status(named.status().with_context("Device.open"));
  return *std::move(named);
}

PyDevice open_device(const DeviceOptions& options, std::optional<std::shared_ptr<System>> system, bool best) {
  std::shared_ptr<System> owner = system && *system ? *system : default_system();
  std::optional<Result<Device>> opened;
  {
    nb::gil_scoped_release released;
    opened.emplace(best ? Device::open_default(*owner, options) : Device::open(*owner, options));
  }
  return PyDevice{.system = owner, .device = unwrap(std::move(*opened))};
}

}  // namespace

void PyDevice::check_open(std::string_view what) const {
  const Status health = device.health();
  if (health.ok()) return;
  if (health.code() == Code::failed_precondition) {
    raise_status(
        stale_handle(fmt::format("{} belongs to device {} (#{}), which was closed", what, device.name(), device.id())));
  }
  raise_status(health);
}

void bind_peer_copies(nb::module_& module) {
  module.def(
      "copy_between_devices",
      [](nb::object source_object, nb::object destination_object, std::optional<std::uint64_t> count,
         std::uint64_t source_offset, std::uint64_t destination_offset) {
        const auto& source = nb::cast<const PyBuffer&>(source_object);
        const auto& destination = nb::cast<const PyBuffer&>(destination_object);
        const BufferHandle from = source.use_on(source.device, "source");
        const BufferHandle to = destination.use_on(destination.device, "destination");
        const CopyOnDevice copy{.source = from,
                                .source_offset = source_offset,
                                .destination = to,
                                .destination_offset = destination_offset,
                                .count = count ? *count : from.count - std::min(source_offset, from.count)};
        Future<Done> copied =
            send_released([&] { return copy_between_devices(source.device.device, destination.device.device, copy); });
        return make_done_future(std::move(copied), nb::make_tuple(source_object, destination_object));
      },
      nb::arg("source"), nb::arg("destination"), nb::kw_only(), nb::arg("count") = nb::none(),
      nb::arg("source_offset") = 0, nb::arg("destination_offset") = 0,
      "Copies `count` elements (default: the rest of `source` from source_offset) of a buffer of one device into a "
      "buffer of another (accel::copy_between_devices): GPU to GPU peer to peer between in-process CUDA devices, "
      "through host memory otherwise. Returns an accel.Future.");
  module.def(
      "cuda_peer_links",
      []() {
        nb::list links;
        for (const PeerLink& link : cuda_peer_links()) {
          nb::dict entry;
          entry["from"] = link.from;
          entry["to"] = link.to;
          entry["peer_access"] = link.peer_access;
          entry["native_atomics"] = link.native_atomics;
          entry["performance_rank"] = link.performance_rank;
          entry["link"] = std::string(to_string(link.link));
          entry["nvlinks"] = link.nvlinks;
          links.append(entry);
        }
        return links;
      },
      "Every ordered pair of distinct GPUs as CUDA and NVML report it: a dict with from, to, peer_access, "
      "native_atomics, performance_rank, link (\"nvlink\", \"pcie_switch\", ... or \"unknown\" without NVML) and "
      "nvlinks (accel::cuda_peer_links).");
}

void bind_devices(nb::module_& module) {
  bind_peer_copies(module);
  nb::class_<System>(module, "System",
                     "The actors' runtime that devices run on. Devices opened without one share a default System.")
      .def(nb::init<>())
      .def(
          "shutdown",
          [](System& system) {
            nb::gil_scoped_release released;
            system.shutdown();
          },
          "Stops every device of this System; their pending requests are answered (cancelled).");

  module.def("_shutdown", []() {
    nb::gil_scoped_release released;
    if (auto& system = default_system()) system->shutdown();
  });

  nb::class_<PyDevice>(module, "Device",
                       "One device (the CPU, or a CUDA GPU) and its requests. Requests sent to one device run in the "
                       "order they were sent.")
      .def_static(
          "open",
          [](const std::string& kind, std::optional<std::string> isolation, std::optional<int> ordinal,
             std::uint64_t memory_limit_bytes, std::optional<std::shared_ptr<System>> system) {
            return open_device(options_named(kind, isolation, ordinal, memory_limit_bytes), std::move(system), false);
          },
          nb::arg("kind") = "cpu", nb::kw_only(), nb::arg("isolation") = nb::none(), nb::arg("ordinal") = nb::none(),
          nb::arg("memory_limit_bytes") = 0, nb::arg("system") = nb::none(),
          "Opens a device: kind 'cpu' or 'cuda', with isolation 'in_process' (the default) or 'worker_process' (the "
          "device's context in a supervised worker process) and a GPU's ordinal (default 0); or a device's name as "
          "the accel command's --device takes it, which says both: 'auto', 'cuda:1', 'cpu-isolated', "
          "'cuda-isolated:0'.")
      .def_static(
          "default",
          [](std::optional<std::shared_ptr<System>> system) {
            return open_device(DeviceOptions{.kind = DeviceKind::cpu}, std::move(system), true);
          },
          nb::kw_only(), nb::arg("system") = nb::none(),
          "A CUDA device when this build has the CUDA tier and a GPU is usable, else the CPU.")
      .def_prop_ro("kind", [](const PyDevice& d) { return std::string(to_string(d.device.kind())); })
      .def_prop_ro("name", [](const PyDevice& d) { return d.device.name(); })
      .def_prop_ro(
          "isolation", [](const PyDevice& d) { return std::string(to_string(d.device.isolation())); },
          "'in_process', or 'worker_process' where the device's context is in a supervised worker process.")
      .def_prop_ro("id", [](const PyDevice& d) { return d.device.id(); })
      .def_prop_ro("closed", [](const PyDevice& d) { return d.device.health().code() == Code::failed_precondition; })
      .def_prop_ro(
          "live_buffers",
          [](const PyDevice& d) {
            d.check_open("the device");
            return wait_released(send_released([&] { return d.device.info(); })).memory.live_buffers;
          },
          "Buffers of this device now allocated or adopted (QueryDevice's count): a leak check.")
      .def(
          "health",
          [](const PyDevice& d) {
            if (Status health = d.device.health(); !health.ok()) raise_status(health);
          },
          "Returns if the device can serve; raises why not otherwise.")
      .def(
          "close", [](const PyDevice& d) { wait_released(send_released([&] { return d.device.close(); })); },
          "Closes the device for every holder: pending requests are cancelled, its buffers become stale.")
      .def(
          "allocate",
          [](const PyDevice& d, std::vector<std::int64_t> shape, nb::handle dtype) {
            return allocate_buffer(d, dtype_from_python(dtype), std::move(shape));
          },
          nb::arg("shape"), nb::arg("dtype") = "float32", "A new buffer of this shape and dtype (contents undefined).")
      .def("upload", &upload_array, nb::arg("array"), nb::arg("dtype") = nb::none(),
           "A new buffer holding a copy of `array` (a NumPy array, or anything numpy.asarray takes; `dtype` converts "
           "it first). Waits for the copy.")
      .def("__enter__", [](nb::handle self) { return nb::borrow(self); })
      .def(
          "__exit__",
          [](const PyDevice& d, nb::args) { wait_released(send_released([&] { return d.device.close(); })); },
          "Closes the device.")
      .def("__eq__", [](const PyDevice& a, const PyDevice& b) { return a.device == b.device; })
      .def("__hash__", [](const PyDevice& d) { return d.device.id(); })
      .def("__repr__", [](const PyDevice& d) {
        return fmt::format("accel.Device({}, kind='{}', id={})", d.device.name(), to_string(d.device.kind()),
                           d.device.id());
      });
}

}  // namespace accel::python
