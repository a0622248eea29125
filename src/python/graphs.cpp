// accel.GraphBuilder, accel.Graph and Device.execute: tensor graphs with symbolic dimensions, built from Python and
// run on any device (include/accel/graph/graph.hpp, execute.hpp). A dimension from Python is an int (a constant), a
// symbol's name ("tokens"), the name plus a constant ("sequences + 1"), or a (name, constant) pair; graphs give
// dimensions back as ints and such strings. python/accel/graph.py adds weight packing.
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cctype>
#include <charconv>

#include "python/graphs.hpp"
#include "python/recording.hpp"
#include "python/request_fields.hpp"

#include "accel/graph/execute.hpp"

namespace accel::python {

template <>
struct EnumNames<graph::ExecuteMode> {
  static constexpr const char* python_name = "ExecuteMode";
  static constexpr std::array values{std::pair{graph::ExecuteMode::automatic, "automatic"},
                                     std::pair{graph::ExecuteMode::replay, "replay"},
                                     std::pair{graph::ExecuteMode::direct, "direct"}};
};

using graph::Dim;
using graph::Tensor;

namespace {

// "tokens", "sequences + 1", "rows-2": a symbol and the constant added to it.
Dim dim_of_text(const std::string& text, std::string_view op) {
  std::string compact;
  for (char c : text) {
    if (!std::isspace(static_cast<unsigned char>(c))) compact += c;
  }
  const std::size_t sign = compact.find_first_of("+-", 1);
  std::string name = compact.substr(0, sign);
  std::int64_t offset = 0;
  bool valid = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
  if (sign != std::string::npos) {
    const char* first = compact.data() + sign + 1;
    const char* last = compact.data() + compact.size();
    const auto [end, error] = std::from_chars(first, last, offset);
    valid = valid && error == std::errc() && end == last && first != last;
    if (compact[sign] == '-') offset = -offset;
  }
  if (!valid) {
    raise_status(invalid_argument(fmt::format(
        "GraphBuilder.{}: dimension '{}' is not a symbol, or a symbol plus or minus an int ('sequences + 1')", op,
        text)));
  }
  return Dim::sym(std::move(name), offset);
}

}  // namespace

graph::Dim dim_of(nb::handle value, std::string_view op) {
  if (nb::isinstance<nb::int_>(value) && !nb::isinstance<nb::bool_>(value))
    return Dim::of(nb::cast<std::int64_t>(value));
  if (nb::isinstance<nb::str>(value)) return dim_of_text(nb::cast<std::string>(value), op);
  if (nb::isinstance<nb::tuple>(value) && nb::len(value) == 2 && nb::isinstance<nb::str>(value[0]) &&
      nb::isinstance<nb::int_>(value[1])) {
    return Dim::sym(nb::cast<std::string>(value[0]), nb::cast<std::int64_t>(value[1]));
  }
  refuse_argument(fmt::format("GraphBuilder.{}", op), "shape", "dimensions that are ints, symbols or (symbol, int)",
                  value);
}

graph::Shape shape_of(nb::handle value, std::string_view op) {
  if (!nb::isinstance<nb::sequence>(value) || nb::isinstance<nb::str>(value)) {
    refuse_argument(fmt::format("GraphBuilder.{}", op), "shape", "a sequence of dimensions", value);
  }
  graph::Shape shape;
  for (nb::handle dim : value) shape.push_back(dim_of(dim, op));
  return shape;
}

namespace {

nb::object dim_to_python(const Dim& dim) {
  if (dim.is_constant()) return nb::int_(dim.offset);
  return nb::str(dim.to_string().c_str());
}

nb::tuple shape_to_python(const graph::Shape& shape) {
  nb::list dims;
  for (const Dim& dim : shape) dims.append(dim_to_python(dim));
  return nb::tuple(dims);
}

std::vector<graph::NamedBuffer> named_buffers(const PyDevice& device, const nb::dict& buffers, std::string_view what) {
  std::vector<graph::NamedBuffer> named;
  for (auto [key, value] : buffers) {
    const std::string name = nb::cast<std::string>(nb::str(key));
    // An accel.Buffer, or (accel.Buffer, first element) for a tensor that starts inside its buffer.
    nb::handle buffer = value;
    std::uint64_t first = 0;
    if (nb::isinstance<nb::tuple>(value) && nb::len(value) == 2 && nb::isinstance<nb::int_>(value[1])) {
      buffer = value[0];
      if (!nb::try_cast(value[1], first))
        refuse_argument("execute", fmt::format("{}['{}'][1]", what, name), "a first element >= 0", value[1]);
    }
    if (!nb::isinstance<PyBuffer>(buffer))
      refuse_argument("execute", fmt::format("{}['{}']", what, name), "an accel.Buffer or (accel.Buffer, first)",
                      value);
    named.push_back({.name = name, .buffer = nb::cast<const PyBuffer&>(buffer).use_on(device, name), .first = first});
  }
  return named;
}

nb::object execute(const PyDevice& device, const PyGraph& graph, const std::map<std::string, std::int64_t>& symbols,
                   const nb::dict& inputs, const nb::dict& outputs, nb::handle weights, nb::handle mode,
                   float direct_below) {
  graph::Execute run{.graph = graph.graph,
                     .symbols = graph::SymbolValues(symbols.begin(), symbols.end()),
                     .weights = from_python<BufferHandle>(weights, "execute", "weights", device),
                     .inputs = named_buffers(device, inputs, "inputs"),
                     .outputs = named_buffers(device, outputs, "outputs"),
                     .mode = enum_from_python<graph::ExecuteMode>(mode, "execute", "mode"),
                     .direct_below = direct_below};
  if (PyRecording* recording = active_recording(device)) {
    recording->record(std::move(run), nb::kwargs());
    return nb::none();
  }
  return nb::cast(make_done_future(send_released([&] { return device.device.ask(std::move(run)); })));
}

void bind_graph_class(nb::module_& module) {
  nb::class_<Tensor>(module, "GraphTensor", "A tensor of the graph a GraphBuilder builds (its id).")
      .def_ro("id", &Tensor::id)
      .def("__repr__", [](const Tensor& t) { return fmt::format("accel.GraphTensor(id={})", t.id); });

  nb::class_<PyGraph>(module, "Graph",
                      "An immutable, validated tensor graph (accel::graph::Graph): Device.execute runs it.")
      .def_prop_ro(
          "weight_bytes", [](const PyGraph& g) { return g.graph->weight_bytes(); },
          "The size of the uint8 weights buffer execute() binds.")
      .def_prop_ro(
          "symbols", [](const PyGraph& g) { return g.graph->symbols(); }, "Every symbol, sorted.")
      .def_prop_ro(
          "buckets",
          [](const PyGraph& g) {
            std::map<std::string, std::vector<std::int64_t>> out;
            for (const auto& [symbol, ladder] : g.graph->buckets()) out[symbol] = ladder.rungs;
            return out;
          },
          "Each bucketed symbol's rungs.")
      .def_prop_ro(
          "tensors",
          [](const PyGraph& g) {
            nb::list out;
            for (const graph::TensorInfo& t : g.graph->tensors()) {
              out.append(nb::make_tuple(t.name, dtype_name(t.dtype), shape_to_python(t.shape)));
            }
            return out;
          },
          "Every tensor as (name, dtype, shape), indexed by id.")
      .def_prop_ro(
          "inputs",
          [](const PyGraph& g) {
            nb::list out;
            for (std::uint32_t node : g.graph->inputs()) {
              const graph::Node& n = g.graph->nodes()[node];
              if (n.kind == graph::OpKind::input) out.append(g.graph->tensors()[n.output].name);
            }
            return out;
          },
          "The inputs' binding names, in declaration order.")
      .def_prop_ro(
          "outputs",
          [](const PyGraph& g) {
            nb::list out;
            for (const graph::Graph::Output& o : g.graph->outputs()) out.append(o.name);
            return out;
          },
          "The outputs' binding names, in declaration order.")
      .def_prop_ro(
          "parameters",
          [](const PyGraph& g) {
            nb::dict out;
            for (const graph::Graph::ParameterSlot& slot : g.graph->parameters()) {
              const graph::TensorInfo& t = g.graph->tensors()[slot.tensor];
              nb::dict entry;
              entry["offset"] = slot.offset;
              entry["bytes"] = slot.bytes;
              entry["dtype"] = dtype_name(t.dtype);
              entry["shape"] = shape_to_python(t.shape);
              out[t.name.c_str()] = entry;
            }
            return out;
          },
          "name -> {offset, bytes, dtype, shape}: where each parameter lies in the weights buffer.")
      .def_prop_ro(
          "encoding",
          [](const PyGraph& g) {
            const auto& bytes = g.graph->encoding();
            return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          },
          "The canonical encoding: equal graphs have equal bytes in every process.")
      .def_static(
          "decode",
          [](nb::bytes bytes) {
            const auto* data = static_cast<const std::byte*>(static_cast<const void*>(bytes.c_str()));
            return PyGraph{unwrap(graph::Graph::decode(std::span<const std::byte>(data, bytes.size())))};
          },
          nb::arg("encoding"), "The graph an encoding describes (validated again).")
      .def("__eq__", [](const PyGraph& a, const PyGraph& b) { return a.graph->encoding() == b.graph->encoding(); })
      .def("__repr__", [](const PyGraph& g) {
        return fmt::format("accel.Graph(nodes={}, outputs={}, weight_bytes={})", g.graph->nodes().size(),
                           g.graph->outputs().size(), g.graph->weight_bytes());
      });
}

}  // namespace

void bind_graphs(nb::module_& module) {
  bind_graph_class(module);
  bind_graph_builder(module);
  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  device.def(
      "execute", &execute, nb::arg("graph"), nb::kw_only(), nb::arg("symbols") = std::map<std::string, std::int64_t>{},
      nb::arg("inputs"), nb::arg("outputs"), nb::arg("weights") = nb::none(), nb::arg("mode") = "automatic",
      nb::arg("direct_below") = 0.0f,
      "Runs a built accel.Graph (accel::graph::Execute): `symbols` the value of each symbol, `inputs` and "
      "`outputs` binding name -> accel.Buffer, or (accel.Buffer, first element) for a tensor that starts inside its "
      "buffer (several inputs may share one), `weights` the uint8 buffer of its parameters "
      "(Graph.upload_weights). Returns an accel.Future.");
  export_enums<Activation, graph::BinaryOp, graph::Padding, graph::PoolMode, graph::GateLayout, graph::ExecuteMode>(
      module);
}

}  // namespace accel::python
