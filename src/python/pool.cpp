// accel.DevicePool (include/accel/device/pool.hpp): several opened devices, each one's state, and a placement policy
// that picks one per request. The pool's devices are accel.Device objects like any other.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "python/futures.hpp"
#include "python/request_fields.hpp"

#include "accel/device/pool.hpp"

namespace accel::python {

template <>
struct EnumNames<PlacementPolicy> {
  static constexpr const char* python_name = "PlacementPolicy";
  static constexpr std::array values{std::pair{PlacementPolicy::least_loaded, "least_loaded"},
                                     std::pair{PlacementPolicy::round_robin, "round_robin"},
                                     std::pair{PlacementPolicy::most_free_memory, "most_free_memory"}};
};

namespace {

struct PyDevicePool {
  std::shared_ptr<System> system;
  DevicePool pool;

  std::size_t checked(std::size_t index, std::string_view what) const {
    if (index >= pool.size()) {
      raise_status(invalid_argument(
          fmt::format("DevicePool.{}: index {} is not below the pool's size {}", what, index, pool.size())));
    }
    return index;
  }
};

// A Python error (an accel.Error, or any exception) as the Status finish() takes: accel.Error's code where it has
// one, else `internal`.
Status status_of_error(nb::handle error) {
  const std::string message = nb::cast<std::string>(nb::str(error));
  const std::string code =
      nb::hasattr(error, "code") ? nb::cast<std::string>(nb::str(error.attr("code"))) : std::string("internal");
  for (int value = 1; value < kCodeCount; ++value) {
    if (to_string(static_cast<Code>(value)) == code) return Status(static_cast<Code>(value), message);
  }
  return internal_error(message);
}

// finish()'s outcome: None (success), an accel.Future that is done (its status), or an exception.
Status outcome_status(nb::handle outcome) {
  if (outcome.is_none()) return Status{};
  if (nb::isinstance<PyFuture>(outcome)) {
    const PyFuture& future = nb::cast<const PyFuture&>(outcome);
    if (!future.done()) raise_status(invalid_argument("DevicePool.finish: the future is not done yet"));
    return future.core()->status();
  }
  if (nb::isinstance(outcome, nb::handle(PyExc_BaseException))) return status_of_error(outcome);
  refuse_argument("DevicePool.finish", "outcome", "None, a done accel.Future or an exception", outcome);
}

nb::dict state_dict(const PooledDeviceState& state) {
  nb::dict out;
  out["index"] = state.index;
  out["spec"] = state.spec;
  out["name"] = state.name;
  out["isolation"] = std::string(to_string(state.isolation));
  out["usable"] = state.usable;
  out["health"] = state.health.ok() ? nb::none() : nb::object(nb::str(state.health.to_string().c_str()));
  out["down"] = state.down.ok() ? nb::none() : nb::object(nb::str(state.down.to_string().c_str()));
  out["requests_in_flight"] = state.requests_in_flight;
  out["weight_in_flight"] = state.weight_in_flight;
  out["requests_placed"] = state.requests_placed;
  out["requests_failed"] = state.requests_failed;
  out["weight_placed"] = state.weight_placed;
  out["times_down"] = state.times_down;
  out["memory_capacity_bytes"] = state.memory_capacity_bytes;
  out["memory_in_use_bytes"] = state.memory_in_use_bytes;
  out["memory_free_bytes"] = state.memory_free_bytes;
  out["worker_restarts"] = state.worker_restarts;
  return out;
}

}  // namespace

void bind_pool(nb::module_& module) {
  nb::class_<Placement>(module, "Placement", "A request placed on a device of a DevicePool: give it to finish() once.")
      .def_ro("index", &Placement::index, "The device's index in the pool.")
      .def_ro("weight", &Placement::weight, "The weight it was placed with.")
      .def("__repr__",
           [](const Placement& p) { return fmt::format("accel.Placement(index={}, weight={})", p.index, p.weight); });

  nb::class_<PyDevicePool>(module, "DevicePool",
                           "Several opened devices and a placement policy over them (accel::DevicePool): place() picks "
                           "a usable device and counts the request in flight until finish().")
      .def_static(
          "open",
          [](const std::string& devices, std::optional<std::shared_ptr<System>> system,
             std::uint64_t memory_limit_bytes) {
            std::shared_ptr<System> owner = system && *system ? *system : default_system();
            std::optional<Result<DevicePool>> opened;
            {
              nb::gil_scoped_release released;
              opened.emplace(
                  DevicePool::open(*owner, devices, DeviceOptions{.memory_limit_bytes = memory_limit_bytes}));
            }
            return PyDevicePool{.system = owner, .pool = unwrap(std::move(*opened))};
          },
          nb::arg("devices") = "all", nb::kw_only(), nb::arg("system") = nb::none(), nb::arg("memory_limit_bytes") = 0,
          "Opens every device of a comma-separated list: cpu, cpu-isolated, cuda[:N], cuda-isolated[:N], N (= cuda:N), "
          "all (every GPU, or the CPU where there is none). An entry may repeat: each opens a device of its own.")
      .def("__len__", [](const PyDevicePool& p) { return p.pool.size(); })
      .def(
          "device",
          [](const PyDevicePool& p, std::size_t index) {
            return PyDevice{.system = p.system, .device = p.pool.device(p.checked(index, "device"))};
          },
          nb::arg("index"), "The accel.Device at `index`.")
      .def_prop_ro(
          "devices",
          [](const PyDevicePool& p) {
            std::vector<PyDevice> devices;
            for (std::size_t i = 0; i < p.pool.size(); ++i)
              devices.push_back({.system = p.system, .device = p.pool.device(i)});
            return devices;
          },
          "Every device, in pool order.")
      .def(
          "spec", [](const PyDevicePool& p, std::size_t index) { return p.pool.spec(p.checked(index, "spec")); },
          nb::arg("index"), "The list entry that opened the device at `index`.")
      .def(
          "place",
          [](PyDevicePool& p, nb::handle policy, std::uint64_t weight) {
            return unwrap(
                p.pool.place(enum_from_python<PlacementPolicy>(policy, "DevicePool.place", "policy"), weight));
          },
          nb::arg("policy") = "least_loaded", nb::arg("weight") = 1,
          "Picks a usable device by `policy` (an accel.PlacementPolicy) and counts a request of `weight` in flight on "
          "it until finish(). Raises accel.Unavailable when no device is usable.")
      .def(
          "finish",
          [](PyDevicePool& p, const Placement& placement, nb::handle outcome) {
            p.checked(placement.index, "finish");
            p.pool.finish(placement, outcome_status(outcome));
          },
          nb::arg("placement"), nb::arg("outcome") = nb::none(),
          "The placed request ended: outcome None (success), its done accel.Future, or the exception it raised. A "
          "failure of the device's own (ContextLost, Unavailable) marks the device down until refresh().")
      .def(
          "mark_down",
          [](PyDevicePool& p, std::size_t index, const std::string& why) {
            p.pool.mark_down(p.checked(index, "mark_down"), unavailable(why));
          },
          nb::arg("index"), nb::arg("why"), "Marks the device down (accel.Unavailable: `why`) until refresh().")
      .def(
          "refresh",
          [](PyDevicePool& p, std::optional<std::size_t> index) {
            Status refreshed;
            {
              nb::gil_scoped_release released;
              refreshed =
                  index ? (*index < p.pool.size() ? p.pool.refresh(*index)
                                                  : invalid_argument("DevicePool.refresh: no device at that index"))
                        : p.pool.refresh();
            }
            if (!refreshed.ok()) raise_status(refreshed);
          },
          nb::arg("index") = nb::none(),
          "Queries every device (or the one at `index`), records its memory, and makes a device marked down usable "
          "again once it answers. Raises the first query error.")
      .def(
          "with_own_counters",
          [](const PyDevicePool& p) { return PyDevicePool{.system = p.system, .pool = p.pool.with_own_counters()}; },
          "Another pool over the same devices with counters, down-marks and turns of its own.")
      .def(
          "states",
          [](const PyDevicePool& p) {
            nb::list out;
            for (const PooledDeviceState& state : p.pool.states()) out.append(state_dict(state));
            return out;
          },
          "Every device's state as a dict (index, spec, name, isolation, usable, health, down, requests_in_flight, "
          "weight_in_flight, requests_placed, requests_failed, weight_placed, times_down, memory_*_bytes, "
          "worker_restarts); health and down are None or the error's text.")
      .def(
          "state",
          [](const PyDevicePool& p, std::size_t index) { return state_dict(p.pool.state(p.checked(index, "state"))); },
          nb::arg("index"), "The state of the device at `index` (see states()).")
      .def("__repr__",
           [](const PyDevicePool& p) { return fmt::format("accel.DevicePool(devices={})", p.pool.size()); });
  export_enums<PlacementPolicy>(module);
}

}  // namespace accel::python
