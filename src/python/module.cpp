// accel._accel: the Python module (nanobind). python/accel/__init__.py re-exports it as `accel`.
#include "python/bindings.hpp"

NB_MODULE(_accel, module) {
  using namespace accel::python;
  module.doc() = "accel's C++ runtime: devices, buffers, requests and futures (see the accel package)";
  bind_errors(module);
  bind_futures(module);
  bind_devices(module);
  bind_buffers(module);
  bind_requests(module);
  bind_embeddings(module);
  bind_pool(module);
  bind_recording(module);
  bind_graphs(module);
  bind_collectives(module);
  bind_dnn_requests(module);
  bind_dnn_graphs(module);
  bind_jit_requests(module);
}
