// Errors as Python exceptions: one class per accel::Code (python/accel/_errors.py defines them, so that they carry
// docstrings and the right Python bases), raised with the C++ Status's text.
#include <nanobind/stl/string.h>

#include "python/bindings.hpp"

namespace accel::python {

void raise_status(const Status& status) {
  if (status.ok()) {
    PyErr_SetString(PyExc_SystemError, "accel: raise_status called with an OK status");
    throw nb::python_error();
  }
  nb::object errors = nb::module_::import_("accel._errors");
  nb::object error = errors.attr("from_status")(std::string(to_string(status.code())), status.to_string(),
                                                std::string(to_string(status.source())), status.raw_code());
  PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
  throw nb::python_error();
}

void bind_errors(nb::module_& module) {
  // The codes in C++'s order, so that Python can check that it has a class for each (python/tests/test_errors.py).
  nb::list codes;
  for (int code = 1; code < kCodeCount; ++code) codes.append(std::string(to_string(static_cast<Code>(code))));
  module.attr("_status_codes") = codes;
  // Raises the error of a status made here, for the tests of each category.
  module.def(
      "_raise_status",
      [](const std::string& code_name, const std::string& message) {
        for (int code = 1; code < kCodeCount; ++code) {
          if (to_string(static_cast<Code>(code)) == code_name) raise_status(Status(static_cast<Code>(code), message));
        }
        raise_status(invalid_argument("no status code named '" + code_name + "'"));
      },
      nb::arg("code"), nb::arg("message"));
}

}  // namespace accel::python
