#include "dnn/cudnn/cudnn_plan.hpp"

#include <cudnn_frontend.h>
#include <fmt/format.h>

#include <unordered_map>

#include "dnn/node_rules.hpp"

namespace accel::dnn::cudnn {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

class CudnnPlan {
 public:
  std::shared_ptr<fe::graph::Graph> graph;
  std::int64_t workspace = 0;
  std::string engine;
};

namespace {

// -- errors --------------------------------------------------------------------------------------------------

Status from_frontend(fe::error_t error, std::string_view stage) {
  const std::string message = fmt::format("cuDNN {}: {}", stage, error.get_message());
  switch (error.get_code()) {
    case fe::error_code_t::OK: return Status();
    case fe::error_code_t::GRAPH_NOT_SUPPORTED:
    case fe::error_code_t::GRAPH_EXECUTION_PLAN_CREATION_FAILED:
    case fe::error_code_t::HEURISTIC_QUERY_FAILED:
    case fe::error_code_t::UNSUPPORTED_GRAPH_FORMAT:
      return Status(Code::not_supported, fmt::format("not supported by cuDNN for this configuration ({})", message),
                    Source::cudnn, static_cast<std::int64_t>(error.get_code()));
    case fe::error_code_t::ATTRIBUTE_NOT_SET:
    case fe::error_code_t::SHAPE_DEDUCTION_FAILED:
    case fe::error_code_t::INVALID_TENSOR_NAME:
    case fe::error_code_t::INVALID_VARIANT_PACK:
    case fe::error_code_t::INVALID_VALUE:
      return Status(Code::invalid_argument, message, Source::cudnn, static_cast<std::int64_t>(error.get_code()));
    default:
      // The backend refusing a descriptor is cuDNN saying "not for this configuration" too.
      if (message.find("NOT_SUPPORTED") != std::string::npos) {
        return Status(Code::not_supported, fmt::format("not supported by cuDNN for this configuration ({})", message),
                      Source::cudnn, static_cast<std::int64_t>(error.get_code()));
      }
      return Status(Code::internal, message, Source::cudnn, static_cast<std::int64_t>(error.get_code()));
  }
}

#define ACCEL_RETURN_IF_FE_ERROR(expr, stage)                                                \
  do {                                                                                       \
    if (auto fe_error_ = (expr); fe_error_.is_bad()) return from_frontend(fe_error_, stage); \
  } while (false)

// -- lowering -----------------------------------------------------------------------------------------------

Result<fe::DataType_t> to_frontend(DType dtype) {
  switch (dtype) {
    case DType::f32: return fe::DataType_t::FLOAT;
    case DType::f64: return fe::DataType_t::DOUBLE;
    case DType::f16: return fe::DataType_t::HALF;
    case DType::bf16: return fe::DataType_t::BFLOAT16;
    case DType::fp8_e4m3: return fe::DataType_t::FP8_E4M3;
    case DType::fp8_e5m2: return fe::DataType_t::FP8_E5M2;
    case DType::i8: return fe::DataType_t::INT8;
    case DType::i32: return fe::DataType_t::INT32;
    case DType::u8: return fe::DataType_t::UINT8;
    case DType::i64: return fe::DataType_t::INT64;
    case DType::u32:
    case DType::u64:
    case DType::c64:
    case DType::c128:
    case DType::c32: break;
  }
  return invalid_argument("unknown dtype");
}

fe::PointwiseMode_t to_frontend(PointwiseMode mode) {
  switch (mode) {
    case PointwiseMode::add: return fe::PointwiseMode_t::ADD;
    case PointwiseMode::sub: return fe::PointwiseMode_t::SUB;
    case PointwiseMode::mul: return fe::PointwiseMode_t::MUL;
    case PointwiseMode::div: return fe::PointwiseMode_t::DIV;
    case PointwiseMode::min: return fe::PointwiseMode_t::MIN;
    case PointwiseMode::max: return fe::PointwiseMode_t::MAX;
    case PointwiseMode::relu: return fe::PointwiseMode_t::RELU_FWD;
    case PointwiseMode::sigmoid: return fe::PointwiseMode_t::SIGMOID_FWD;
    case PointwiseMode::tanh: return fe::PointwiseMode_t::TANH_FWD;
    case PointwiseMode::gelu: return fe::PointwiseMode_t::GELU_FWD;
    case PointwiseMode::gelu_approx_tanh: return fe::PointwiseMode_t::GELU_APPROX_TANH_FWD;
    case PointwiseMode::swish: return fe::PointwiseMode_t::SWISH_FWD;
    case PointwiseMode::elu: return fe::PointwiseMode_t::ELU_FWD;
    case PointwiseMode::softplus: return fe::PointwiseMode_t::SOFTPLUS_FWD;
    case PointwiseMode::identity: return fe::PointwiseMode_t::IDENTITY;
    case PointwiseMode::sqrt: return fe::PointwiseMode_t::SQRT;
    case PointwiseMode::rsqrt: return fe::PointwiseMode_t::RSQRT;
    case PointwiseMode::exp: return fe::PointwiseMode_t::EXP;
    case PointwiseMode::log: return fe::PointwiseMode_t::LOG;
    case PointwiseMode::neg: return fe::PointwiseMode_t::NEG;
    case PointwiseMode::abs: return fe::PointwiseMode_t::ABS;
  }
  return fe::PointwiseMode_t::NOT_SET;
}

fe::ReductionMode_t to_frontend(ReductionMode mode) {
  switch (mode) {
    case ReductionMode::add: return fe::ReductionMode_t::ADD;
    case ReductionMode::mul: return fe::ReductionMode_t::MUL;
    case ReductionMode::min: return fe::ReductionMode_t::MIN;
    case ReductionMode::max: return fe::ReductionMode_t::MAX;
    case ReductionMode::mean: return fe::ReductionMode_t::AVG;
    case ReductionMode::norm1: return fe::ReductionMode_t::NORM1;
    case ReductionMode::norm2: return fe::ReductionMode_t::NORM2;
  }
  return fe::ReductionMode_t::NOT_SET;
}

fe::ResampleMode_t to_frontend(PoolingMode mode) {
  switch (mode) {
    case PoolingMode::max: return fe::ResampleMode_t::MAXPOOL;
    case PoolingMode::average_include_padding: return fe::ResampleMode_t::AVGPOOL_INCLUDE_PADDING;
    case PoolingMode::average_exclude_padding: return fe::ResampleMode_t::AVGPOOL_EXCLUDE_PADDING;
  }
  return fe::ResampleMode_t::NOT_SET;
}

std::vector<std::int64_t> first(const SpatialParams& params, std::size_t count) {
  return {params.begin(), params.begin() + count};
}

// The compute type of a graph: double where any bound tensor is f64, else float.
fe::DataType_t compute_type(const Graph& graph) {
  for (const TensorDesc& t : graph.tensors())
    if (t.dtype == DType::f64) return fe::DataType_t::DOUBLE;
  return fe::DataType_t::FLOAT;
}

class Lowering {
 public:
  explicit Lowering(const Graph& graph) : graph_(graph), compute_(compute_type(graph)) {
    fe_ = std::make_shared<fe::graph::Graph>();
    fe_->set_intermediate_data_type(compute_).set_compute_data_type(compute_);
  }

  Result<std::shared_ptr<fe::graph::Graph>> run() {
    for (const Node& node : graph_.nodes()) {
      for (std::uint32_t uid : tensors_of(node).inputs) ACCEL_RETURN_IF_ERROR(ensure_input(uid));
      ACCEL_RETURN_IF_ERROR(std::visit([&](const auto& n) { return lower(n); }, node));
    }
    return fe_;
  }

 private:
  const TensorDesc& desc(std::uint32_t uid) const { return *graph_.find(uid); }

  // Graph inputs become frontend tensors the first time an op reads them.
  Status ensure_input(std::uint32_t uid) {
    if (tensors_.contains(uid)) return Status();
    const TensorDesc& d = desc(uid);
    ACCEL_ASSIGN_OR_RETURN(const fe::DataType_t dtype, to_frontend(d.dtype));
    tensors_[uid] = fe_->tensor(fe::graph::Tensor_attributes()
                                    .set_name(fmt::format("t{}", uid))
                                    .set_uid(uid)
                                    .set_dim({d.dims.begin(), d.dims.begin() + d.rank})
                                    .set_stride({d.strides.begin(), d.strides.begin() + d.rank})
                                    .set_data_type(dtype));
    return Status();
  }

  // An op's result: dims and strides as the graph says; bound results also get their uid and dtype.
  Status result(std::uint32_t uid, const TensorPtr& tensor) {
    if (uid == 0) return Status();
    const TensorDesc& d = desc(uid);
    tensor->set_name(fmt::format("t{}", uid))
        .set_dim({d.dims.begin(), d.dims.begin() + d.rank})
        .set_stride({d.strides.begin(), d.strides.begin() + d.rank});
    if (!d.is_virtual) {
      ACCEL_ASSIGN_OR_RETURN(const fe::DataType_t dtype, to_frontend(d.dtype));
      tensor->set_uid(uid).set_output(true).set_data_type(dtype);
    }
    tensors_[uid] = tensor;
    return Status();
  }

  TensorPtr in(std::uint32_t uid) { return uid == 0 ? nullptr : tensors_.at(uid); }
  TensorPtr scalar(float value) { return fe_->tensor(value, fe::graph::ScalarType::RUNTIME_PARAM); }

  // The same parameters for every direction; each direction has its own attribute type.
  template <class Attributes>
  Attributes convolution(const ConvolutionNode& n) const {
    const std::size_t r = n.spatial_rank;
    Attributes attributes;
    attributes.set_pre_padding(first(n.pre_padding, r))
        .set_post_padding(first(n.post_padding, r))
        .set_stride(first(n.stride, r))
        .set_dilation(first(n.dilation, r));
    attributes.set_compute_data_type(compute_);
    return attributes;
  }

  Status lower(const ConvolutionNode& n) {
    TensorPtr out;
    switch (n.direction) {
      case ConvDirection::forward:
        out = fe_->conv_fprop(in(n.a), in(n.b), convolution<fe::graph::Conv_fprop_attributes>(n));
        break;
      case ConvDirection::backward_data:
        out = fe_->conv_dgrad(in(n.a), in(n.b), convolution<fe::graph::Conv_dgrad_attributes>(n));
        break;
      case ConvDirection::backward_filter:
        // The frontend takes (dy, x); our node is (x, dy).
        out = fe_->conv_wgrad(in(n.b), in(n.a), convolution<fe::graph::Conv_wgrad_attributes>(n));
        break;
    }
    return result(n.out, out);
  }

  Status lower(const PointwiseNode& n) {
    auto attributes = fe::graph::Pointwise_attributes().set_mode(to_frontend(n.mode)).set_compute_data_type(compute_);
    if (n.mode == PointwiseMode::swish) attributes.set_swish_beta(n.alpha);
    if (n.mode == PointwiseMode::elu) attributes.set_elu_alpha(n.alpha);
    if (n.mode == PointwiseMode::softplus) attributes.set_softplus_beta(n.alpha);
    TensorPtr out = n.b == 0 ? fe_->pointwise(in(n.a), attributes) : fe_->pointwise(in(n.a), in(n.b), attributes);
    return result(n.out, out);
  }

  Status lower(const MatmulNode& n) {
    // cuDNN broadcasts a batch dim by a zero stride over the full extent, not by an extent of 1.
    const TensorDesc& out = desc(n.out);
    for (std::uint32_t uid : {n.a, n.b}) {
      const TensorDesc& operand = desc(uid);
      std::vector<std::int64_t> dims(operand.dims.begin(), operand.dims.begin() + operand.rank);
      std::vector<std::int64_t> strides(operand.strides.begin(), operand.strides.begin() + operand.rank);
      bool broadcast = false;
      for (std::size_t i = 0; i + 2 < dims.size(); ++i) {
        if (dims[i] == 1 && out.dims[i] != 1) {
          dims[i] = out.dims[i];
          strides[i] = 0;
          broadcast = true;
        }
      }
      if (broadcast) tensors_.at(uid)->set_dim(dims).set_stride(strides);
    }
    return result(n.out, fe_->matmul(in(n.a), in(n.b), fe::graph::Matmul_attributes().set_compute_data_type(compute_)));
  }

  Status lower(const BatchNormNode& n) {
    if (!n.training) {
      return result(
          n.y, fe_->batchnorm_inference(in(n.x), in(n.mean), in(n.inv_variance), in(n.scale), in(n.bias),
                                        fe::graph::Batchnorm_inference_attributes().set_compute_data_type(compute_)));
    }
    TensorPtr epsilon = scalar(n.epsilon);
    auto outputs =
        fe_->batchnorm(in(n.x), in(n.scale), in(n.bias),
                       fe::graph::Batchnorm_attributes().set_epsilon(epsilon).set_compute_data_type(compute_));
    ACCEL_RETURN_IF_ERROR(result(n.y, outputs[0]));
    ACCEL_RETURN_IF_ERROR(result(n.mean, outputs[1]));
    return result(n.inv_variance, outputs[2]);
  }

  Status lower(const NormNode& n) {
    const fe::NormFwdPhase_t phase = n.training ? fe::NormFwdPhase_t::TRAINING : fe::NormFwdPhase_t::INFERENCE;
    TensorPtr epsilon = scalar(n.epsilon);
    if (n.kind == NormKind::layer) {
      auto outputs = fe_->layernorm(
          in(n.x), in(n.scale), in(n.bias),
          fe::graph::Layernorm_attributes().set_forward_phase(phase).set_epsilon(epsilon).set_compute_data_type(
              compute_));
      ACCEL_RETURN_IF_ERROR(result(n.y, outputs[0]));
      ACCEL_RETURN_IF_ERROR(result(n.mean, outputs[1]));
      return result(n.inv_variance, outputs[2]);
    }
    auto attributes =
        fe::graph::Rmsnorm_attributes().set_forward_phase(phase).set_epsilon(epsilon).set_compute_data_type(compute_);
    if (n.bias != 0) {
      TensorPtr bias = in(n.bias);
      attributes.set_bias(bias);
    }
    auto outputs = fe_->rmsnorm(in(n.x), in(n.scale), attributes);
    ACCEL_RETURN_IF_ERROR(result(n.y, outputs[0]));
    return result(n.inv_variance, outputs[1]);
  }

  Status lower(const ReductionNode& n) {
    return result(
        n.out,
        fe_->reduction(
            in(n.x), fe::graph::Reduction_attributes().set_mode(to_frontend(n.mode)).set_compute_data_type(compute_)));
  }

  Status lower(const ReshapeNode& n) {
    const TensorDesc& d = desc(n.out);
    return result(
        n.out,
        fe_->reshape(in(n.x), fe::graph::Reshape_attributes().set_dim({d.dims.begin(), d.dims.begin() + d.rank})));
  }

  Status lower(const PoolingNode& n) {
    const std::size_t r = n.spatial_rank;
    auto outputs = fe_->resample(
        in(n.x),
        fe::graph::Resample_attributes()
            .set_resampling_mode(to_frontend(n.mode))
            .set_padding_mode(n.mode == PoolingMode::max ? fe::PaddingMode_t::NEG_INF_PAD : fe::PaddingMode_t::ZERO_PAD)
            .set_window(first(n.window, r))
            .set_stride(first(n.stride, r))
            .set_pre_padding(first(n.pre_padding, r))
            .set_post_padding(first(n.post_padding, r))
            .set_generate_index(false)
            .set_compute_data_type(compute_));
    return result(n.out, outputs[0]);
  }

  Status lower(const AttentionNode& n) {
    for (std::uint32_t uid : {n.q, n.k, n.v}) {
      if (desc(uid).dtype != DType::f16 && desc(uid).dtype != DType::bf16) {
        return not_supported(fmt::format("cuDNN attention takes f16 or bf16 q, k and v; %{} is {}", uid,
                                         accel::to_string(desc(uid).dtype)));
      }
    }
    auto attributes = fe::graph::SDPA_attributes()
                          .set_generate_stats(n.stats != 0)
                          .set_causal_mask(n.causal)
                          .set_attn_scale(n.scale)
                          .set_compute_data_type(compute_);
    if (n.seq_len_q != 0) {
      attributes.set_padding_mask(true).set_seq_len_q(in(n.seq_len_q)).set_seq_len_kv(in(n.seq_len_kv));
    }
    auto outputs = fe_->sdpa(in(n.q), in(n.k), in(n.v), attributes);
    ACCEL_RETURN_IF_ERROR(result(n.o, outputs[0]));
    if (n.stats != 0) {
      ACCEL_RETURN_IF_ERROR(result(n.stats, outputs[1]));
    }
    return Status();
  }

  const Graph& graph_;
  const fe::DataType_t compute_;
  std::shared_ptr<fe::graph::Graph> fe_;
  std::unordered_map<std::uint32_t, TensorPtr> tensors_;
};

// f64 graphs: cuDNN 9.14's engines accepted f64 convolutions on the H100 and left the output unwritten, so
// they are refused rather than trusted.
Status check_dtypes(const Graph& graph) {
  for (const TensorDesc& t : graph.tensors()) {
    if (t.dtype == DType::f64) {
      return not_supported(
          fmt::format("cuDNN graphs in f64 (tensor %{}) are not supported on CUDA devices here; "
                      "run them on the CPU device",
                      t.uid));
    }
  }
  return Status();
}

}  // namespace

Result<BuiltPlan> build_plan(const Graph& graph, cudnnHandle_t handle) {
  ACCEL_RETURN_IF_ERROR(check_dtypes(graph));
  auto plan = std::make_shared<CudnnPlan>();
  ACCEL_ASSIGN_OR_RETURN(plan->graph, Lowering(graph).run());
  fe::graph::Graph& g = *plan->graph;
  ACCEL_RETURN_IF_FE_ERROR(g.validate(), "validate");
  ACCEL_RETURN_IF_FE_ERROR(g.build_operation_graph(handle), "build_operation_graph");
  ACCEL_RETURN_IF_FE_ERROR(g.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}),
                           "create_execution_plans");
  ACCEL_RETURN_IF_FE_ERROR(g.check_support(), "check_support");
  ACCEL_RETURN_IF_FE_ERROR(g.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), "build_plans");
  ACCEL_RETURN_IF_FE_ERROR(g.get_workspace_size(plan->workspace), "get_workspace_size");
  ACCEL_RETURN_IF_FE_ERROR(g.get_plan_name(plan->engine), "get_plan_name");

  BuiltPlan built;
  // cuDNN refuses to serialise some engines (the frontend then throws); the plan is still good for this process.
  try {
    std::vector<std::uint8_t> bytes;
    if (fe::error_t serialized = g.serialize(bytes); serialized.is_good()) {
      built.serialized.resize(bytes.size());
      std::memcpy(built.serialized.data(), bytes.data(), bytes.size());
    } else {
      built.unserializable_reason = serialized.get_message();
    }
  } catch (const std::exception& error) {
    built.unserializable_reason = error.what();
  }
  built.plan = std::move(plan);
  return built;
}

Result<std::shared_ptr<const CudnnPlan>> load_plan(std::span<const std::byte> bytes, std::string engine,
                                                   cudnnHandle_t handle) {
  auto plan = std::make_shared<CudnnPlan>();
  plan->engine = std::move(engine);
  plan->graph = std::make_shared<fe::graph::Graph>();
  try {
    std::vector<std::uint8_t> data(bytes.size());
    std::memcpy(data.data(), bytes.data(), bytes.size());
    ACCEL_RETURN_IF_FE_ERROR(plan->graph->deserialize(handle, data), "deserialize");
  } catch (const std::exception& error) {
    return invalid_argument(fmt::format("cuDNN deserialize: {}", error.what()));
  }
  // A deserialised graph knows its plan but not the engine configs it came from: only the workspace is asked.
  ACCEL_RETURN_IF_FE_ERROR(plan->graph->get_workspace_size(plan->workspace), "get_workspace_size");
  return std::shared_ptr<const CudnnPlan>(std::move(plan));
}

std::int64_t workspace_bytes(const CudnnPlan& plan) noexcept { return plan.workspace; }
const std::string& engine_name(const CudnnPlan& plan) noexcept { return plan.engine; }

Status execute(const CudnnPlan& plan, cudnnHandle_t handle, std::span<const std::pair<std::uint32_t, void*>> addresses,
               void* workspace) {
  std::unordered_map<std::int64_t, void*> pack;
  pack.reserve(addresses.size());
  for (const auto& [uid, address] : addresses) pack.emplace(uid, address);
  ACCEL_RETURN_IF_FE_ERROR(plan.graph->execute(handle, pack, workspace), "execute");
  return Status();
}

std::vector<LibraryVersion> cudnn_libraries() {
  const auto v = static_cast<std::int64_t>(cudnnGetVersion());
  return {{.name = "cuDNN", .version = fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100)},
          {.name = "cudnn-frontend",
           .version = fmt::format("{}.{}.{}", CUDNN_FRONTEND_MAJOR_VERSION, CUDNN_FRONTEND_MINOR_VERSION,
                                  CUDNN_FRONTEND_PATCH_VERSION)}};
}

std::string cudnn_library() {
  const auto v = static_cast<std::int64_t>(cudnnGetVersion());
  return fmt::format("cuDNN {}.{}.{} (frontend {}.{}.{})", v / 10000, (v / 100) % 100, v % 100,
                     CUDNN_FRONTEND_MAJOR_VERSION, CUDNN_FRONTEND_MINOR_VERSION, CUDNN_FRONTEND_PATCH_VERSION);
}

}  // namespace accel::dnn::cudnn
