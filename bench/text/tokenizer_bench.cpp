// Tokenizer throughput: accel::text::Tokenizer::encode_batch over a JSONL file of texts ({"text": ...} per line),
// on one thread and on N, as bench/text/run_tokenizer_bench runs it beside HuggingFace tokenizers
// (bench/peers/tokenizers_peer.py) on the same texts. Prints one CSV line per thread count:
//   tokenizer,threads,texts,tokens,seconds,texts_per_s,tokens_per_s
// The best of --repeats runs is reported (the first run also warms the per-thread buffers).
//
//   tokenizer_bench TOKENIZER_JSON TEXTS_JSONL [THREADS...]   (default threads: 1 and the hardware's)
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "accel/text/tokenizer.hpp"

namespace {

std::vector<std::string> read_texts(const char* path) {
  std::ifstream in(path);
  std::vector<std::string> texts;
  std::string line;
  while (std::getline(in, line)) {
    const nlohmann::json object = nlohmann::json::parse(line, nullptr, false);
    if (object.is_object() && object.contains("text") && object["text"].is_string())
      texts.push_back(object["text"].get<std::string>());
  }
  return texts;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: tokenizer_bench TOKENIZER_JSON TEXTS_JSONL [THREADS...]\n");
    return 2;
  }
  auto tokenizer = accel::text::Tokenizer::load(argv[1]);
  if (!tokenizer.ok()) {
    fmt::print(stderr, "tokenizer_bench: {}\n", tokenizer.status().to_string());
    return 1;
  }
  const std::vector<std::string> texts = read_texts(argv[2]);
  if (texts.empty()) {
    fmt::print(stderr, "tokenizer_bench: no texts in {}\n", argv[2]);
    return 1;
  }
  std::vector<unsigned> thread_counts;
  for (int i = 3; i < argc; ++i) thread_counts.push_back(static_cast<unsigned>(std::strtoul(argv[i], nullptr, 10)));
  if (thread_counts.empty()) thread_counts = {1, std::max(1u, std::thread::hardware_concurrency())};
  constexpr int kRepeats = 5;
  for (unsigned threads : thread_counts) {
    double best = 1e30;
    std::size_t tokens = 0;
    for (int r = 0; r < kRepeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      auto encodings = tokenizer->encode_batch(texts, {}, threads);
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!encodings.ok()) {
        fmt::print(stderr, "tokenizer_bench: {}\n", encodings.status().to_string());
        return 1;
      }
      tokens = 0;
      for (const auto& e : *encodings) tokens += e.ids.size();
      best = std::min(best, seconds);
    }
    fmt::print("accel,{},{},{},{:.4f},{:.0f},{:.0f}\n", threads, texts.size(), tokens, best,
               static_cast<double>(texts.size()) / best, static_cast<double>(tokens) / best);
  }
  return 0;
}
