// accel.DnnGraphBuilder, accel.DnnGraph and Device.run_graph: cuDNN-style operation graphs (include/accel/dnn/
// graph.hpp) built from Python and run on any device (cuDNN on CUDA, the reference interpreter on the CPU).
// python/accel/dnn.py re-exports them as accel.dnn.GraphBuilder, Graph and Tensor.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <initializer_list>

#include "python/conv_fields.hpp"
#include "python/recording.hpp"

#include "accel/dnn/graph.hpp"

namespace accel::python {

template <>
struct EnumNames<dnn::PointwiseMode> {
  using M = dnn::PointwiseMode;
  static constexpr const char* python_name = "PointwiseMode";
  static constexpr std::array values{std::pair{M::add, "add"},
                                     std::pair{M::sub, "sub"},
                                     std::pair{M::mul, "mul"},
                                     std::pair{M::div, "div"},
                                     std::pair{M::min, "min"},
                                     std::pair{M::max, "max"},
                                     std::pair{M::relu, "relu"},
                                     std::pair{M::sigmoid, "sigmoid"},
                                     std::pair{M::tanh, "tanh"},
                                     std::pair{M::gelu, "gelu"},
                                     std::pair{M::gelu_approx_tanh, "gelu_approx_tanh"},
                                     std::pair{M::swish, "swish"},
                                     std::pair{M::elu, "elu"},
                                     std::pair{M::softplus, "softplus"},
                                     std::pair{M::identity, "identity"},
                                     std::pair{M::sqrt, "sqrt"},
                                     std::pair{M::rsqrt, "rsqrt"},
                                     std::pair{M::exp, "exp"},
                                     std::pair{M::log, "log"},
                                     std::pair{M::neg, "neg"},
                                     std::pair{M::abs, "abs"}};
};
template <>
struct EnumNames<dnn::ReductionMode> {
  using M = dnn::ReductionMode;
  static constexpr const char* python_name = "ReductionMode";
  static constexpr std::array values{
      std::pair{M::add, "add"},   std::pair{M::mul, "mul"},     std::pair{M::min, "min"},    std::pair{M::max, "max"},
      std::pair{M::mean, "mean"}, std::pair{M::norm1, "norm1"}, std::pair{M::norm2, "norm2"}};
};
template <>
struct EnumNames<dnn::PoolingMode> {
  using M = dnn::PoolingMode;
  static constexpr const char* python_name = "PoolingMode";
  static constexpr std::array values{std::pair{M::max, "max"},
                                     std::pair{M::average_include_padding, "average_include_padding"},
                                     std::pair{M::average_exclude_padding, "average_exclude_padding"}};
};

namespace {

using dnn::TensorRef;
using Ints = std::vector<std::int64_t>;
using List = std::initializer_list<std::int64_t>;

// Calls f with an initializer_list of v's elements (the C++ builder's parameters are initializer_lists, whose
// backing array lives until the end of the full expression of the call, f's run included).
template <class F>
decltype(auto) as_list(const Ints& v, F&& f) {
  switch (v.size()) {
    case 0: return f(List{});
    case 1: return f(List{v[0]});
    case 2: return f(List{v[0], v[1]});
    case 3: return f(List{v[0], v[1], v[2]});
    case 4: return f(List{v[0], v[1], v[2], v[3]});
    case 5: return f(List{v[0], v[1], v[2], v[3], v[4]});
    case 6: return f(List{v[0], v[1], v[2], v[3], v[4], v[5]});
    case 7: return f(List{v[0], v[1], v[2], v[3], v[4], v[5], v[6]});
    case 8: return f(List{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]});
    default: break;
  }
  raise_status(
      invalid_argument(fmt::format("DnnGraphBuilder: {} values where at most {} are taken", v.size(), dnn::kMaxDims)));
}

// `op(ConvParams)` with the four per-dim lists.
template <class Op>
TensorRef with_conv_params(const Ints& pre, const Ints& post, const Ints& stride, const Ints& dilation, Op op) {
  return as_list(pre, [&](List p) {
    return as_list(post, [&](List q) {
      return as_list(stride, [&](List s) {
        return as_list(dilation, [&](List d) {
          return op(dnn::ConvParams{.pre_padding = p, .post_padding = q, .stride = s, .dilation = d});
        });
      });
    });
  });
}

TensorRef ref_of(std::optional<TensorRef> ref) { return ref ? *ref : TensorRef{}; }

std::optional<TensorRef> optional_ref(TensorRef ref) {
  return ref.is_null() ? std::nullopt : std::optional<TensorRef>(ref);
}

nb::tuple norm_outputs(const dnn::NormOutputs& out) {
  return nb::make_tuple(out.y, optional_ref(out.mean), optional_ref(out.inv_variance));
}

// A built graph as Python holds it.
struct PyDnnGraph {
  std::shared_ptr<const dnn::Graph> graph;
};

nb::object run_graph(const PyDevice& device, const PyDnnGraph& graph, const nb::dict& bindings) {
  RunGraph run{.graph = graph.graph, .bindings = {}};
  for (auto [key, value] : bindings) {
    std::uint32_t uid = 0;
    if (nb::isinstance<TensorRef>(key)) {
      uid = nb::cast<TensorRef>(key).uid;
    } else {
      uid = from_python<std::uint32_t>(key, "run_graph", "bindings' key", device);
    }
    if (!nb::isinstance<PyBuffer>(value)) {
      refuse_argument("run_graph", fmt::format("bindings[{}]", uid), "an accel.Buffer", value);
    }
    run.bindings.push_back({.uid = uid, .buffer = nb::cast<const PyBuffer&>(value).use_on(device, "bindings")});
  }
  if (PyRecording* recording = active_recording(device)) {
    recording->record(std::move(run), nb::kwargs());
    return nb::none();
  }
  return nb::cast(make_done_future(send_released([&] { return device.device.ask(std::move(run)); })));
}

}  // namespace

void bind_dnn_graphs(nb::module_& module) {
  using nb::arg;
  using B = dnn::GraphBuilder;
  nb::class_<TensorRef>(module, "DnnTensor", "A tensor of the graph a DnnGraphBuilder builds (its uid).")
      .def_ro("uid", &TensorRef::uid)
      .def("__eq__", [](TensorRef a, TensorRef b) { return a.uid == b.uid; })
      .def("__hash__", [](TensorRef a) { return a.uid; })
      .def("__repr__", [](TensorRef t) { return fmt::format("accel.DnnTensor(uid={})", t.uid); });

  nb::class_<PyDnnGraph>(module, "DnnGraph", "A validated, immutable operation graph (accel::dnn::Graph).")
      .def_prop_ro(
          "tensors",
          [](const PyDnnGraph& g) {
            nb::list out;
            for (const dnn::TensorDesc& t : g.graph->tensors()) {
              nb::dict entry;
              entry["uid"] = t.uid;
              entry["dtype"] = dtype_name(t.dtype);
              entry["dims"] = Ints(t.shape().begin(), t.shape().end());
              entry["strides"] = Ints(t.stride().begin(), t.stride().end());
              entry["virtual"] = t.is_virtual;
              out.append(entry);
            }
            return out;
          },
          "Every tensor (uid, dtype, dims, strides, virtual), by uid.")
      .def_prop_ro(
          "bound_uids", [](const PyDnnGraph& g) { return g.graph->bound_uids(); },
          "The tensors run_graph must bind: every non-virtual one, in uid order.")
      .def(
          "writes", [](const PyDnnGraph& g, std::uint32_t uid) { return g.graph->writes(uid); }, arg("uid"),
          "Whether an op writes the tensor (a graph output).")
      .def_prop_ro(
          "signature",
          [](const PyDnnGraph& g) {
            const auto& bytes = g.graph->signature().bytes;
            return nb::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
          },
          "The canonical encoding plan caches key the graph by.")
      .def_static(
          "decode",
          [](nb::bytes bytes) {
            const auto* data = static_cast<const std::byte*>(static_cast<const void*>(bytes.c_str()));
            return PyDnnGraph{unwrap(dnn::Graph::decode(std::span<const std::byte>(data, bytes.size())))};
          },
          arg("signature"))
      .def("__eq__",
           [](const PyDnnGraph& a, const PyDnnGraph& b) { return a.graph->signature() == b.graph->signature(); })
      .def("__str__", [](const PyDnnGraph& g) { return g.graph->to_string(); });

  nb::class_<B>(module, "DnnGraphBuilder",
                "Builds a DnnGraph op by op, inferring each result's dims (virtual tensors in float32); build() raises "
                "the first mistake, naming the op.")
      .def(nb::init<>())
      .def(
          "tensor",
          [](B& b, nb::handle dtype, const Ints& dims, nb::handle layout, std::optional<Ints> strides) {
            const DType type = dtype_from_python(dtype);
            if (strides) return b.tensor(type, dims, *strides);
            const dnn::TensorLayout packed =
                enum_from_python<dnn::TensorLayout>(layout, "DnnGraphBuilder.tensor", "layout");
            return as_list(dims, [&](List d) { return b.tensor(type, d, packed); });
          },
          arg("dtype"), arg("dims"), arg("layout") = "channels_first", nb::kw_only(), arg("strides") = nb::none(),
          "An input: dims in logical order (N, C, spatial), packed in `layout` or stored by `strides`.")
      .def(
          "conv_forward",
          [](B& b, TensorRef x, TensorRef w, const Ints& pre_padding, const Ints& post_padding, const Ints& stride,
             const Ints& dilation) {
            return with_conv_params(pre_padding, post_padding, stride, dilation,
                                    [&](const dnn::ConvParams& p) { return b.conv_forward(x, w, p); });
          },
          arg("x"), arg("w"), nb::kw_only(), arg("pre_padding") = Ints{}, arg("post_padding") = Ints{},
          arg("stride") = Ints{}, arg("dilation") = Ints{}, "y = conv(x, w) (cross-correlation, as cuDNN).")
      .def(
          "conv_backward_data",
          [](B& b, TensorRef dy, TensorRef w, const Ints& dx_dims, const Ints& pre_padding, const Ints& post_padding,
             const Ints& stride, const Ints& dilation) {
            return with_conv_params(pre_padding, post_padding, stride, dilation, [&](const dnn::ConvParams& p) {
              return as_list(dx_dims, [&](List d) { return b.conv_backward_data(dy, w, d, p); });
            });
          },
          arg("dy"), arg("w"), arg("dx_dims"), nb::kw_only(), arg("pre_padding") = Ints{}, arg("post_padding") = Ints{},
          arg("stride") = Ints{}, arg("dilation") = Ints{}, "The data gradient dx (of dx_dims) from dy and w.")
      .def(
          "conv_backward_filter",
          [](B& b, TensorRef x, TensorRef dy, const Ints& dw_dims, const Ints& pre_padding, const Ints& post_padding,
             const Ints& stride, const Ints& dilation) {
            return with_conv_params(pre_padding, post_padding, stride, dilation, [&](const dnn::ConvParams& p) {
              return as_list(dw_dims, [&](List d) { return b.conv_backward_filter(x, dy, d, p); });
            });
          },
          arg("x"), arg("dy"), arg("dw_dims"), nb::kw_only(), arg("pre_padding") = Ints{}, arg("post_padding") = Ints{},
          arg("stride") = Ints{}, arg("dilation") = Ints{}, "The filter gradient dw (of dw_dims) from x and dy.")
      .def(
          "pointwise",
          [](B& b, nb::handle mode, TensorRef a, std::optional<TensorRef> c, float alpha) {
            return b.pointwise(enum_from_python<dnn::PointwiseMode>(mode, "DnnGraphBuilder.pointwise", "mode"), a,
                               ref_of(c), alpha);
          },
          arg("mode"), arg("a"), arg("b") = nb::none(), arg("alpha") = 1.0f,
          "mode(a) or mode(a, b), b broadcasting over dims of size 1.")
      .def("add", &B::add, arg("a"), arg("b"))
      .def("mul", &B::mul, arg("a"), arg("b"))
      .def("relu", &B::relu, arg("a"))
      .def("matmul", &B::matmul, arg("a"), arg("b"), "a @ b over the last two dims, batch dims broadcasting.")
      .def("batch_norm_inference", &B::batch_norm_inference, arg("x"), arg("mean"), arg("inv_variance"), arg("scale"),
           arg("bias"))
      .def(
          "batch_norm_training",
          [](B& b, TensorRef x, TensorRef scale, TensorRef bias, float epsilon) {
            return norm_outputs(b.batch_norm_training(x, scale, bias, epsilon));
          },
          arg("x"), arg("scale"), arg("bias"), arg("epsilon"), "(y, mean, inv_variance).")
      .def(
          "layer_norm",
          [](B& b, TensorRef x, TensorRef scale, TensorRef bias, float epsilon, bool training) {
            return norm_outputs(b.layer_norm(x, scale, bias, epsilon, training));
          },
          arg("x"), arg("scale"), arg("bias"), arg("epsilon"), arg("training") = false,
          "(y, mean, inv_variance): normalised over every dim but dim 0; the statistics only when training.")
      .def(
          "rms_norm",
          [](B& b, TensorRef x, TensorRef scale, float epsilon, bool training, std::optional<TensorRef> bias) {
            return norm_outputs(b.rms_norm(x, scale, epsilon, training, ref_of(bias)));
          },
          arg("x"), arg("scale"), arg("epsilon"), arg("training") = false, arg("bias") = nb::none(),
          "(y, None, inv_variance): RMS-normalised over every dim but dim 0.")
      .def(
          "reduction",
          [](B& b, nb::handle mode, TensorRef x, const Ints& out_dims) {
            const auto reduce = enum_from_python<dnn::ReductionMode>(mode, "DnnGraphBuilder.reduction", "mode");
            return as_list(out_dims, [&](List d) { return b.reduction(reduce, x, d); });
          },
          arg("mode"), arg("x"), arg("out_dims"), "x reduced to out_dims (dims of extent 1 are reduced).")
      .def(
          "reshape",
          [](B& b, TensorRef x, const Ints& dims) { return as_list(dims, [&](List d) { return b.reshape(x, d); }); },
          arg("x"), arg("dims"))
      .def(
          "pooling",
          [](B& b, TensorRef x, nb::handle mode, const Ints& window, const Ints& stride, const Ints& pre_padding,
             const Ints& post_padding) {
            const auto pool = enum_from_python<dnn::PoolingMode>(mode, "DnnGraphBuilder.pooling", "mode");
            return as_list(window, [&](List w) {
              return as_list(stride, [&](List s) {
                return as_list(pre_padding, [&](List p) {
                  return as_list(post_padding, [&](List q) {
                    return b.pooling(x, {.mode = pool, .window = w, .stride = s, .pre_padding = p, .post_padding = q});
                  });
                });
              });
            });
          },
          arg("x"), arg("mode") = "max", nb::kw_only(), arg("window") = Ints{}, arg("stride") = Ints{},
          arg("pre_padding") = Ints{}, arg("post_padding") = Ints{}, "Pooling over the spatial dims of x.")
      .def(
          "attention",
          [](B& b, TensorRef q, TensorRef k, TensorRef v, float scale, bool causal, std::optional<TensorRef> seq_len_q,
             std::optional<TensorRef> seq_len_kv, bool with_stats) {
            const dnn::AttentionOutputs out = b.attention(q, k, v,
                                                          {.scale = scale,
                                                           .causal = causal,
                                                           .seq_len_q = ref_of(seq_len_q),
                                                           .seq_len_kv = ref_of(seq_len_kv),
                                                           .with_stats = with_stats});
            return nb::make_tuple(out.o, optional_ref(out.stats));
          },
          arg("q"), arg("k"), arg("v"), nb::kw_only(), arg("scale") = 1.0f, arg("causal") = false,
          arg("seq_len_q") = nb::none(), arg("seq_len_kv") = nb::none(), arg("with_stats") = false,
          "(o, stats): softmax(scale q kᵀ) v of q [B, H, Sq, D], k [B, H, Skv, D], v [B, H, Skv, Dv].")
      .def(
          "output",
          [](B& b, TensorRef t, nb::handle dtype, nb::handle layout) {
            b.output(t, dtype_from_python(dtype),
                     enum_from_python<dnn::TensorLayout>(layout, "DnnGraphBuilder.output", "layout"));
          },
          arg("t"), arg("dtype"), arg("layout") = "channels_first", "Makes t a graph output stored in dtype.")
      .def(
          "build", [](B& b) { return PyDnnGraph{unwrap(b.build())}; }, "The DnnGraph, or the first mistake raised.");

  auto device = nb::borrow<nb::class_<PyDevice>>(module.attr("Device"));
  device.def("run_graph", &run_graph, arg("graph"), arg("bindings"),
             "Runs a DnnGraph (accel::RunGraph): `bindings` maps every non-virtual tensor (a DnnTensor or its uid) to "
             "an accel.Buffer of its dtype. Returns an accel.Future.");
  export_enums<dnn::PointwiseMode, dnn::ReductionMode, dnn::PoolingMode>(module);
}

}  // namespace accel::python
