// all-MiniLM-L6-v2 through accel::embed::Model, the figures of docs/PERFORMANCE.md's embedding section:
//   throughput with tokens already made, end to end (text in), one short query at a time, and the compiles,
//   padding and device memory over the trace. --cold-start measures the first embedding of a new process.
// The trace (passages whose lengths spread like documents, and short queries) is written to --trace so that the
// PyTorch peer (bench/peers/embed_peer.py) runs the very same texts.
//
//   embed_bench --device cuda --passages 8192 --trace out/trace.jsonl > out/embed_accel.jsonl
//   embed_bench --device cuda --cold-start          (run twice: with an empty and with a warm ACCEL_CACHE_DIR)
//   embed_bench --device cuda --model CROSS_ENCODER --rerank --trace out/trace.jsonl --scores out/scores.f32
//     a cross-encoder instead: query q of the trace with passages [P q, P (q + 1)) for P = --pairs-per-query
//     (bench/peers/rerank_peer.py makes the same pairs), and one short pair (query q, query q + 1) at a time.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <thread>

#include "accel/device/device.hpp"
#include "accel/device/pool.hpp"
#include "accel/embed/model.hpp"
#include "common/exit_now.hpp"
#include "common/launch_clock.hpp"

#if ACCEL_BENCH_CUDA_PROFILER
#include <cuda_profiler_api.h>
#endif

namespace {

// What --profile puts inside the CUDA profiler's window, for `ncu --profile-from-start off`
// (bench/embed/gpu_breakdown).
enum class ProfiledWork { none, ready_pass, query };

class ProfilerWindow {
 public:
  explicit ProfilerWindow(bool open) : open_(open) {
#if ACCEL_BENCH_CUDA_PROFILER
    if (open_) cudaProfilerStart();
#endif
  }
  ~ProfilerWindow() {
#if ACCEL_BENCH_CUDA_PROFILER
    if (open_) cudaProfilerStop();
#endif
  }
  ProfilerWindow(const ProfilerWindow&) = delete;
  ProfilerWindow& operator=(const ProfilerWindow&) = delete;

 private:
  bool open_;
};

using Clock = std::chrono::steady_clock;
using accel::embed::Embeddings;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Whole words of the vocabulary (no "##" pieces, letters only): a text of k of them is about k tokens.
std::vector<std::string> vocabulary_words(const std::filesystem::path& folder) {
  std::ifstream in(folder / "vocab.txt");
  std::vector<std::string> words;
  for (std::string line; std::getline(in, line);)
    if (line.size() >= 3 && std::all_of(line.begin(), line.end(), [](char c) { return c >= 'a' && c <= 'z'; }))
      words.push_back(line);
  return words;
}

std::string text_of(const std::vector<std::string>& words, int count, std::mt19937& rng) {
  std::uniform_int_distribution<std::size_t> pick(0, words.size() - 1);
  std::string text;
  for (int i = 0; i < count; ++i) text += (i ? " " : "") + words[pick(rng)];
  return text + ".";
}

struct Trace {
  std::vector<std::string> passages, queries;
};

// Passage lengths log-normal around 60 words with a long tail past the 256-token cap; queries 3 to 12 words.
Trace make_trace(const std::filesystem::path& folder, int passages, int queries) {
  const std::vector<std::string> words = vocabulary_words(folder);
  std::mt19937 rng(20261123);
  std::lognormal_distribution<double> length(std::log(60.0), 0.8);
  std::uniform_int_distribution<int> query_length(3, 12);
  Trace trace;
  for (int i = 0; i < passages; ++i)
    trace.passages.push_back(text_of(words, std::clamp(static_cast<int>(length(rng)), 3, 400), rng));
  for (int i = 0; i < queries; ++i) trace.queries.push_back(text_of(words, query_length(rng), rng));
  return trace;
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  return values[static_cast<std::size_t>(p * static_cast<double>(values.size() - 1))];
}

template <class T>
T check(accel::Result<T> result, std::string_view what) {
  if (!result.ok()) {
    fmt::print(stderr, "embed_bench: {}: {}\n", what, result.status().to_string());
    accel::bench::exit_now(1);
  }
  return std::move(*result);
}

// The reranking figures: pairs of the trace through Model::tokenize_pairs/embed_tokens (tokens ready) and
// Model::rerank (text in), then one short pair at a time.
template <class Emit>
void rerank_figures(accel::embed::Model& model, const Trace& trace, int pairs_per_query, int repeats, int single,
                    const std::string& scores_path, const Emit& emit) {
  const std::size_t per_query = static_cast<std::size_t>(pairs_per_query);
  const std::size_t queries = std::min(trace.queries.size(), trace.passages.size() / per_query);
  const auto passages_of = [&](std::size_t q) {
    return std::vector<std::string>(trace.passages.begin() + static_cast<std::ptrdiff_t>(q * per_query),
                                    trace.passages.begin() + static_cast<std::ptrdiff_t>((q + 1) * per_query));
  };
  accel::embed::TokenBatch tokens;
  for (std::size_t q = 0; q < queries; ++q) {
    const auto batch = check(model.tokenize_pairs(trace.queries[q], passages_of(q)), "tokenizing pairs");
    for (std::size_t s = 0; s < batch.sequences(); ++s)
      tokens.append(std::span(batch.ids).subspan(batch.offsets[s], batch.length(s)),
                    std::span(batch.type_ids).subspan(batch.offsets[s], batch.length(s)));
  }
  for (int pass = 0; pass < 3; ++pass) check(model.embed_tokens(tokens).wait(), "a warm-up pass");
  std::vector<double> ready, end_to_end;
  std::vector<float> scores;
  for (int r = 0; r < repeats; ++r) {
    auto start = Clock::now();
    check(model.embed_tokens(tokens).wait(), "scoring tokens");
    ready.push_back(seconds_since(start));
    start = Clock::now();
    std::vector<accel::Future<Embeddings>> calls;
    for (std::size_t q = 0; q < queries; ++q) calls.push_back(model.rerank(trace.queries[q], passages_of(q)));
    scores.clear();
    for (auto& call : calls) {
      const Embeddings e = check(call.wait(), "reranking");
      scores.insert(scores.end(), e.values.begin(), e.values.end());
    }
    end_to_end.push_back(seconds_since(start));
  }
  const double pairs = static_cast<double>(queries * per_query), token_count = static_cast<double>(tokens.ids.size());
  emit({{"figure", "rerank_tokens_ready"},
        {"pairs", pairs},
        {"tokens", tokens.ids.size()},
        {"tokens_per_s", token_count / percentile(ready, 0.5)},
        {"pairs_per_s", pairs / percentile(ready, 0.5)}});
  emit({{"figure", "rerank_end_to_end"},
        {"pairs", pairs},
        {"pairs_per_s", pairs / percentile(end_to_end, 0.5)},
        {"tokens_per_s", token_count / percentile(end_to_end, 0.5)}});
  std::vector<double> latency;
  for (int i = 0; i < single + 50; ++i) {
    const std::size_t q = static_cast<std::size_t>(i) % (trace.queries.size() - 1);
    const auto start = Clock::now();
    check(model.rerank(trace.queries[q], {trace.queries[q + 1]}).wait(), "one pair");
    if (i >= 50) latency.push_back(seconds_since(start) * 1e6);
  }
  emit({{"figure", "rerank_single_pair"},
        {"pairs", single},
        {"p50_us", percentile(latency, 0.5)},
        {"p99_us", percentile(latency, 0.99)}});
  if (!scores_path.empty()) {
    std::ofstream out(scores_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(scores.data()),
              static_cast<std::streamsize>(scores.size() * sizeof(float)));
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto process_start = Clock::now();
  const auto main_wall = std::chrono::system_clock::now();
  CLI::App app{"all-MiniLM-L6-v2 through accel: throughput, end to end, single-query latency, cold start"};
  std::string device_name = "auto", model_dir, trace_path, embeddings_path;
  int passages = 8192, queries = 1000, repeats = 3;
  std::uint32_t batch_tokens = 0;  // the model's default: embed::default_batch_tokens
  unsigned tokenizer_threads = 0;  // the hardware's
  bool cold_start = false, rerank = false;
  int pairs_per_query = 64;
  std::string scores_path;
  app.add_option("--device", device_name, std::string(accel::kDeviceChoices));
  app.add_option("--model", model_dir, "the model folder (default: all-MiniLM-L6-v2)");
  app.add_option("--passages", passages);
  app.add_option("--queries", queries);
  app.add_option("--repeats", repeats);
  app.add_option("--batch-tokens", batch_tokens, "most tokens a run holds (default: embed::default_batch_tokens)");
  app.add_option("--tokenizer-threads", tokenizer_threads, "host threads that tokenise a call's texts (default: all)");
  std::string dtype = "auto";
  app.add_option("--dtype", dtype, "what the model computes in: auto (the device's default), f32, f16 or bf16")
      ->check(CLI::IsMember({"auto", "f32", "f16", "bf16"}));
  app.add_option("--trace", trace_path, "write the trace here (JSONL) for the PyTorch peer");
  app.add_option("--embeddings", embeddings_path,
                 "write the trace's embeddings here (raw little-endian f32, passages then queries, in trace order; the "
                 "passages in one call, each query alone) "
                 "for the peer's accuracy check");
  app.add_flag("--cold-start", cold_start, "only the first embedding of this process");
  ProfiledWork profiled = ProfiledWork::none;
  app.add_option("--profile", profiled,
                 "open the CUDA profiler's window around the first timed tokens-ready pass or the last query")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, ProfiledWork>{{"ready", ProfiledWork::ready_pass}, {"query", ProfiledWork::query}}));
  app.add_flag("--rerank", rerank, "the model is a cross-encoder: rerank pairs of the trace");
  app.add_option("--pairs-per-query", pairs_per_query, "--rerank: passages scored with each query");
  app.add_option("--scores", scores_path, "--rerank: write the pairs' scores here (raw little-endian f32)");
  CLI11_PARSE(app, argc, argv);
  if (rerank && queries < 2) {
    // The pairs are each query with its passages, and one pair at a time is (query q, query q + 1).
    fmt::print(stderr,
               "embed_bench: --rerank makes its pairs from the trace's queries: --queries must be at least 2, "
               "got {}\n",
               queries);
    return 2;
  }
  const std::filesystem::path folder =
      model_dir.empty() ? accel::embed::default_model_folder() : std::filesystem::path(model_dir);

  accel::System system;
  const accel::DeviceOptions options = check(accel::parse_device_choice(device_name), "--device");
  // As the CLI does: the device opens while the model's files are read and converted.
  const Clock::time_point open_start = Clock::now();
  auto model = check(accel::embed::Model::open({.kind = options.kind,
                                                .isolation = options.isolation,
                                                .open = [&] { return accel::Device::open(system, options); }},
                                               {.folder = folder,
                                                .compute = dtype == "f32"    ? std::optional(accel::DType::f32)
                                                           : dtype == "f16"  ? std::optional(accel::DType::f16)
                                                           : dtype == "bf16" ? std::optional(accel::DType::bf16)
                                                                             : std::nullopt,
                                                .batch_tokens = batch_tokens,
                                                .tokenizer_threads = tokenizer_threads}),
                     "opening the device and loading the model");
  const accel::Device& device = model->device();
  if (cold_start) {
    check(model->embed({"what is the capital of france?"}).wait(), "the first embedding");
    const accel::embed::ModelStats stats = model->stats();
    nlohmann::json row{
        {"figure", "cold_start"},
        {"device", model->info().device},
        {"first_embedding_ms", seconds_since(process_start) * 1e3},
        {"main_to_open_ms", std::chrono::duration<double, std::milli>(open_start - process_start).count()},
        {"device_open_ms", model->info().load.device_open_ms},
        {"read_ms", model->info().load.read_ms},
        {"convert_ms", model->info().load.convert_ms},
        {"upload_ms", model->info().load.upload_ms},
        {"warm_ms", model->info().load.warm_ms},
        {"compiles", stats.caches.empty() ? 0 : stats.caches[0].builds},
        {"disk_loads", stats.caches.empty() ? 0 : stats.caches[0].disk_loads}};
    if (const std::optional<double> before_main = accel::bench::ms_before_main(main_wall))
      row["before_main_ms"] = *before_main;
    fmt::print("{}\n", row.dump());
    return 0;
  }

  const Trace trace = make_trace(folder, passages, queries);
  if (!trace_path.empty()) {
    std::ofstream out(trace_path);
    for (const std::string& p : trace.passages) out << nlohmann::json{{"kind", "passage"}, {"text", p}}.dump() << "\n";
    for (const std::string& q : trace.queries) out << nlohmann::json{{"kind", "query"}, {"text", q}}.dump() << "\n";
  }
  const auto emit = [&](nlohmann::json row) {
    row["device"] = model->info().device;
    row["compute"] = std::string(accel::to_string(model->info().compute));
    fmt::print("{}\n", row.dump());
    std::fflush(stdout);
  };
  if (rerank) {
    rerank_figures(*model, trace, pairs_per_query, repeats, queries, scores_path, emit);
    return 0;
  }
  // The host's part of text in, alone: the passages tokenised, 3 times after a first.
  accel::embed::TokenBatch tokens = check(model->tokenize(trace.passages), "tokenizing");
  std::vector<double> tokenizing;
  for (int r = 0; r < 3; ++r) {
    const auto start = Clock::now();
    tokens = check(model->tokenize(trace.passages), "tokenizing");
    tokenizing.push_back(seconds_since(start));
  }
  emit({{"figure", "tokenize"},
        {"passages", passages},
        {"tokenizer_threads", tokenizer_threads},
        {"hardware_threads", std::thread::hardware_concurrency()},
        {"tokens_per_s", static_cast<double>(tokens.ids.size()) / percentile(tokenizing, 0.5)}});

  // Steady state, as the peers are timed after their warm-up: the compiled graphs move their matmuls to cuBLASLt
  // once its start-up is over, which the third graph run begins and which takes ~190 ms on the H100.
  for (int pass = 0; pass < 3; ++pass) check(model->embed_tokens(tokens).wait(), "a warm-up pass");
  std::vector<double> ready, end_to_end;
  for (int r = 0; r < repeats; ++r) {
    auto start = Clock::now();
    {
      const ProfilerWindow window(r == 0 && profiled == ProfiledWork::ready_pass);
      check(model->embed_tokens(tokens).wait(), "embedding tokens");
    }
    ready.push_back(seconds_since(start));
    start = Clock::now();
    check(model->embed(trace.passages).wait(), "embedding texts");
    end_to_end.push_back(seconds_since(start));
  }
  const double token_count = static_cast<double>(tokens.ids.size());
  emit({{"figure", "throughput_tokens_ready"},
        {"passages", passages},
        {"tokens", tokens.ids.size()},
        {"tokens_per_s", token_count / percentile(ready, 0.5)},
        {"sequences_per_s", passages / percentile(ready, 0.5)}});
  emit({{"figure", "end_to_end"},
        {"passages", passages},
        {"sentences_per_s", passages / percentile(end_to_end, 0.5)},
        {"tokens_per_s", token_count / percentile(end_to_end, 0.5)}});

  std::vector<double> latency;
  // --queries 0 leaves the query figure out: the passes are then the last work of the process (gpu_breakdown).
  for (int i = 0; queries > 0 && i < queries + 50; ++i) {
    const auto start = Clock::now();
    const ProfilerWindow window(i == queries + 49 && profiled == ProfiledWork::query);
    check(model->embed({trace.queries[static_cast<std::size_t>(i) % trace.queries.size()]}).wait(), "a query");
    if (i >= 50) latency.push_back(seconds_since(start) * 1e6);
  }
  if (queries > 0)
    emit({{"figure", "single_query"},
          {"queries", queries},
          {"p50_us", percentile(latency, 0.5)},
          {"p99_us", percentile(latency, 0.99)}});

  if (!embeddings_path.empty()) {
    // Passages in one call, then each query alone as the single_query figure sends it, so that the check covers a
    // query's own path (a bucket of its few rows) as well as the batches'.
    Embeddings embeddings = check(model->embed(trace.passages).wait(), "embedding the trace's passages");
    for (const std::string& query : trace.queries) {
      const Embeddings one = check(model->embed({query}).wait(), "embedding a query");
      embeddings.values.insert(embeddings.values.end(), one.values.begin(), one.values.end());
    }
    std::ofstream out(embeddings_path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(embeddings.values.data()),
              static_cast<std::streamsize>(embeddings.values.size() * sizeof(float)));
    if (!out) {
      fmt::print(stderr, "embed_bench: cannot write {}\n", embeddings_path);
      return 1;
    }
  }

  const accel::embed::ModelStats stats = model->stats();
  const accel::DeviceInfo info = check(device.info().wait(), "querying the device");
  nlohmann::json caches = nlohmann::json::array();
  for (const accel::CacheStats& c : stats.caches)
    caches.push_back({{"name", c.name},
                      {"entries", c.entries},
                      {"builds", c.builds},
                      {"hits", c.hits},
                      {"disk_loads", c.disk_loads},
                      {"build_ms", c.build_micros / 1e3},
                      {"bytes", c.bytes}});
  emit({{"figure", "compiles_and_padding"},
        {"runs", stats.runs},
        {"tokens", stats.tokens},
        {"padded_tokens", stats.padded_tokens},
        {"padding_fraction",
         static_cast<double>(stats.padded_tokens) / static_cast<double>(std::max<std::uint64_t>(stats.tokens, 1))},
        {"device_bytes_in_use", info.memory.in_use_bytes},
        {"device_peak_bytes", info.memory.peak_bytes},
        {"caches", caches}});
  return 0;
}
