// accel from outside its repository: a GEMM, an FFT and a text embedding on the CPU device, each checked against
// what it must give. Usage: accel_consumer MODEL_DIR (a sentence-transformers folder, e.g. all-MiniLM-L6-v2).
#include <accel/accel.hpp>

#include <cmath>
#include <complex>
#include <cstdio>
#include <numbers>
#include <vector>

namespace {

template <class T>
T expect(accel::Result<T> result, const char* what) {
  if (!result) {
    std::fprintf(stderr, "%s failed: %s\n", what, result.status().to_string().c_str());
    std::exit(1);
  }
  return *std::move(result);
}

bool check(bool ok, const char* what) {
  std::printf("%s: %s\n", what, ok ? "ok" : "WRONG");
  return ok;
}

// C (2x2) = A (2x3) * B (3x2), row-major.
bool gemm(const accel::Device& device) {
  const std::vector<float> a = {1, 2, 3, 4, 5, 6};
  const std::vector<float> b = {7, 8, 9, 10, 11, 12};
  std::vector<float> c(4);
  auto buffer_a = expect(device.allocate<float>(a.size()).wait(), "allocate");
  auto buffer_b = expect(device.allocate<float>(b.size()).wait(), "allocate");
  auto buffer_c = expect(device.allocate<float>(c.size()).wait(), "allocate");
  (void)device.upload(std::span<const float>(a), buffer_a);
  (void)device.upload(std::span<const float>(b), buffer_b);
  (void)device.gemm({.shape = {.m = 2, .n = 2, .k = 3}, .a = buffer_a, .b = buffer_b, .c = buffer_c});
  expect(device.download(buffer_c, std::span<float>(c)).wait(), "gemm");
  return check(c == std::vector<float>{58, 64, 139, 154}, "gemm 2x3 * 3x2");
}

// The forward DFT of e^(2 pi i 3 t / 8) is 8 at frequency 3 and 0 elsewhere.
bool fft(const accel::Device& device) {
  constexpr int n = 8;
  std::vector<std::complex<float>> signal(n), spectrum(n);
  for (int t = 0; t < n; ++t) signal[t] = std::polar(1.0f, 2.0f * std::numbers::pi_v<float> * 3.0f * t / n);
  auto input = expect(device.allocate<std::complex<float>>(n).wait(), "allocate");
  auto output = expect(device.allocate<std::complex<float>>(n).wait(), "allocate");
  (void)device.upload(std::span<const std::complex<float>>(signal), input);
  (void)device.ask(accel::Fft{.shape = {.rank = 1, .n = {n}}, .input = input, .output = output});
  expect(device.download(output, std::span<std::complex<float>>(spectrum)).wait(), "fft");
  bool ok = true;
  for (int k = 0; k < n; ++k) ok = ok && std::abs(spectrum[k] - std::complex<float>(k == 3 ? n : 0, 0)) < 1e-4f;
  return check(ok, "fft of a pure tone");
}

// Two texts embedded: unit rows, and the same text twice gives the same row.
bool embed(const accel::Device& device, const char* model_folder) {
  auto model = expect(accel::embed::Model::load(device, {.folder = model_folder}), "load the model");
  auto rows =
      expect(model->embed({"a cat sat on the mat", "a cat sat on the mat", "stock markets fell"}).wait(), "embed");
  auto dot = [&](std::size_t x, std::size_t y) {
    double sum = 0;
    for (std::uint32_t d = 0; d < rows.dimensions; ++d) sum += double(rows.row(x)[d]) * rows.row(y)[d];
    return sum;
  };
  std::printf("embedding: %zu rows of %u; cosine(same) %.6f, cosine(different) %.6f\n", rows.count(), rows.dimensions,
              dot(0, 1), dot(0, 2));
  return check(rows.count() == 3 && std::abs(dot(0, 0) - 1) < 1e-4 && std::abs(dot(0, 1) - 1) < 1e-5 && dot(0, 2) < 0.9,
               "embedding");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL_DIR\n", argv[0]);
    return 2;
  }
  const accel::Version version = accel::library_version();
  std::printf("libaccel %d.%d.%d (headers %s)\n", version.major, version.minor, version.patch, ACCEL_VERSION_STRING);
  accel::System system;
  const accel::Device device = expect(accel::Device::open(system, {.kind = accel::DeviceKind::cpu}), "open the CPU");
  const bool ok = gemm(device) & fft(device) & embed(device, argv[1]);
  return ok ? 0 : 1;
}
