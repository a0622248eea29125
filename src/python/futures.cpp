// accel.Future (futures.hpp).
#include "python/futures.hpp"

#include <dlfcn.h>

#include <nanobind/stl/optional.h>

namespace accel::python {

namespace {

// Python objects must not be touched (not even released) once the interpreter is finalizing: a thread taking the
// GIL then would be stopped for good. What is left then is leaked, as the process is ending anyway.
bool python_usable() {
#if defined(Py_LIMITED_API) && Py_LIMITED_API < 0x030D0000
  // The stable ABI before 3.13 has no such call (the abi3 module for 3.12): the running interpreter's own is looked
  // up once, Py_IsFinalizing from 3.13 on and _Py_IsFinalizing before, both exported by every CPython.
  using IsFinalizing = int (*)();
  static const IsFinalizing is_finalizing = [] {
    void* found = dlsym(RTLD_DEFAULT, "Py_IsFinalizing");
    if (found == nullptr) found = dlsym(RTLD_DEFAULT, "_Py_IsFinalizing");
    return reinterpret_cast<IsFinalizing>(found);
  }();
  return Py_IsInitialized() != 0 && (is_finalizing == nullptr || is_finalizing() == 0);
#elif PY_VERSION_HEX >= 0x030D0000
  return Py_IsInitialized() != 0 && Py_IsFinalizing() == 0;
#else
  return Py_IsInitialized() != 0 && _Py_IsFinalizing() == 0;
#endif
}

template <class Objects>
void release_with_gil(Objects& objects) {
  if (objects.empty()) return;
  if (!python_usable()) {
    for (auto& object : objects) (void)object.release();  // leaked: see python_usable
    objects.clear();
    return;
  }
  nb::gil_scoped_acquire gil;
  objects.clear();
}

constexpr std::chrono::milliseconds kSignalSlice{100};

}  // namespace

bool wait_in_slices(const std::function<bool(std::chrono::milliseconds)>& wait_slice, std::optional<double> timeout) {
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    std::chrono::milliseconds slice = kSignalSlice;
    if (timeout) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::duration<double>(*timeout) - (std::chrono::steady_clock::now() - start));
      if (left.count() <= 0) {
        nb::gil_scoped_release released;
        return wait_slice(std::chrono::milliseconds{0});
      }
      slice = std::min(slice, left);
    }
    bool finished = false;
    {
      nb::gil_scoped_release released;
      finished = wait_slice(slice);
    }
    if (finished) return true;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }
}

// -- FutureCore -----------------------------------------------------------------------

FutureCore::~FutureCore() {
  // Normally empty: completion releases them. A request never answered (the process ending) leaves them here.
  std::vector<nb::object> left;
  for (auto& [callback, future] : callbacks_) {
    left.push_back(std::move(callback));
    left.push_back(std::move(future));
  }
  for (auto& object : kept_) left.push_back(std::move(object));
  callbacks_.clear();
  kept_.clear();
  release_with_gil(left);
}

void FutureCore::complete(Status status, MakeValue make_value) {
  std::vector<std::pair<nb::object, nb::object>> callbacks;
  std::vector<nb::object> kept;
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    status_ = std::move(status);
    make_value_ = std::move(make_value);
    done_ = true;
    callbacks = std::move(callbacks_);
    kept = std::move(kept_);
    callbacks_.clear();
    kept_.clear();
  }
  ready_.notify_all();
  if (callbacks.empty() && kept.empty()) return;
  if (!python_usable()) {
    for (auto& [callback, future] : callbacks) {
      (void)callback.release();
      (void)future.release();
    }
    for (auto& object : kept) (void)object.release();
    return;
  }
  nb::gil_scoped_acquire gil;
  run_callbacks(std::move(callbacks));
  kept.clear();
}

void FutureCore::run_callbacks(std::vector<std::pair<nb::object, nb::object>> callbacks) {
  for (auto& [callback, future] : callbacks) {
    try {
      callback(future);
    } catch (nb::python_error& error) {
      error.discard_as_unraisable("an accel.Future done callback");  // as concurrent.futures logs them
    }
  }
}

bool FutureCore::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

bool FutureCore::wait(std::optional<double> timeout) {
  return wait_in_slices(
      [this](std::chrono::milliseconds slice) {
        std::unique_lock lock(mutex_);
        return ready_.wait_for(lock, slice, [this] { return done_; });
      },
      timeout);
}

void FutureCore::add_callback(nb::object callback, nb::object future) {
  {
    std::lock_guard lock(mutex_);
    if (!done_) {
      callbacks_.emplace_back(std::move(callback), std::move(future));
      return;
    }
  }
  std::vector<std::pair<nb::object, nb::object>> now;
  now.emplace_back(std::move(callback), std::move(future));
  run_callbacks(std::move(now));
}

void FutureCore::keep_alive(nb::object object) {
  std::lock_guard lock(mutex_);
  if (!done_) kept_.push_back(std::move(object));
}

// -- PyFuture ---------------------------------------------------------------------------

nb::object PyFuture::result(std::optional<double> timeout) {
  if (!core_->wait(timeout)) {
    PyErr_SetString(PyExc_TimeoutError, "the accel request did not complete within the timeout");
    throw nb::python_error();
  }
  if (!core_->status().ok()) raise_status(core_->status());
  if (!value_) value_ = core_->make_value()();
  return *value_;
}

nb::object PyFuture::exception(std::optional<double> timeout) {
  if (!core_->wait(timeout)) {
    PyErr_SetString(PyExc_TimeoutError, "the accel request did not complete within the timeout");
    throw nb::python_error();
  }
  if (core_->status().ok()) return nb::none();
  try {
    raise_status(core_->status());
  } catch (nb::python_error& error) {
    return nb::borrow(error.value());
  }
}

void bind_futures(nb::module_& module) {
  nb::class_<PyFuture>(module, "Future",
                       "The outcome of an accel request, ready when the device has finished it (concurrent.futures-"
                       "style; `await` works in asyncio).")
      .def("done", &PyFuture::done, "True once the request has completed (successfully or not).")
      .def("result", &PyFuture::result, nb::arg("timeout") = nb::none(),
           "The request's value, waiting up to `timeout` seconds (None: no limit) with the GIL released. Raises the "
           "request's error (an accel.Error) or TimeoutError.")
      .def("exception", &PyFuture::exception, nb::arg("timeout") = nb::none(),
           "The request's error as an exception object, or None if it succeeded.")
      .def(
          "add_done_callback",
          [](nb::handle self, nb::object callback) {
            nb::cast<PyFuture&>(self).core()->add_callback(std::move(callback), nb::borrow(self));
          },
          nb::arg("fn"),
          "Calls fn(future) once the request has completed: at once if it has, else on the thread that completes it "
          "(an accel thread, holding the GIL).")
      .def(
          "cancelled", [](const PyFuture&) { return false; }, "Always False: accel requests are not cancelled.")
      .def("__await__",
           [](nb::handle self) { return nb::module_::import_("accel._asyncio").attr("await_future")(self); });
}

}  // namespace accel::python
