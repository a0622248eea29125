#include "cli/embed_demo.hpp"

#include <fmt/format.h>

#include <chrono>

#include "accel/embed/model.hpp"
#include "cli/device_choice.hpp"

namespace accel::cli {

namespace {
const std::vector<std::string> kSentences = {
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The new movie is awesome.",
    "The film everyone talks about is great.",
    "A cat plays with a ball of yarn.",
    "A kitten is chasing a piece of string.",
    "GPUs multiply matrices very quickly.",
    "Graphics processors are fast at linear algebra.",
};

double dot(std::span<const float> a, std::span<const float> b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += static_cast<double>(a[i]) * b[i];
  return sum;
}
}  // namespace

int run_embed_demo(const EmbedDemoOptions& options) {
  const std::filesystem::path folder =
      options.model.empty() ? embed::default_model_folder() : std::filesystem::path(options.model);
  System system;
  const auto start = std::chrono::steady_clock::now();
  auto [model, device_failed] = open_model(system, options.device, {.folder = folder});
  if (device_failed) {
    fmt::print(stderr, "accel demo: {}\n", model.status().to_string());
    return 1;
  }
  if (!model.ok()) {
    fmt::print(stderr, "accel demo: the model at {} did not load: {}\n", folder.string(), model.status().to_string());
    return 3;
  }
  const auto loaded = std::chrono::steady_clock::now();
  Result<embed::Embeddings> embeddings = (*model)->embed(kSentences).wait();
  const auto done = std::chrono::steady_clock::now();
  if (!embeddings.ok()) {
    fmt::print(stderr, "accel demo: {}\n", embeddings.status().to_string());
    return 1;
  }
  const embed::ModelInfo& info = (*model)->info();
  fmt::print("{} on {} ({}, {} dims): device and model ready in {:.0f} ms, {} sentences embedded in {:.1f} ms\n\n",
             info.name, info.device, to_string(info.compute), info.dimensions,
             std::chrono::duration<double, std::milli>(loaded - start).count(), kSentences.size(),
             std::chrono::duration<double, std::milli>(done - loaded).count());
  fmt::print("cosine similarity of each sentence to its closest other:\n");
  for (std::size_t i = 0; i < kSentences.size(); ++i) {
    std::size_t best = i == 0 ? 1 : 0;
    for (std::size_t j = 0; j < kSentences.size(); ++j)
      if (j != i && dot(embeddings->row(i), embeddings->row(j)) > dot(embeddings->row(i), embeddings->row(best)))
        best = j;
    fmt::print("  {:.3f}  {:<42} ~ {}\n", dot(embeddings->row(i), embeddings->row(best)), kSentences[i],
               kSentences[best]);
  }
  return 0;
}

}  // namespace accel::cli
