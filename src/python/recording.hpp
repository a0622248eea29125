// accel.Recording (include/accel/device/recording.hpp) as Python holds it: the C++ Recording, and the buffers its
// steps name kept alive (a C++ recording holds handles only; a Python user expects what it named to stay valid).
//
// Requests are recorded by calling the Device's methods inside `with recording:`: while the block runs on a thread,
// every request bound by bind_request (request_fields.hpp) for the recording's device is recorded instead of sent,
// so the Python defaults (python/accel/_requests.py, _blas.py) apply to recorded requests as to sent ones.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "python/bindings.hpp"

#include "accel/device/recording.hpp"

namespace accel::python {

struct PyRecording {
  PyDevice device;
  Recording recording;
  std::vector<std::shared_ptr<const void>> owners;  // the buffers the steps name, rebound ones included
  std::vector<nb::object> host_arrays;              // the host memory its copies name, rebound ones included

  // Leaves this thread's open `with` blocks (a recording entered by hand and dropped records nothing more).
  ~PyRecording();

  // Records `request` (raising NotSupported for a request the C++ Recording refuses) and keeps the buffers of
  // `arguments` alive.
  template <class Request>
  void record(Request request, const nb::kwargs& arguments) {
    if (Status recorded = recording.record(std::move(request)); !recorded.ok()) raise_status(recorded);
    keep_buffers(arguments);
  }
  void keep_buffers(const nb::kwargs& arguments);
  // Records the host copy `request` between `buffer` and `array`, and keeps both alive.
  template <class Copy>
  void record_host_copy(Copy request, const PyBuffer& buffer, nb::object array) {
    if (Status recorded = recording.record(std::move(request)); !recorded.ok()) raise_status(recorded);
    owners.push_back(buffer.owner);
    host_arrays.push_back(std::move(array));
  }
};

// The recording whose `with` block captures `device`'s requests on this thread, or null.
PyRecording* active_recording(const PyDevice& device);

}  // namespace accel::python
