#include "jit/cutlass_requests.hpp"

#include <fmt/format.h>

#include "libs/blas/stored_matrix.hpp"

namespace accel::jit {
namespace {

constexpr std::uint64_t kTmaAlignmentBytes = 16;

bool is_output_type(DType dtype) { return dtype == DType::f16 || dtype == DType::bf16 || dtype == DType::f32; }

Result<StoredMatrix> stored(std::string_view request, std::string_view name, std::int64_t rows, std::int64_t cols,
                            MatrixOrder order, std::int64_t ld, std::uint64_t offset, DType dtype) {
  StoredMatrix matrix{.rows = rows, .cols = cols, .order = order, .offset = offset};
  const Result<blas::StoredLayout> layout = blas::check_stored_matrix(rows, cols, order, ld, name);
  if (!layout.ok()) {
    return Status(layout.status().code(), fmt::format("{}: {}", request, layout.status().message()));
  }
  matrix.ld = layout->ld;
  matrix.extent = layout->extent;
  if ((static_cast<std::uint64_t>(matrix.ld) * size_of(dtype)) % kTmaAlignmentBytes != 0 ||
      (offset * size_of(dtype)) % kTmaAlignmentBytes != 0) {
    return invalid_argument(fmt::format(
        "{}: matrix {} (ld {}, offset {}, {}) is not 16-byte aligned: CUTLASS's TMA loads need every row (column for "
        "column-major) and the start to lie on 16 bytes, i.e. ld and offset multiples of {}",
        request, name, matrix.ld, offset, to_string(dtype), kTmaAlignmentBytes / size_of(dtype)));
  }
  return matrix;
}

Status check_types(std::string_view request, DType input, DType output, MatrixOrder layout_a, MatrixOrder layout_b) {
  if (input != DType::f16 && input != DType::bf16 && input != DType::fp8_e4m3) {
    return not_supported(
        fmt::format("{}: input type {} (CUTLASS kernels here take f16, bf16 or fp8_e4m3)", request, to_string(input)));
  }
  if (!is_output_type(output)) {
    return not_supported(fmt::format("{}: output type {} (f16, bf16 or f32)", request, to_string(output)));
  }
  if (input == DType::fp8_e4m3 && (layout_a != MatrixOrder::row_major || layout_b != MatrixOrder::column_major)) {
    return not_supported(
        fmt::format("{}: fp8 inputs need row-major A and column-major B (K-major operands of "
                    "Hopper's fp8 tensor cores), got A {} and B {}",
                    request, to_string(layout_a), to_string(layout_b)));
  }
  if (input != DType::fp8_e4m3 && output != input && output != DType::f32) {
    return not_supported(fmt::format("{}: {} inputs give {} or f32 outputs, not {}", request, to_string(input),
                                     to_string(input), to_string(output)));
  }
  return Status();
}

Status check_sizes(std::string_view request, std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) {
    return invalid_argument(fmt::format("{}: sizes must be positive, got m={} n={} k={}", request, m, n, k));
  }
  return Status();
}

Status check_present(std::string_view request, std::string_view name, const BufferHandle& handle) {
  if (handle.is_null()) return invalid_argument(fmt::format("{}: operand {} is missing", request, name));
  return Status();
}

cutlass::Layout layout_of(MatrixOrder order) {
  return order == MatrixOrder::row_major ? cutlass::Layout::row_major : cutlass::Layout::column_major;
}

// An explicit tile overrides the defaults field by field (zeros keep the default).
cutlass::TileConfig apply(cutlass::TileConfig config, const KernelTile& tile) {
  if (tile.m != 0) config.tile_m = tile.m;
  if (tile.n != 0) config.tile_n = tile.n;
  if (tile.k != 0) config.tile_k = tile.k;
  if (tile.cluster_m != 0) config.cluster_m = tile.cluster_m;
  if (tile.cluster_n != 0) config.cluster_n = tile.cluster_n;
  if (tile.schedule == KernelSchedule::tma_cooperative) config.schedule = cutlass::Schedule::tma_cooperative;
  if (tile.schedule == KernelSchedule::tma_pingpong) config.schedule = cutlass::Schedule::tma_pingpong;
  return config;
}

// Large problems take the 128x256 cooperative tile with 2-CTA clusters (the shape cuBLAS picks for them on
// Hopper); small ones a 128x128 tile, so that more CTAs fill the 132 SMs.
cutlass::TileConfig default_gemm_tile(DType input, std::int64_t m, std::int64_t n) {
  const std::int32_t tile_k = input == DType::fp8_e4m3 ? 128 : 64;
  if (m * n >= std::int64_t{2048} * 2048) {
    return {.tile_m = 128, .tile_n = 256, .tile_k = tile_k, .cluster_m = 2, .cluster_n = 1};
  }
  return {.tile_m = 128, .tile_n = 128, .tile_k = tile_k, .cluster_m = 1, .cluster_n = 1};
}

}  // namespace

Result<CutlassGemmGeometry> check_cutlass_gemm(const CutlassGemm& r) {
  constexpr std::string_view kName = "CutlassGemm";
  ACCEL_RETURN_IF_ERROR(check_sizes(kName, r.m, r.n, r.k));
  ACCEL_RETURN_IF_ERROR(check_types(kName, r.input, r.output, r.layout_a, r.layout_b));
  ACCEL_RETURN_IF_ERROR(check_present(kName, "a", r.a));
  ACCEL_RETURN_IF_ERROR(check_present(kName, "b", r.b));
  ACCEL_RETURN_IF_ERROR(check_present(kName, "d", r.d));
  CutlassGemmGeometry g;
  ACCEL_ASSIGN_OR_RETURN(g.a, stored(kName, "a", r.m, r.k, r.layout_a, r.lda, 0, r.input));
  ACCEL_ASSIGN_OR_RETURN(g.b, stored(kName, "b", r.k, r.n, r.layout_b, r.ldb, 0, r.input));
  ACCEL_ASSIGN_OR_RETURN(g.d, stored(kName, "d", r.m, r.n, r.layout_c, r.ldd, 0, r.output));
  if (!r.c.is_null()) {
    ACCEL_ASSIGN_OR_RETURN(g.c, stored(kName, "c", r.m, r.n, r.layout_c, r.ldc, 0, r.output));
  }
  ACCEL_RETURN_IF_ERROR(check_fusable(kName, r.epilogue,
                                      {Activation::identity, Activation::relu, Activation::gelu_tanh, Activation::silu},
                                      {BiasVector::none, BiasVector::per_row, BiasVector::per_column}));
  if (!r.epilogue.has_bias() && !r.bias.is_null()) {
    return invalid_argument("CutlassGemm: a bias buffer without an epilogue bias (per_row or per_column)");
  }
  if (r.epilogue.has_bias()) {
    ACCEL_RETURN_IF_ERROR(check_present(kName, "bias", r.bias));
    g.bias_extent = static_cast<std::uint64_t>(r.epilogue.bias == BiasVector::per_row ? r.m : r.n);
  }
  g.epilogue = {.activation = r.epilogue.activation,
                .bias = r.epilogue.bias,
                .row_scale = !r.row_scale.is_null(),
                .col_scale = !r.col_scale.is_null(),
                .residual = !r.residual.is_null(),
                .source = !r.c.is_null()};
  return g;
}

Result<std::vector<CutlassGemmGeometry>> check_cutlass_grouped_gemm(const CutlassGroupedGemm& r) {
  ACCEL_RETURN_IF_ERROR(check_types("CutlassGroupedGemm", r.input, r.output, r.layout_a, r.layout_b));
  if (r.groups.empty()) return invalid_argument("CutlassGroupedGemm: no groups");
  std::vector<CutlassGemmGeometry> groups;
  groups.reserve(r.groups.size());
  for (std::size_t i = 0; i < r.groups.size(); ++i) {
    const GemmGroup& group = r.groups[i];
    const std::string name = fmt::format("CutlassGroupedGemm group {}", i);
    ACCEL_RETURN_IF_ERROR(check_sizes(name, group.m, group.n, group.k));
    ACCEL_RETURN_IF_ERROR(check_present(name, "a", group.a.buffer));
    ACCEL_RETURN_IF_ERROR(check_present(name, "b", group.b.buffer));
    ACCEL_RETURN_IF_ERROR(check_present(name, "d", group.d.buffer));
    CutlassGemmGeometry g;
    ACCEL_ASSIGN_OR_RETURN(g.a, stored(name, "a", group.m, group.k, r.layout_a, group.lda, group.a.offset, r.input));
    ACCEL_ASSIGN_OR_RETURN(g.b, stored(name, "b", group.k, group.n, r.layout_b, group.ldb, group.b.offset, r.input));
    ACCEL_ASSIGN_OR_RETURN(g.d, stored(name, "d", group.m, group.n, r.layout_c, group.ldd, group.d.offset, r.output));
    if (!group.c.buffer.is_null()) {
      ACCEL_ASSIGN_OR_RETURN(g.c, stored(name, "c", group.m, group.n, r.layout_c, group.ldc, group.c.offset, r.output));
    }
    g.epilogue.source = !group.c.buffer.is_null();
    groups.push_back(g);
  }
  return groups;
}

Status check_cutlass_conv(const CutlassConv& r) {
  const ConvShape& s = r.shape;
  if (s.spatial_rank != 2)
    return not_supported(fmt::format("CutlassConv: {}-D convolution (2-D only)", s.spatial_rank));
  if (s.layout != dnn::TensorLayout::channels_last || s.strided) {
    return not_supported("CutlassConv: tensors must be channels-last (NHWC / KRSC) and packed");
  }
  if (s.groups != 1) return not_supported(fmt::format("CutlassConv: groups = {} (1 only)", s.groups));
  if (s.dtype != DType::f16 && s.dtype != DType::bf16) {
    return not_supported(fmt::format("CutlassConv: element type {} (f16 or bf16)", to_string(s.dtype)));
  }
  for (int i = 0; i < 2; ++i) {
    if (s.pre_padding[i] != s.post_padding[i]) {
      return not_supported(fmt::format("CutlassConv: asymmetric padding {} / {} in spatial dimension {}",
                                       s.pre_padding[i], s.post_padding[i], i));
    }
  }
  if (s.c % 8 != 0 || s.k % 8 != 0) {
    return not_supported(fmt::format(
        "CutlassConv: channels c = {} and k = {} must be multiples of 8 (16-byte TMA rows of 16-bit elements)", s.c,
        s.k));
  }
  if (r.pass == ConvPass::dgrad && (s.stride[0] != 1 || s.stride[1] != 1)) {
    return not_supported(
        fmt::format("CutlassConv: dgrad with stride {}x{} (CUTLASS's sm_90 dgrad is unit-stride "
                    "only; ConvBwdData runs it on cuDNN)",
                    s.stride[0], s.stride[1]));
  }
  ACCEL_RETURN_IF_ERROR(check_present("CutlassConv", "x", r.x));
  ACCEL_RETURN_IF_ERROR(check_present("CutlassConv", "w", r.w));
  ACCEL_RETURN_IF_ERROR(check_present("CutlassConv", "y", r.y));
  return Status();
}

std::optional<GemmShape> library_equivalent(DType input, DType output, const CutlassGemmGeometry& g, bool c_is_d) {
  const cutlass::EpilogueSpec& e = g.epilogue;
  if (e.row_scale || e.col_scale || e.residual) return std::nullopt;
  if (e.source && !c_is_d) return std::nullopt;
  const MatrixOrder order = g.d.order;
  return GemmShape{.order = order,
                   .transpose_a = g.a.order == order ? Transpose::none : Transpose::transpose,
                   .transpose_b = g.b.order == order ? Transpose::none : Transpose::transpose,
                   .m = g.d.rows,
                   .n = g.d.cols,
                   .k = g.a.cols,
                   .lda = g.a.ld,
                   .ldb = g.b.ld,
                   .ldc = g.d.ld,
                   .input_type = input,
                   .output_type = output,
                   .epilogue = {.activation = e.activation, .bias = e.bias}};
}

Result<ConvExtents> conv_extents(const ConvShape& s) {
  ACCEL_ASSIGN_OR_RETURN(const auto out, dnn::conv_output_extents(s));
  const auto count = [](std::initializer_list<std::int64_t> dims) {
    std::uint64_t product = 1;
    for (std::int64_t dim : dims) product *= static_cast<std::uint64_t>(dim);
    return product;
  };
  return ConvExtents{.x = count({s.n, s.input[0], s.input[1], s.c}),
                     .w = count({s.k, s.filter[0], s.filter[1], s.c}),
                     .y = count({s.n, out[0], out[1], s.k}),
                     .p = out[0],
                     .q = out[1]};
}

LibraryConv library_conv(const CutlassConv& r) {
  switch (r.pass) {
    case ConvPass::dgrad: return ConvBwdData{.shape = r.shape, .dy = r.y, .w = r.w, .dx = r.x};
    case ConvPass::wgrad: return ConvBwdFilter{.shape = r.shape, .x = r.x, .dy = r.y, .dw = r.w};
    case ConvPass::fprop: break;
  }
  return ConvFwd{.shape = r.shape, .x = r.x, .w = r.w, .y = r.y};
}

cutlass::GemmInstance gemm_instance(const CutlassGemm& r, const CutlassGemmGeometry& geometry, int compute_capability) {
  return {.arch = compute_capability,
          .input = r.input,
          .output = r.output,
          .layout_a = layout_of(r.layout_a),
          .layout_b = layout_of(r.layout_b),
          .layout_c = layout_of(r.layout_c),
          .tile = apply(default_gemm_tile(r.input, r.m, r.n), r.tile),
          .epilogue = geometry.epilogue};
}

cutlass::GroupedGemmInstance grouped_gemm_instance(const CutlassGroupedGemm& r, int compute_capability) {
  const std::int32_t tile_k = r.input == DType::fp8_e4m3 ? 128 : 64;
  const cutlass::TileConfig defaults{.tile_m = 128, .tile_n = 256, .tile_k = tile_k, .cluster_m = 2, .cluster_n = 1};
  return {.arch = compute_capability,
          .input = r.input,
          .output = r.output,
          .layout_a = layout_of(r.layout_a),
          .layout_b = layout_of(r.layout_b),
          .layout_c = layout_of(r.layout_c),
          .tile = apply(defaults, r.tile)};
}

// fprop and dgrad are GEMMs of M = output pixels by N = output channels. A 64-wide N tile for 64 channels
// (half of a 128-wide tile would be padding), and 64-row tiles in 2-CTA clusters where 128-row tiles would fill
// fewer than half of the SMs (measured on the H100, docs/PERFORMANCE.md section 7: 3x3 512->512 @7 gains, 3x3
// 256->256 @14 with 98 tiles of 128 rows loses).
cutlass::ConvInstance conv_instance(const CutlassConv& r, int compute_capability) {
  cutlass::ConvInstance instance{.arch = compute_capability,
                                 .direction = r.pass == ConvPass::fprop   ? cutlass::ConvDirection::fprop
                                              : r.pass == ConvPass::dgrad ? cutlass::ConvDirection::dgrad
                                                                          : cutlass::ConvDirection::wgrad,
                                 .element = r.shape.dtype};
  if (r.pass != ConvPass::wgrad) {
    constexpr std::int64_t kSms = 132;
    const ConvShape& s = r.shape;
    const Result<ConvExtents> extents = conv_extents(s);
    const std::int64_t m =
        r.pass == ConvPass::fprop ? (extents.ok() ? s.n * extents->p * extents->q : 0) : s.n * s.input[0] * s.input[1];
    const std::int64_t n = r.pass == ConvPass::fprop ? s.k : s.c;
    if (n <= 64) instance.tile.tile_n = 64;
    const std::int64_t ctas = (m + 127) / 128 * ((n + instance.tile.tile_n - 1) / instance.tile.tile_n);
    if (ctas < kSms / 2) {
      instance.tile.tile_m = 64;
      instance.tile.cluster_m = 2;
    }
  }
  instance.tile = apply(instance.tile, r.tile);
  return instance;
}

}  // namespace accel::jit
