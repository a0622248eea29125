# FindPython for a CPython that is not installed here: scripts/gpu-python-bundle builds the module for the GPU test
# machine's CPython (3.12) from that machine's headers, on a machine whose interpreter is older. Put this folder on
# CMAKE_MODULE_PATH and give ACCEL_TARGET_PYTHON_INCLUDE_DIRS (Python.h's folder, then the folder its pyconfig.h
# includes from), ACCEL_TARGET_PYTHON_VERSION (X.Y.Z) and ACCEL_TARGET_PYTHON_SOABI (e.g. cpython-312-x86_64-linux-gnu).
# Defines what nanobind reads: Python_VERSION*, Python_SOABI, Python_SOSABI (abi3), Python_INCLUDE_DIRS and the targets
# Python::Interpreter (this machine's interpreter: it only runs nanobind's tools), Python::Module and Python::SABIModule
# (headers only: a Linux extension module never links libpython).
foreach(var ACCEL_TARGET_PYTHON_INCLUDE_DIRS ACCEL_TARGET_PYTHON_VERSION ACCEL_TARGET_PYTHON_SOABI)
  if(NOT ${var})
    message(FATAL_ERROR "cmake/python312/FindPython.cmake needs ${var}")
  endif()
endforeach()
list(GET ACCEL_TARGET_PYTHON_INCLUDE_DIRS 0 _accel_python_h_dir)
if(NOT EXISTS "${_accel_python_h_dir}/Python.h")
  message(FATAL_ERROR "no Python.h in ${_accel_python_h_dir}")
endif()
# The version the headers declare must be the one asked for.
file(STRINGS "${_accel_python_h_dir}/patchlevel.h" _accel_python_patchlevel REGEX "^#define PY_VERSION ")
if(NOT _accel_python_patchlevel MATCHES "\"${ACCEL_TARGET_PYTHON_VERSION}\"")
  message(FATAL_ERROR "${_accel_python_h_dir} is Python ${_accel_python_patchlevel}, not ${ACCEL_TARGET_PYTHON_VERSION}")
endif()
find_program(Python_EXECUTABLE NAMES python3 REQUIRED)
string(REPLACE "." ";" _accel_python_parts "${ACCEL_TARGET_PYTHON_VERSION}")
list(GET _accel_python_parts 0 Python_VERSION_MAJOR)
list(GET _accel_python_parts 1 Python_VERSION_MINOR)
list(GET _accel_python_parts 2 Python_VERSION_PATCH)
set(Python_VERSION "${ACCEL_TARGET_PYTHON_VERSION}")
set(Python_INTERPRETER_ID "Python")
set(Python_SOABI "${ACCEL_TARGET_PYTHON_SOABI}")
set(Python_SOSABI "abi3")
set(Python_INCLUDE_DIRS "${ACCEL_TARGET_PYTHON_INCLUDE_DIRS}")
set(Python_FOUND TRUE)
set(Python_Interpreter_FOUND TRUE)
set(Python_Development.Module_FOUND TRUE)
set(Python_Development.SABIModule_FOUND TRUE)
if(NOT TARGET Python::Interpreter)
  add_executable(Python::Interpreter IMPORTED GLOBAL)
  set_target_properties(Python::Interpreter PROPERTIES IMPORTED_LOCATION "${Python_EXECUTABLE}")
  foreach(target Module SABIModule)
    add_library(Python::${target} INTERFACE IMPORTED GLOBAL)
    set_target_properties(Python::${target} PROPERTIES INTERFACE_INCLUDE_DIRECTORIES "${Python_INCLUDE_DIRS}")
  endforeach()
endif()
message(STATUS "Python ${Python_VERSION} (${Python_SOABI}, ${Python_SOSABI}) from headers in ${Python_INCLUDE_DIRS}")
