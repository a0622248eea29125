#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <span>
#include <tuple>
#include <utility>

#include "accel/libs/fft/fft.hpp"

namespace accel {
namespace {

using Sizes = std::array<std::int64_t, 3>;

// The request crosses to an isolated worker byte for byte, so its enums may hold any value.
Status check_enums(const FftShape& s) {
  if (static_cast<std::uint8_t>(s.type) > static_cast<std::uint8_t>(FftType::c2r)) {
    return invalid_argument(fmt::format("FftType {} does not exist", static_cast<int>(s.type)));
  }
  if (static_cast<std::uint8_t>(s.direction) > static_cast<std::uint8_t>(FftDirection::inverse)) {
    return invalid_argument(fmt::format("FftDirection {} does not exist", static_cast<int>(s.direction)));
  }
  if (static_cast<std::uint8_t>(s.normalization) > static_cast<std::uint8_t>(FftNormalization::orthonormal)) {
    return invalid_argument(fmt::format("FftNormalization {} does not exist", static_cast<int>(s.normalization)));
  }
  return Status();
}

std::span<const std::int64_t> first(const Sizes& sizes, int rank) { return std::span(sizes).first(rank); }

// What a product counts, for its overflow error: "<before><side><after>". Validation runs on every request, so the
// name is put together only when the error is.
struct Quantity {
  std::string_view before, side, after;
};

std::string name_of(const Quantity& q) { return fmt::format("{}{}{}", q.before, q.side, q.after); }

Result<std::int64_t> multiply(std::int64_t a, std::int64_t b, const Quantity& what) {
  std::int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) {
    return invalid_argument(fmt::format("{} overflows 64-bit element counts ({} x {})", name_of(what), a, b));
  }
  return product;
}

// One side's layout with its defaults filled in. `sizes` are the side's logical sizes; `complex_half` says the
// side is the complex one of r2c/c2r (its last dimension holds n/2 + 1), for the error that matters most there.
Result<FftLayout> resolve(const FftLayout& given, const Sizes& sizes, int rank, std::string_view side,
                          const FftShape& shape, bool complex_half) {
  for (int d = rank; d < 3; ++d) {
    if (given.embed[d] != 0) {
      return invalid_argument(fmt::format("{}.embed[{}] = {} lies beyond rank {}: entries beyond the rank must be 0",
                                          side, d, given.embed[d], rank));
    }
  }
  FftLayout layout = given;
  const auto embed = first(given.embed, rank);
  const bool none = std::all_of(embed.begin(), embed.end(), [](std::int64_t e) { return e == 0; });
  if (none) {
    std::copy_n(sizes.begin(), rank, layout.embed.begin());
  } else {
    for (int d = 0; d < rank; ++d) {
      if (given.embed[d] == 0) {
        return invalid_argument(
            fmt::format("{}.embed = [{}] gives some dimensions but not all: give every one up to "
                        "the rank, or none for the logical sizes",
                        side, fmt::join(embed, ", ")));
      }
      if (given.embed[d] < sizes[d]) {
        const bool last = d == rank - 1;
        return invalid_argument(fmt::format(
            "{}.embed[{}] = {} is smaller than the {} side's logical size {}{}", side, d, given.embed[d], side,
            sizes[d],
            complex_half && last
                ? fmt::format(" (the complex side of {} holds n/2 + 1 = {} elements in its last dimension for n = {})",
                              to_string(shape.type), sizes[d], shape.n[d])
                : ""));
      }
    }
  }
  if (given.stride < 0) return invalid_argument(fmt::format("{}.stride = {} is negative", side, given.stride));
  if (given.distance < 0) return invalid_argument(fmt::format("{}.distance = {} is negative", side, given.distance));
  if (layout.stride == 0) layout.stride = 1;
  if (layout.distance == 0) {
    const Quantity distance{.side = side, .after = " distance"};
    ACCEL_ASSIGN_OR_RETURN(layout.distance, multiply(layout.stride, layout.embed[0], distance));
    for (int d = 1; d < rank; ++d) {
      ACCEL_ASSIGN_OR_RETURN(layout.distance, multiply(layout.distance, layout.embed[d], distance));
    }
  }
  return layout;
}

// Per-dimension strides of a resolved layout, and how far it reaches (highest index + 1), overflow-checked.
struct Reach {
  Sizes strides{};
  std::uint64_t extent = 0;
};

Result<Reach> reach(const FftLayout& layout, const Sizes& sizes, int rank, std::int64_t batch, std::string_view side) {
  Reach r;
  const Quantity what{.before = "the ", .side = side, .after = " layout's extent"};
  std::int64_t stride = layout.stride;
  for (int d = rank - 1; d >= 0; --d) {
    r.strides[d] = stride;
    if (d > 0) {
      ACCEL_ASSIGN_OR_RETURN(stride, multiply(stride, layout.embed[d], what));
    }
  }
  ACCEL_ASSIGN_OR_RETURN(std::int64_t highest, multiply(batch - 1, layout.distance, what));
  for (int d = 0; d < rank; ++d) {
    ACCEL_ASSIGN_OR_RETURN(const std::int64_t offset, multiply(sizes[d] - 1, r.strides[d], what));
    if (__builtin_add_overflow(highest, offset, &highest) || highest == INT64_MAX) {
      return invalid_argument(fmt::format("{} overflows 64-bit element counts", name_of(what)));
    }
  }
  r.extent = static_cast<std::uint64_t>(highest) + 1;
  return r;
}

// Refuses a layout that may place two elements at one index. Sufficient test (as PyTorch's): ordered by stride,
// each dimension of more than one element steps past everything the smaller strides reach. Nested layouts
// (embed at least the sizes) and interleaved batches (stride >= batch * distance) both pass.
Status check_distinct(const Reach& r, const Sizes& sizes, int rank, const FftLayout& layout, std::int64_t batch,
                      std::string_view side) {
  // (stride, size) of the rank's dimensions and the batch; the unused entries sort last and are not read.
  constexpr std::pair<std::int64_t, std::int64_t> kUnused{INT64_MAX, 1};
  std::array<std::pair<std::int64_t, std::int64_t>, 4> dims{kUnused, kUnused, kUnused, kUnused};
  std::size_t used = 0;
  for (int d = 0; d < rank; ++d)
    if (sizes[d] > 1) dims[used++] = {r.strides[d], sizes[d]};
  if (batch > 1) dims[used++] = {layout.distance, batch};
  std::sort(dims.begin(), dims.end());
  std::int64_t span = 0;  // highest offset the smaller strides reach; bounded by the extent, so no overflow
  for (const auto& [stride, size] : std::span(dims).first(used)) {
    if (stride <= span) {
      return invalid_argument(fmt::format(
          "the {} layout (embed [{}], stride {}, distance {}, batch {}) places two elements at one index: "
          "a dimension of stride {} overlaps the ones inside it, which reach {}",
          side, fmt::join(first(layout.embed, rank), ", "), layout.stride, layout.distance, batch, stride, span));
    }
    span += (size - 1) * stride;
  }
  return Status();
}

// In-place r2c/c2r: the real side that shares the complex side's memory row for row.
Result<FftLayout> padded_real(const FftLayout& complex, int rank, const FftShape& shape) {
  if (complex.stride != 1) {
    return invalid_argument(
        fmt::format("in-place {} needs stride 1 on the complex side (got {}): a real row must lie in the memory of its "
                    "complex row",
                    to_string(shape.type), complex.stride));
  }
  FftLayout real = complex;
  ACCEL_ASSIGN_OR_RETURN(real.embed[rank - 1],
                         multiply(2, complex.embed[rank - 1], {.before = "the padded real rows"}));
  ACCEL_ASSIGN_OR_RETURN(real.distance, multiply(2, complex.distance, {.before = "the padded real distance"}));
  return real;
}

// cuFFT's half-precision transforms take power-of-two sizes only. The CPU device could do any size, but refuses the
// same ones, so that a request that runs there runs on a GPU too.
Status check_half_sizes(const FftShape& shape) {
  for (int d = 0; d < shape.rank; ++d) {
    const std::int64_t n = shape.n[d];
    if ((n & (n - 1)) != 0) {
      return not_supported(fmt::format(
          "f16 FFTs take sizes that are powers of two in every dimension (cuFFT's half-precision transforms take no "
          "others); n[{}] = {} is not one: pad to {} or use f32",
          d, n, std::int64_t{1} << (64 - __builtin_clzll(static_cast<unsigned long long>(n)))));
    }
  }
  return Status();
}

// cuFFT's half-precision r2c and c2r take no stride on the real side (its documented limitation); refused on every
// device, as the sizes are.
Status check_half_real_stride(const FftLayout& real, std::string_view side, const FftShape& shape) {
  if (real.stride == 1) return Status();
  return not_supported(
      fmt::format("f16 {} takes stride 1 on its real side (cuFFT's half-precision real transforms take no other); the "
                  "{} side has stride {}: use f32",
                  to_string(shape.type), side, real.stride));
}

}  // namespace

Result<FftGeometry> plan_fft_geometry(const FftShape& shape, bool in_place) {
  ACCEL_RETURN_IF_ERROR(check_enums(shape));
  const int rank = shape.rank;
  if (rank < 1 || rank > 3) return invalid_argument(fmt::format("FFT rank must be 1, 2 or 3, not {}", rank));
  FftGeometry g;
  g.shape = shape;
  g.in_place = in_place;
  switch (shape.precision) {
    case DType::f32:
      g.real_type = DType::f32;
      g.complex_type = DType::c64;
      break;
    case DType::f64:
      g.real_type = DType::f64;
      g.complex_type = DType::c128;
      break;
    case DType::f16:
      g.real_type = DType::f16;
      g.complex_type = DType::c32;
      break;
    default:
      return invalid_argument(
          fmt::format("FFT precision is the real element type, f32, f64 or f16, not {}", to_string(shape.precision)));
  }
  for (int d = 0; d < 3; ++d) {
    if (d < rank && shape.n[d] < 1) {
      return invalid_argument(fmt::format("FFT size n[{}] = {} must be at least 1", d, shape.n[d]));
    }
    if (d >= rank && shape.n[d] != 0) {
      return invalid_argument(
          fmt::format("FFT size n[{}] = {} lies beyond rank {}: sizes beyond the rank must be 0", d, shape.n[d], rank));
    }
  }
  if (shape.batch < 1) return invalid_argument(fmt::format("FFT batch must be at least 1, got {}", shape.batch));
  if (shape.precision == DType::f16) ACCEL_RETURN_IF_ERROR(check_half_sizes(shape));
  if (shape.type == FftType::r2c && shape.direction != FftDirection::forward) {
    return invalid_argument("r2c is a forward transform: direction must be forward");
  }
  if (shape.type == FftType::c2r && shape.direction != FftDirection::inverse) {
    return invalid_argument("c2r is an inverse transform: direction must be inverse");
  }

  std::int64_t total = 1;
  for (int d = 0; d < rank; ++d) {
    ACCEL_ASSIGN_OR_RETURN(total, multiply(total, shape.n[d], {.before = "the transform size"}));
  }
  g.transform_size = static_cast<std::uint64_t>(total);
  Sizes logical{1, 1, 1}, half{1, 1, 1};
  std::copy_n(shape.n.begin(), rank, logical.begin());
  half = logical;
  half[rank - 1] = logical[rank - 1] / 2 + 1;
  g.input_sizes = shape.type == FftType::c2r ? half : logical;
  g.output_sizes = shape.type == FftType::r2c ? half : logical;
  g.input_type = shape.type == FftType::r2c ? g.real_type : g.complex_type;
  g.output_type = shape.type == FftType::c2r ? g.real_type : g.complex_type;
  const bool input_half = shape.type == FftType::c2r, output_half = shape.type == FftType::r2c;

  FftLayout& in = g.shape.input;
  FftLayout& out = g.shape.output;
  if (!in_place) {
    ACCEL_ASSIGN_OR_RETURN(in, resolve(shape.input, g.input_sizes, rank, "input", shape, input_half));
    ACCEL_ASSIGN_OR_RETURN(out, resolve(shape.output, g.output_sizes, rank, "output", shape, output_half));
  } else if (shape.type == FftType::c2c) {
    const bool input_given = shape.input != FftLayout{}, output_given = shape.output != FftLayout{};
    ACCEL_ASSIGN_OR_RETURN(
        in, resolve(input_given ? shape.input : shape.output, g.input_sizes, rank, "input", shape, false));
    ACCEL_ASSIGN_OR_RETURN(
        out, resolve(output_given ? shape.output : shape.input, g.output_sizes, rank, "output", shape, false));
    if (in != out) {
      return invalid_argument(fmt::format(
          "in-place c2c needs one layout for both sides: input (embed [{}], stride {}, distance {}) and output "
          "(embed [{}], stride {}, distance {}) differ",
          fmt::join(first(in.embed, rank), ", "), in.stride, in.distance, fmt::join(first(out.embed, rank), ", "),
          out.stride, out.distance));
    }
  } else {
    const bool r2c = shape.type == FftType::r2c;
    const FftLayout& complex_given = r2c ? shape.output : shape.input;
    const FftLayout& real_given = r2c ? shape.input : shape.output;
    FftLayout& complex = r2c ? out : in;
    FftLayout& real = r2c ? in : out;
    const std::string_view complex_side = r2c ? "output" : "input", real_side = r2c ? "input" : "output";
    ACCEL_ASSIGN_OR_RETURN(complex, resolve(complex_given, half, rank, complex_side, shape, true));
    ACCEL_ASSIGN_OR_RETURN(real, padded_real(complex, rank, shape));
    if (real_given != FftLayout{}) {
      ACCEL_ASSIGN_OR_RETURN(const FftLayout given, resolve(real_given, logical, rank, real_side, shape, false));
      if (given != real) {
        const std::int64_t n = logical[rank - 1];
        return invalid_argument(fmt::format(
            "in-place {} needs the real rows padded to the complex ones: 2 * (n/2 + 1) = {} real elements for n = {} "
            "({}), so the {} side must be embed [{}], stride 1, distance {}; got embed [{}], stride {}, distance {}",
            to_string(shape.type), 2 * (n / 2 + 1), n, n % 2 == 1 ? "odd: one element of padding" : "even: two",
            real_side, fmt::join(first(real.embed, rank), ", "), real.distance,
            fmt::join(first(given.embed, rank), ", "), given.stride, given.distance));
      }
    }
  }

  if (shape.precision == DType::f16 && shape.type != FftType::c2c) {
    const bool r2c = shape.type == FftType::r2c;
    ACCEL_RETURN_IF_ERROR(check_half_real_stride(r2c ? in : out, r2c ? "input" : "output", shape));
  }

  ACCEL_ASSIGN_OR_RETURN(const Reach in_reach, reach(in, g.input_sizes, rank, shape.batch, "input"));
  ACCEL_ASSIGN_OR_RETURN(const Reach out_reach, reach(out, g.output_sizes, rank, shape.batch, "output"));
  ACCEL_RETURN_IF_ERROR(check_distinct(in_reach, g.input_sizes, rank, in, shape.batch, "input"));
  ACCEL_RETURN_IF_ERROR(check_distinct(out_reach, g.output_sizes, rank, out, shape.batch, "output"));
  for (const auto& [extent, type, side] :
       {std::tuple{in_reach.extent, g.input_type, "input"}, std::tuple{out_reach.extent, g.output_type, "output"}}) {
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(extent, size_of(type), &bytes)) {
      return invalid_argument(fmt::format("the {} layout reaches {} elements of {}, which overflows 64-bit byte counts",
                                          side, extent, to_string(type)));
    }
  }
  g.input_strides = in_reach.strides;
  g.output_strides = out_reach.strides;
  g.input_extent = in_reach.extent;
  g.output_extent = out_reach.extent;
  return g;
}

double FftGeometry::scale() const noexcept {
  const double n = static_cast<double>(transform_size);
  switch (shape.normalization) {
    case FftNormalization::none: return 1.0;
    case FftNormalization::inverse: return inverse() ? 1.0 / n : 1.0;
    case FftNormalization::orthonormal: return 1.0 / std::sqrt(n);
  }
  return 1.0;
}

std::string_view to_string(FftType type) noexcept {
  switch (type) {
    case FftType::c2c: return "c2c";
    case FftType::r2c: return "r2c";
    case FftType::c2r: return "c2r";
  }
  return "unknown";
}

std::string_view to_string(FftDirection direction) noexcept {
  return direction == FftDirection::forward ? "forward" : "inverse";
}

std::string_view to_string(FftNormalization normalization) noexcept {
  switch (normalization) {
    case FftNormalization::none: return "none";
    case FftNormalization::inverse: return "inverse";
    case FftNormalization::orthonormal: return "orthonormal";
  }
  return "unknown";
}

std::string to_string(const FftShape& s) {
  const int rank = std::clamp(s.rank, 1, 3);
  auto layout = [&](const FftLayout& l) {
    return fmt::format("embed [{}] stride {} distance {}", fmt::join(first(l.embed, rank), ", "), l.stride, l.distance);
  };
  return fmt::format("fft {} {} n [{}] batch {} {} normalization {} input ({}) output ({})", to_string(s.type),
                     to_string(s.precision), fmt::join(first(s.n, rank), ", "), s.batch, to_string(s.direction),
                     to_string(s.normalization), layout(s.input), layout(s.output));
}

}  // namespace accel
