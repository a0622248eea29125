// accel.Recording: library requests recorded once and launched again, with buffers rebound between launches
// (include/accel/device/recording.hpp; recording.hpp here says how Python records).
#include "python/recording.hpp"

#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include <fmt/format.h>

#include "python/futures.hpp"

namespace accel::python {

namespace {

// The recordings whose `with` blocks are open on this thread, innermost last.
thread_local std::vector<PyRecording*> capturing;

void enter(PyRecording& recording) {
  recording.device.check_open("the recording's device");
  for (const PyRecording* open : capturing) {
    if (open == &recording) raise_status(failed_precondition("Recording: this recording is already recording"));
    if (open->device.device == recording.device.device) {
      raise_status(failed_precondition(
          fmt::format("Recording: another recording already records the requests of {} on this thread",
                      recording.device.device.name())));
    }
  }
  capturing.push_back(&recording);
}

void leave(PyRecording& recording) {
  capturing.erase(std::remove(capturing.begin(), capturing.end(), &recording), capturing.end());
}

}  // namespace

PyRecording::~PyRecording() { leave(*this); }

void PyRecording::keep_buffers(const nb::kwargs& arguments) {
  for (auto [key, value] : arguments) {
    if (nb::isinstance<PyBuffer>(value)) owners.push_back(nb::cast<const PyBuffer&>(value).owner);
  }
}

PyRecording* active_recording(const PyDevice& device) {
  for (PyRecording* open : capturing) {
    if (open->device.device == device.device) return open;
  }
  return nullptr;
}

void bind_recording(nb::module_& module) {
  nb::class_<PyRecording>(
      module, "Recording",
      "Library requests recorded once for one device and launched any number of times, buffers "
      "rebound between launches (accel::Recording). Record by calling the device's request "
      "methods inside `with recording:` (they return None there: nothing runs); launch() runs the "
      "steps in order. A CUDA device replays them as one CUDA graph. Allocations, uploads and copies to NumPy are "
      "not requests a recording holds: they run at once inside the block too.")
      .def(
          "__init__",
          [](PyRecording* self, const PyDevice& device) {
            device.check_open("Recording's device");
            new (self)
                PyRecording{.device = device, .recording = Recording(device.device), .owners = {}, .host_arrays = {}};
          },
          nb::arg("device"))
      .def("__enter__",
           [](nb::handle self) {
             enter(nb::cast<PyRecording&>(self));
             return nb::borrow(self);
           })
      .def("__exit__", [](PyRecording& recording, nb::args) { leave(recording); })
      .def(
          "launch",
          [](nb::handle self) {
            PyRecording& recording = nb::cast<PyRecording&>(self);
            if (active_recording(recording.device) == &recording) {
              raise_status(failed_precondition("Recording.launch: inside the recording's own `with` block"));
            }
            recording.device.check_open("the recording's device");
            // The recording (and the buffers it keeps) lives until the launch completes.
            return make_done_future(send_released([&] { return recording.recording.launch(); }), nb::borrow(self));
          },
          "Runs the recorded steps in order (one RunRecorded request); returns an accel.Future. Its error is the "
          "first failed step's, prefixed with its index and name.")
      .def(
          "rebind",
          [](PyRecording& recording, const PyBuffer& from, const PyBuffer& to) {
            const BufferHandle was = from.use_on(recording.device, "from");
            const BufferHandle now = to.use_on(recording.device, "to");
            if (Status rebound = recording.recording.rebind(was, now); !rebound.ok()) raise_status(rebound);
            recording.owners.push_back(to.owner);
          },
          nb::arg("old"), nb::arg("new"),
          "Every use of buffer `old` (as bound now) uses `new` in later launches: same device, dtype and size.")
      .def(
          "upload",
          [](PyRecording& recording, nb::object array, const PyBuffer& buffer) {
            const BufferHandle handle = buffer.use_on(recording.device, "buffer");
            const HostDestination host = host_memory_for(array, buffer, /*written=*/false);
            recording.record_host_copy(
                CopyToDevice{.source = {.data = host.data, .count = host.count, .dtype = host.dtype},
                             .destination = handle},
                buffer, std::move(array));
          },
          nb::arg("array"), nb::arg("buffer"),
          "Records a copy of host `array` into `buffer` (same dtype and size), read when each launch runs. On a CUDA "
          "device the array's memory must be pinned (torch.empty(..., pin_memory=True), cupyx.empty_pinned): a "
          "launch refuses pageable memory by name. The recording keeps the array alive.")
      .def(
          "download",
          [](PyRecording& recording, const PyBuffer& buffer, nb::object array) {
            const BufferHandle handle = buffer.use_on(recording.device, "buffer");
            const HostDestination host = host_memory_for(array, buffer, /*written=*/true);
            recording.record_host_copy(CopyToHost{.source = handle, .destination = host}, buffer, std::move(array));
          },
          nb::arg("buffer"), nb::arg("array"),
          "Records a copy of `buffer` into host `array` (writable, same dtype and size), which holds it once a "
          "launch's future is done; pinned on a CUDA device, as for upload().")
      .def(
          "rebind_host",
          [](PyRecording& recording, nb::handle old_array, nb::object new_array) {
            const HostDestination was = host_memory_of(old_array);
            const HostDestination now = host_memory_of(new_array);
            if (now.dtype != was.dtype || now.count != was.count) {
              raise_status(invalid_argument(
                  fmt::format("Recording.rebind_host: an array of {} x {} cannot replace one of {} x {}", now.count,
                              to_string(now.dtype), was.count, to_string(was.dtype))));
            }
            const bool uploads = recording.recording
                                     .rebind(HostSource{.data = was.data, .count = was.count, .dtype = was.dtype},
                                             HostSource{.data = now.data, .count = now.count, .dtype = now.dtype})
                                     .ok();
            const bool downloads = writable(new_array) && recording.recording.rebind(was, now).ok();
            if (!uploads && !downloads) {
              raise_status(invalid_argument(
                  "Recording.rebind_host: no upload of the recording reads this array, and no download into a "
                  "writable array writes it (the same memory, dtype and size)"));
            }
            recording.host_arrays.push_back(std::move(new_array));
          },
          nb::arg("old"), nb::arg("new"),
          "Every recorded upload from, and download into, host array `old` (as bound now) uses `new` in later "
          "launches: same dtype and size (a download only into a writable array).")
      .def("__len__", [](const PyRecording& recording) { return recording.recording.size(); })
      .def_prop_ro(
          "names", [](const PyRecording& recording) { return recording.recording.names(); },
          "Each step's request name, in order.")
      .def_prop_ro("device", [](const PyRecording& recording) { return recording.device; })
      .def("__repr__", [](const PyRecording& recording) {
        return fmt::format("accel.Recording({}, steps={})", recording.device.device.name(), recording.recording.size());
      });
}

}  // namespace accel::python
