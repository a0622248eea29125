#include "dnn/node_rules.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace accel::dnn {
namespace {

using DimVector = std::vector<std::int64_t>;

DimVector dims_of(const TensorDesc& t) { return {t.dims.begin(), t.dims.begin() + t.rank}; }

void add_present(std::vector<std::uint32_t>& to, std::initializer_list<std::uint32_t> uids) {
  for (std::uint32_t uid : uids)
    if (uid != 0) to.push_back(uid);
}

class Checker {
 public:
  Checker(const Node& node, const TensorLookup& lookup) : name_(node_name(node)), lookup_(lookup) {}

  Result<const TensorDesc*> get(std::uint32_t uid, std::string_view role) const {
    if (uid == 0) return invalid_argument(fmt::format("{}: no {} tensor", name_, role));
    const TensorDesc* t = lookup_(uid);
    if (t == nullptr)
      return invalid_argument(fmt::format("{}: {} names uid {}, not a tensor of the graph", name_, role, uid));
    return t;
  }
  Status fail(std::string_view what) const { return invalid_argument(fmt::format("{}: {}", name_, what)); }

 private:
  std::string_view name_;
  const TensorLookup& lookup_;
};

Result<DimVector> conv_output(const Checker& check, const DimVector& x, const DimVector& w, const ConvolutionNode& n) {
  const std::size_t r = n.spatial_rank;
  if (r < 1 || r > 3) return check.fail(fmt::format("spatial rank {} is outside 1..3", r));
  if (x.size() != r + 2 || w.size() != r + 2) {
    return check.fail(fmt::format("a {}-D convolution needs rank-{} activations and filters, got {} and {}", r, r + 2,
                                  x.size(), w.size()));
  }
  if (x[1] % w[1] != 0) {
    return check.fail(
        fmt::format("input channels {} are not a multiple of the filter's {} channels per group", x[1], w[1]));
  }
  const std::int64_t groups = x[1] / w[1];
  if (w[0] % groups != 0) {
    return check.fail(fmt::format("output channels {} are not a multiple of the {} groups", w[0], groups));
  }
  DimVector y{x[0], w[0]};
  for (std::size_t i = 0; i < r; ++i) {
    if (n.stride[i] < 1 || n.dilation[i] < 1 || n.pre_padding[i] < 0 || n.post_padding[i] < 0) {
      return check.fail(fmt::format("spatial dim {}: stride {} and dilation {} must be >= 1, padding {}/{} >= 0", i,
                                    n.stride[i], n.dilation[i], n.pre_padding[i], n.post_padding[i]));
    }
    // The extents are checked tensors' (below 2^48), but dilation and padding are any int64 of a decoded graph.
    std::int64_t span = 0, padded = 0;
    if (__builtin_mul_overflow(n.dilation[i], w[i + 2] - 1, &span) || __builtin_add_overflow(span, 1, &span) ||
        __builtin_add_overflow(x[i + 2], n.pre_padding[i], &padded) ||
        __builtin_add_overflow(padded, n.post_padding[i], &padded)) {
      return check.fail(fmt::format("spatial dim {}: dilation {} or padding {}/{} overflows", i, n.dilation[i],
                                    n.pre_padding[i], n.post_padding[i]));
    }
    if (padded < span) {
      return check.fail(
          fmt::format("spatial dim {}: the dilated filter ({}) is larger than the padded input ({})", i, span, padded));
    }
    y.push_back((padded - span) / n.stride[i] + 1);
  }
  return y;
}

Status same_dims(const Checker& check, const DimVector& got, const DimVector& want, std::string_view role) {
  if (got == want) return Status();
  return check.fail(fmt::format("{} has dims [{}], expected [{}]", role, fmt::join(got, ", "), fmt::join(want, ", ")));
}

// Enums arrive from decoded bytes too: a value outside the enum is refused, not computed with.
template <class Enum>
Status in_range(const Checker& check, Enum value, Enum last, std::string_view what) {
  if (static_cast<std::uint32_t>(value) <= static_cast<std::uint32_t>(last)) return Status();
  return check.fail(fmt::format("{} {} is not one of the enum's values", what, static_cast<std::uint32_t>(value)));
}

Result<std::vector<OutputShape>> infer(const ConvolutionNode& n, const Checker& check) {
  ACCEL_RETURN_IF_ERROR(in_range(check, n.direction, ConvDirection::backward_filter, "direction"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* a, check.get(n.a, "first input"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* b, check.get(n.b, "second input"));
  if (n.direction == ConvDirection::forward) {
    ACCEL_ASSIGN_OR_RETURN(DimVector y, conv_output(check, dims_of(*a), dims_of(*b), n));
    return std::vector<OutputShape>{{n.out, std::move(y)}};
  }
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* out, check.get(n.out, "output"));
  if (n.direction == ConvDirection::backward_data) {
    ACCEL_ASSIGN_OR_RETURN(DimVector dy, conv_output(check, dims_of(*out), dims_of(*b), n));
    ACCEL_RETURN_IF_ERROR(same_dims(check, dims_of(*a), dy, "dy"));
  } else {
    ACCEL_ASSIGN_OR_RETURN(DimVector dy, conv_output(check, dims_of(*a), dims_of(*out), n));
    ACCEL_RETURN_IF_ERROR(same_dims(check, dims_of(*b), dy, "dy"));
  }
  return std::vector<OutputShape>{{n.out, dims_of(*out)}};
}

Result<DimVector> broadcast(const Checker& check, const DimVector& a, const DimVector& b) {
  if (a.size() != b.size())
    return check.fail(fmt::format("operands of rank {} and {}: ranks must match", a.size(), b.size()));
  DimVector out(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i] && a[i] != 1 && b[i] != 1) {
      return check.fail(fmt::format("dim {} is {} and {}: neither is 1, they do not broadcast", i, a[i], b[i]));
    }
    out[i] = std::max(a[i], b[i]);
  }
  return out;
}

Result<std::vector<OutputShape>> infer(const PointwiseNode& n, const Checker& check) {
  ACCEL_RETURN_IF_ERROR(in_range(check, n.mode, PointwiseMode::abs, "mode"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* a, check.get(n.a, "first input"));
  if (!is_binary(n.mode)) {
    if (n.b != 0) return check.fail("a unary op takes one input");
    return std::vector<OutputShape>{{n.out, dims_of(*a)}};
  }
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* b, check.get(n.b, "second input"));
  ACCEL_ASSIGN_OR_RETURN(DimVector out, broadcast(check, dims_of(*a), dims_of(*b)));
  return std::vector<OutputShape>{{n.out, std::move(out)}};
}

Result<std::vector<OutputShape>> infer(const MatmulNode& n, const Checker& check) {
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* a, check.get(n.a, "a"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* b, check.get(n.b, "b"));
  const DimVector ad = dims_of(*a), bd = dims_of(*b);
  if (ad.size() < 2 || ad.size() != bd.size()) return check.fail("a and b need the same rank, at least 2");
  const std::size_t r = ad.size();
  if (ad[r - 1] != bd[r - 2])
    return check.fail(fmt::format("a has {} columns but b has {} rows", ad[r - 1], bd[r - 2]));
  ACCEL_ASSIGN_OR_RETURN(DimVector out,
                         broadcast(check, DimVector(ad.begin(), ad.end() - 2), DimVector(bd.begin(), bd.end() - 2)));
  out.push_back(ad[r - 2]);
  out.push_back(bd[r - 1]);
  return std::vector<OutputShape>{{n.out, std::move(out)}};
}

DimVector per_channel(const DimVector& x) {
  DimVector d(x.size(), 1);
  d[1] = x[1];
  return d;
}

DimVector per_sample(const DimVector& x) {
  DimVector d(x.size(), 1);
  d[0] = x[0];
  return d;
}

Result<std::vector<OutputShape>> infer(const BatchNormNode& n, const Checker& check) {
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* x, check.get(n.x, "x"));
  const DimVector xd = dims_of(*x);
  if (xd.size() < 2) return check.fail("x needs a channel dim (rank >= 2)");
  const DimVector channel = per_channel(xd);
  for (auto [uid, role] : {std::pair{n.scale, "scale"}, std::pair{n.bias, "bias"}}) {
    ACCEL_ASSIGN_OR_RETURN(const TensorDesc* t, check.get(uid, role));
    ACCEL_RETURN_IF_ERROR(same_dims(check, dims_of(*t), channel, role));
  }
  if (!n.training) {
    for (auto [uid, role] : {std::pair{n.mean, "mean"}, std::pair{n.inv_variance, "inv_variance"}}) {
      ACCEL_ASSIGN_OR_RETURN(const TensorDesc* t, check.get(uid, role));
      ACCEL_RETURN_IF_ERROR(same_dims(check, dims_of(*t), channel, role));
    }
    return std::vector<OutputShape>{{n.y, xd}};
  }
  if (!(n.epsilon > 0)) return check.fail("epsilon must be positive");
  return std::vector<OutputShape>{{n.y, xd}, {n.mean, channel}, {n.inv_variance, channel}};
}

Result<std::vector<OutputShape>> infer(const NormNode& n, const Checker& check) {
  ACCEL_RETURN_IF_ERROR(in_range(check, n.kind, NormKind::rms, "kind"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* x, check.get(n.x, "x"));
  const DimVector xd = dims_of(*x);
  if (xd.size() < 2) return check.fail("x needs a batch dim and at least one normalised dim");
  if (!(n.epsilon > 0)) return check.fail("epsilon must be positive");
  DimVector weights = xd;
  weights[0] = 1;
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* scale, check.get(n.scale, "scale"));
  ACCEL_RETURN_IF_ERROR(same_dims(check, dims_of(*scale), weights, "scale"));
  if (n.kind == NormKind::layer || n.bias != 0) {
    ACCEL_ASSIGN_OR_RETURN(const TensorDesc* bias, check.get(n.bias, "bias"));
    ACCEL_RETURN_IF_ERROR(same_dims(check, dims_of(*bias), weights, "bias"));
  }
  std::vector<OutputShape> out{{n.y, xd}};
  if (n.training) {
    if (n.kind == NormKind::layer) out.push_back({n.mean, per_sample(xd)});
    out.push_back({n.inv_variance, per_sample(xd)});
  } else if (n.mean != 0 || n.inv_variance != 0) {
    return check.fail("statistics are outputs of training only");
  }
  return out;
}

Result<std::vector<OutputShape>> infer(const ReductionNode& n, const Checker& check) {
  ACCEL_RETURN_IF_ERROR(in_range(check, n.mode, ReductionMode::norm2, "mode"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* x, check.get(n.x, "x"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* out, check.get(n.out, "output"));
  const DimVector xd = dims_of(*x), od = dims_of(*out);
  if (xd.size() != od.size()) return check.fail("the output keeps x's rank (reduced dims become 1)");
  for (std::size_t i = 0; i < xd.size(); ++i) {
    if (od[i] != xd[i] && od[i] != 1) {
      return check.fail(fmt::format("output dim {} is {}: it must be x's {} or 1 (reduced)", i, od[i], xd[i]));
    }
  }
  return std::vector<OutputShape>{{n.out, od}};
}

Result<std::vector<OutputShape>> infer(const ReshapeNode& n, const Checker& check) {
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* x, check.get(n.x, "x"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* out, check.get(n.out, "output"));
  if (element_count(*x) != element_count(*out)) {
    return check.fail(
        fmt::format("{} elements cannot take dims [{}]", element_count(*x), fmt::join(out->shape(), ", ")));
  }
  return std::vector<OutputShape>{{n.out, dims_of(*out)}};
}

Result<std::vector<OutputShape>> infer(const PoolingNode& n, const Checker& check) {
  ACCEL_RETURN_IF_ERROR(in_range(check, n.mode, PoolingMode::average_exclude_padding, "mode"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* x, check.get(n.x, "x"));
  const DimVector xd = dims_of(*x);
  const std::size_t r = n.spatial_rank;
  if (r < 1 || r > 3 || xd.size() != r + 2) {
    return check.fail(fmt::format("{}-D pooling needs a rank-{} input, got rank {}", r, r + 2, xd.size()));
  }
  DimVector out{xd[0], xd[1]};
  for (std::size_t i = 0; i < r; ++i) {
    if (n.window[i] < 1 || n.stride[i] < 1 || n.pre_padding[i] < 0 || n.post_padding[i] < 0) {
      return check.fail(fmt::format("spatial dim {}: window and stride must be >= 1, padding >= 0", i));
    }
    if (n.pre_padding[i] >= n.window[i] || n.post_padding[i] >= n.window[i]) {
      return check.fail(fmt::format("spatial dim {}: padding must be smaller than the window", i));
    }
    const std::int64_t padded = xd[i + 2] + n.pre_padding[i] + n.post_padding[i];
    if (padded < n.window[i]) return check.fail(fmt::format("spatial dim {}: the window is larger than the input", i));
    out.push_back((padded - n.window[i]) / n.stride[i] + 1);
  }
  return std::vector<OutputShape>{{n.out, std::move(out)}};
}

Result<std::vector<OutputShape>> infer(const AttentionNode& n, const Checker& check) {
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* q, check.get(n.q, "q"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* k, check.get(n.k, "k"));
  ACCEL_ASSIGN_OR_RETURN(const TensorDesc* v, check.get(n.v, "v"));
  const DimVector qd = dims_of(*q), kd = dims_of(*k), vd = dims_of(*v);
  if (qd.size() != 4 || kd.size() != 4 || vd.size() != 4) return check.fail("q, k and v are [B, H, S, D]");
  if (qd[0] != kd[0] || qd[0] != vd[0] || qd[1] != kd[1] || qd[1] != vd[1]) {
    return check.fail("q, k and v need the same batch and heads");
  }
  if (kd[2] != vd[2]) return check.fail("k and v need the same sequence length");
  if (qd[3] != kd[3]) return check.fail("q and k need the same head dim");
  if ((n.seq_len_q == 0) != (n.seq_len_kv == 0))
    return check.fail("a padding mask needs both seq_len_q and seq_len_kv");
  for (std::uint32_t uid : {n.seq_len_q, n.seq_len_kv}) {
    if (uid == 0) continue;
    ACCEL_ASSIGN_OR_RETURN(const TensorDesc* t, check.get(uid, "sequence lengths"));
    ACCEL_RETURN_IF_ERROR(same_dims(check, dims_of(*t), {qd[0], 1, 1, 1}, "sequence lengths"));
    if (t->dtype != DType::i32) return check.fail("sequence lengths are i32");
  }
  std::vector<OutputShape> out{{n.o, {qd[0], qd[1], qd[2], vd[3]}}};
  if (n.stats != 0) out.push_back({n.stats, {qd[0], qd[1], qd[2], 1}});
  return out;
}

}  // namespace

NodeTensors tensors_of(const Node& node) {
  NodeTensors io;
  std::visit(
      [&](const auto& n) {
        using T = std::decay_t<decltype(n)>;
        if constexpr (std::is_same_v<T, ConvolutionNode> || std::is_same_v<T, PointwiseNode> ||
                      std::is_same_v<T, MatmulNode>) {
          add_present(io.inputs, {n.a, n.b});
          add_present(io.outputs, {n.out});
        } else if constexpr (std::is_same_v<T, BatchNormNode>) {
          add_present(io.inputs, {n.x, n.scale, n.bias});
          if (n.training) {
            add_present(io.outputs, {n.y, n.mean, n.inv_variance});
          } else {
            add_present(io.inputs, {n.mean, n.inv_variance});
            add_present(io.outputs, {n.y});
          }
        } else if constexpr (std::is_same_v<T, NormNode>) {
          add_present(io.inputs, {n.x, n.scale, n.bias});
          add_present(io.outputs, {n.y, n.mean, n.inv_variance});
        } else if constexpr (std::is_same_v<T, ReductionNode> || std::is_same_v<T, ReshapeNode> ||
                             std::is_same_v<T, PoolingNode>) {
          add_present(io.inputs, {n.x});
          add_present(io.outputs, {n.out});
        } else {
          static_assert(std::is_same_v<T, AttentionNode>);
          add_present(io.inputs, {n.q, n.k, n.v, n.seq_len_q, n.seq_len_kv});
          add_present(io.outputs, {n.o, n.stats});
        }
      },
      node);
  return io;
}

Result<std::vector<OutputShape>> infer_outputs(const Node& node, const TensorLookup& lookup) {
  const Checker check(node, lookup);
  return std::visit([&](const auto& n) { return infer(n, check); }, node);
}

}  // namespace accel::dnn
