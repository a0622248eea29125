// accel.Communicator and the collective family (include/accel/libs/collective/): NCCL on CUDA devices, a world of
// CPU devices of one process on the CPU. A step's fields are keyword arguments (request_fields.hpp);
// python/accel/collective.py adds all_reduce(), broadcast(), ... with sizes and dtypes from the buffers.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "python/recording.hpp"
#include "python/request_fields.hpp"

#include "accel/libs/collective/communicator.hpp"
#include "accel/libs/collective/launcher.hpp"

namespace accel::python {

template <>
struct EnumNames<collective::Kind> {
  static constexpr const char* python_name = "CollectiveKind";
  static constexpr std::array values{std::pair{collective::Kind::all_reduce, "all_reduce"},
                                     std::pair{collective::Kind::all_gather, "all_gather"},
                                     std::pair{collective::Kind::reduce_scatter, "reduce_scatter"},
                                     std::pair{collective::Kind::broadcast, "broadcast"},
                                     std::pair{collective::Kind::reduce, "reduce"},
                                     std::pair{collective::Kind::send, "send"},
                                     std::pair{collective::Kind::recv, "recv"}};
};
template <>
struct EnumNames<collective::ReduceOp> {
  static constexpr const char* python_name = "ReduceOp";
  static constexpr std::array values{
      std::pair{collective::ReduceOp::sum, "sum"}, std::pair{collective::ReduceOp::prod, "prod"},
      std::pair{collective::ReduceOp::min, "min"}, std::pair{collective::ReduceOp::max, "max"},
      std::pair{collective::ReduceOp::avg, "avg"}};
};

// A step given as a dict (Communicator.group's list).
template <>
struct FromPython<collective::Step> : FromDict<collective::Step> {
  static std::vector<Field<collective::Step>> fields() {
    using S = collective::Step;
    return {member("kind", &S::kind),
            member("dtype", &S::dtype),
            member("op", &S::op),
            member("peer", &S::peer),
            member("count", &S::count),
            member("send", &S::send),
            member("send_offset", &S::send_offset),
            member("recv", &S::recv),
            member("recv_offset", &S::recv_offset)};
  }
};

namespace {

// One rank's communicator as Python holds it.
struct PyCommunicator {
  PyDevice device;
  collective::Communicator communicator;
};

nb::object send_collective(const PyDevice& device, auto request) {
  if (PyRecording* recording = active_recording(device)) {
    recording->record(std::move(request), nb::kwargs());
    return nb::none();
  }
  return nb::cast(make_done_future(send_released([&] { return device.device.ask(std::move(request)); })));
}

DeviceKind kind_of(const std::string& name) {
  if (name == "cpu") return DeviceKind::cpu;
  if (name == "cuda") return DeviceKind::cuda;
  raise_status(invalid_argument("collective_unique_id: kind '" + name + "' is not one of 'cpu', 'cuda'"));
}

collective::UniqueId unique_id_of(const nb::bytes& bytes) {
  collective::UniqueId id;
  if (bytes.size() != id.bytes.size()) {
    raise_status(invalid_argument(fmt::format(
        "init_rank: a unique id is {} bytes, not {} (collective_unique_id makes one)", id.bytes.size(), bytes.size())));
  }
  std::memcpy(id.bytes.data(), bytes.c_str(), id.bytes.size());
  return id;
}

}  // namespace

void bind_collectives(nb::module_& module) {
  using nb::arg;
  nb::class_<PyCommunicator>(module, "Communicator",
                             "One rank's communicator on one device (accel::collective::Communicator). Its requests "
                             "return accel.Futures; a CPU world's ranks are CPU devices of this process.")
      .def_prop_ro("device", [](const PyCommunicator& c) { return c.device; })
      .def_prop_ro("rank", [](const PyCommunicator& c) { return c.communicator.rank(); })
      .def_prop_ro("ranks", [](const PyCommunicator& c) { return c.communicator.ranks(); })
      .def_prop_ro("id", [](const PyCommunicator& c) { return c.communicator.comm().id; })
      .def(
          "collective",
          [](const PyCommunicator& c, nb::kwargs arguments) {
            const RequestBinding<collective::Step> binding{"collective", FromPython<collective::Step>::fields()};
            collective::Step step = binding.build(c.device, arguments);
            return send_collective(c.device, collective::Collective{.comm = c.communicator.comm(), .step = step});
          },
          "One collective or point-to-point call (accel::collective::Collective); keyword arguments: kind, dtype, op, "
          "peer, count, send, send_offset, recv, recv_offset. Returns an accel.Future.")
      .def(
          "group",
          [](const PyCommunicator& c, nb::list steps) {
            collective::Group group{.comm = c.communicator.comm(), .steps = {}};
            for (std::size_t i = 0; i < nb::len(steps); ++i) {
              group.steps.push_back(
                  FromPython<collective::Step>::convert(steps[i], "group", fmt::format("steps[{}]", i), c.device));
            }
            return send_collective(c.device, std::move(group));
          },
          arg("steps"),
          "Several calls (dicts of the step fields) as one group: they run concurrently. Returns an accel.Future.")
      .def(
          "destroy",
          [](const PyCommunicator& c) {
            return send_collective(c.device, collective::DestroyComm{.comm = c.communicator.comm()});
          },
          "Ends the communicator once its pending work is done (collective across the host: send every rank's "
          "destroy before waiting for any). Returns an accel.Future.")
      .def("__repr__", [](const PyCommunicator& c) {
        return fmt::format("accel.Communicator(rank {} of {} on {})", c.communicator.rank(), c.communicator.ranks(),
                           c.device.device.name());
      });

  module.def(
      "collective_unique_id",
      [](const std::string& kind) {
        const collective::UniqueId id = unwrap(collective::new_unique_id(kind_of(kind)));
        return nb::bytes(reinterpret_cast<const char*>(id.bytes.data()), id.bytes.size());
      },
      arg("kind") = "cpu", "A new world's id (128 bytes) for devices of `kind`; give every rank the same.");
  module.def(
      "init_all",
      [](const std::vector<PyDevice>& devices, std::uint32_t timeout_ms, bool blocking_collectives) {
        std::vector<Device> opened;
        for (const PyDevice& device : devices) {
          device.check_open("init_all's device");
          opened.push_back(device.device);
        }
        std::optional<Result<std::vector<collective::Communicator>>> joined;
        {
          nb::gil_scoped_release released;
          joined.emplace(
              collective::init_all(opened, {.timeout_ms = timeout_ms, .blocking_collectives = blocking_collectives}));
        }
        std::vector<collective::Communicator> communicators = unwrap(std::move(*joined));
        std::vector<PyCommunicator> out;
        for (std::size_t i = 0; i < communicators.size(); ++i) out.push_back({devices[i], std::move(communicators[i])});
        return out;
      },
      arg("devices"), nb::kw_only(), arg("timeout_ms") = 60'000, arg("blocking_collectives") = true,
      "One communicator per device, rank i on devices[i], all of one kind; waits until every rank has joined. "
      "blocking_collectives=False keeps CUDA ranks to one (non-blocking) NCCL communicator: less GPU memory, slower "
      "launches (accel::collective::CommOptions).");
  module.def(
      "init_rank",
      [](const PyDevice& device, nb::bytes unique_id, std::int32_t ranks, std::int32_t rank, std::uint32_t timeout_ms,
         bool blocking_collectives) {
        device.check_open("init_rank's device");
        const collective::UniqueId id = unique_id_of(unique_id);
        auto joined = send_released([&] {
          return collective::init_rank(device.device, id, ranks, rank,
                                       {.timeout_ms = timeout_ms, .blocking_collectives = blocking_collectives});
        });
        return make_future(std::move(joined), [device](const collective::Communicator& communicator) {
          return nb::cast(PyCommunicator{device, communicator});
        });
      },
      arg("device"), arg("unique_id"), arg("ranks"), arg("rank"), nb::kw_only(), arg("timeout_ms") = 60'000,
      arg("blocking_collectives") = true,
      "Joins `device` to the world `unique_id` as `rank` of `ranks`; an accel.Future of the accel.Communicator, done "
      "when every rank has joined.");
  module.def(
      "init_from_torchrun",
      [](const PyDevice& device, std::uint32_t timeout_ms, bool blocking_collectives) {
        device.check_open("init_from_torchrun's device");
        std::optional<Result<collective::Communicator>> joined;
        {
          nb::gil_scoped_release released;
          Result<collective::LauncherEnv> env = collective::parse_torchrun_env();
          joined.emplace(env.ok() ? collective::init_from_torchrun(
                                        device.device, *env,
                                        {.timeout_ms = timeout_ms, .blocking_collectives = blocking_collectives})
                                  : Result<collective::Communicator>(env.status()));
        }
        return PyCommunicator{device, unwrap(std::move(*joined))};
      },
      arg("device"), nb::kw_only(), arg("timeout_ms") = 60'000, arg("blocking_collectives") = true,
      "This process's communicator on `device` (normally cuda:LOCAL_RANK) from torchrun's environment (RANK, "
      "WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT): rank 0 makes the world's id and serves it on "
      "$ACCEL_BOOTSTRAP_PORT (else MASTER_PORT + 1) while every rank joins. Waits until all have joined.");
  export_enums<collective::Kind, collective::ReduceOp>(module);
}

}  // namespace accel::python
