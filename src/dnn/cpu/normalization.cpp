// Batch, layer and RMS norm. Statistics are two-pass (mean, then the mean of squared deviations) so that the
// reference does not lose digits to cancellation on inputs with a large mean.
#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "dnn/cpu/kernels.hpp"

namespace accel::dnn::cpu {
namespace {

Status expect_dims(std::string_view op, std::string_view role, const DenseTensor* t,
                   const std::vector<std::int64_t>& dims) {
  if (t == nullptr || t->dims == dims) return Status();
  return invalid_argument(
      fmt::format("{}: {} has dims [{}], expected [{}]", op, role, fmt::join(t->dims, ", "), fmt::join(dims, ", ")));
}

// x's dims with every dim but `kept` set to 1.
std::vector<std::int64_t> stats_dims(const DenseTensor& x, std::size_t kept) {
  std::vector<std::int64_t> dims(x.dims.size(), 1);
  dims[kept] = x.dims[kept];
  return dims;
}

DenseTensor filled(std::vector<std::int64_t> dims, double value) {
  std::vector<double> values(static_cast<std::size_t>(volume(dims)), value);
  return {.dims = std::move(dims), .values = std::move(values)};
}

// x viewed as [outer, C, inner] (C = dim 1): the elements of channel c are x[o * C * inner + c * inner + i].
struct ChannelView {
  std::int64_t outer = 0, channels = 0, inner = 0;
  template <class Visit>
  void for_each(std::int64_t c, Visit&& visit) const {
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) visit((o * channels + c) * inner + i);
  }
};

}  // namespace

Result<NormalizedTensors> batch_norm(const BatchNormNode& node, const NormInputs& in) {
  const DenseTensor& x = in.x;
  if (x.dims.size() < 2) return invalid_argument("batch norm: x needs a channel dim (rank >= 2)");
  const std::vector<std::int64_t> channel_dims = stats_dims(x, 1);
  for (auto [role, t] : {std::pair{"scale", &in.scale}, std::pair{"bias", in.bias}, std::pair{"mean", in.mean},
                         std::pair{"inv_variance", in.inv_variance}}) {
    ACCEL_RETURN_IF_ERROR(expect_dims("batch norm", role, t, channel_dims));
  }
  const ChannelView view{.outer = x.dims[0], .channels = x.dims[1], .inner = volume(DenseDims(x.dims).subspan(2))};
  NormalizedTensors out{.y = filled(x.dims, 0.0)};
  if (node.training) {
    out.mean = filled(channel_dims, 0.0);
    out.inv_variance = filled(channel_dims, 0.0);
    const double count = static_cast<double>(view.outer * view.inner);
    for (std::int64_t c = 0; c < view.channels; ++c) {
      double sum = 0, squares = 0;
      view.for_each(c, [&](std::int64_t i) { sum += x.values[i]; });
      const double mean = sum / count;
      view.for_each(c, [&](std::int64_t i) { squares += (x.values[i] - mean) * (x.values[i] - mean); });
      out.mean.values[c] = mean;
      out.inv_variance.values[c] = 1.0 / std::sqrt(squares / count + static_cast<double>(node.epsilon));
    }
  } else if (in.mean == nullptr || in.inv_variance == nullptr) {
    return invalid_argument("batch norm inference: needs mean and inv_variance");
  }
  const DenseTensor& mean = node.training ? out.mean : *in.mean;
  const DenseTensor& inv_variance = node.training ? out.inv_variance : *in.inv_variance;
  for (std::int64_t c = 0; c < view.channels; ++c) {
    const double shift = in.bias != nullptr ? in.bias->values[c] : 0.0;
    const double factor = inv_variance.values[c] * in.scale.values[c];
    view.for_each(c, [&](std::int64_t i) { out.y.values[i] = (x.values[i] - mean.values[c]) * factor + shift; });
  }
  return out;
}

Result<NormalizedTensors> norm(const NormNode& node, const NormInputs& in) {
  const DenseTensor& x = in.x;
  const std::string_view op = node.kind == NormKind::layer ? "layer norm" : "RMS norm";
  if (x.dims.size() < 2) return invalid_argument(fmt::format("{}: x needs rank >= 2", op));
  std::vector<std::int64_t> weight_dims = x.dims;
  weight_dims[0] = 1;
  ACCEL_RETURN_IF_ERROR(expect_dims(op, "scale", &in.scale, weight_dims));
  ACCEL_RETURN_IF_ERROR(expect_dims(op, "bias", in.bias, weight_dims));
  const std::int64_t samples = x.dims[0], features = volume(weight_dims);
  const std::vector<std::int64_t> sample_dims = stats_dims(x, 0);
  NormalizedTensors out{.y = filled(x.dims, 0.0), .inv_variance = filled(sample_dims, 0.0)};
  if (node.kind == NormKind::layer) out.mean = filled(sample_dims, 0.0);
  for (std::int64_t n = 0; n < samples; ++n) {
    const double* row = x.values.data() + n * features;
    double mean = 0;
    if (node.kind == NormKind::layer) {
      for (std::int64_t f = 0; f < features; ++f) mean += row[f];
      mean /= static_cast<double>(features);
      out.mean.values[n] = mean;
    }
    // Layer norm: the variance about the mean; RMS norm: the mean square (mean stays 0).
    double squares = 0;
    for (std::int64_t f = 0; f < features; ++f) squares += (row[f] - mean) * (row[f] - mean);
    const double inv_variance =
        1.0 / std::sqrt(squares / static_cast<double>(features) + static_cast<double>(node.epsilon));
    out.inv_variance.values[n] = inv_variance;
    double* y = out.y.values.data() + n * features;
    for (std::int64_t f = 0; f < features; ++f) {
      y[f] = (row[f] - mean) * inv_variance * in.scale.values[f] + (in.bias != nullptr ? in.bias->values[f] : 0.0);
    }
  }
  return out;
}

}  // namespace accel::dnn::cpu
