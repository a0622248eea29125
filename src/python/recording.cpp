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
            new (self) PyRecording{.device = device, .recording = Recording(device.device), .owners = {}};
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
