// Where the CPU device's time goes inside one run of the embedding model's graph: the compiled plan run step by step
// (graph::cpu::run_steps, as the CPU device runs it) on a packed batch of real-looking lengths, each step timed, the
// times summed by op kind (and, for matmuls, by shape). oneDNN's own profile (bench/embed/cpu_profile.py) sees only
// the matmuls; this sees every step.
//   cpu_steps_bench [--model DIR] [--tokens 16384] [--mean-length 81] [--repeats 3]
// Prints a table, then one JSON line per op kind.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "accel/embed/model.hpp"
#include "common/exit_now.hpp"
#include "embed/model_graph.hpp"
#include "graph/cpu/cpu_executables.hpp"
#include "graph/executable_plan.hpp"

namespace {

using namespace accel;

template <class T>
T check(Result<T> result, std::string_view what) {
  if (!result.ok()) {
    fmt::print(stderr, "cpu_steps_bench: {}: {}\n", what, result.status().to_string());
    accel::bench::exit_now(1);
  }
  return std::move(*result);
}

// Sequence lengths drawn around `mean` (at least 3, at most `longest`) until `tokens` are used.
std::vector<std::int32_t> packed_offsets(std::int64_t tokens, double mean, std::int64_t longest) {
  std::mt19937_64 rng(7);
  std::exponential_distribution<double> length(1.0 / mean);
  std::vector<std::int32_t> offsets{0};
  while (offsets.back() < tokens) {
    const auto next = std::clamp<std::int64_t>(static_cast<std::int64_t>(length(rng)), 3, longest);
    offsets.push_back(static_cast<std::int32_t>(std::min<std::int64_t>(offsets.back() + next, tokens)));
  }
  return offsets;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the CPU device's embedding run, step by step"};
  std::string model_dir;
  std::int64_t tokens = 16384;
  double mean_length = 81;
  int repeats = 3;
  app.add_option("--model", model_dir, "the model folder (default: all-MiniLM-L6-v2)");
  app.add_option("--tokens", tokens);
  app.add_option("--mean-length", mean_length, "mean tokens per sequence");
  app.add_option("--repeats", repeats);
  CLI11_PARSE(app, argc, argv);

  const auto folder = check(
      embed::ModelFolder::read(model_dir.empty() ? embed::default_model_folder() : std::filesystem::path(model_dir)),
      "reading the model folder");
  const auto weights = check(embed::ModelWeights::open(folder), "checking the weights");
  const auto graph = check(embed::model_graph(folder, weights, {.batch_tokens = tokens}), "building the graph");
  const std::vector<std::uint8_t> weight_bytes = check(embed::model_weight_bytes(*graph, weights), "the weights");
  const std::vector<std::int32_t> offsets =
      packed_offsets(tokens, mean_length, static_cast<std::int64_t>(folder.max_sequence_length()));
  const std::int64_t sequences = static_cast<std::int64_t>(offsets.size()) - 1;
  const graph::SymbolValues extent{{"tokens", tokens}, {"sequences", sequences}};
  const graph::ExecutablePlan plan = check(graph::ExecutablePlan::make(graph, extent), "planning");

  std::vector<std::byte> arena(plan.arena_bytes());
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::int32_t> id(1000, 20000);
  for (const std::uint32_t input : graph->inputs()) {
    const graph::TensorInfo& info = graph->tensors()[input];
    // The weights are inputs too, laid out in weight_bytes: only the arena's inputs are the batch's.
    if (plan.slot(input).storage != graph::Storage::arena) continue;
    auto* at = reinterpret_cast<std::int32_t*>(arena.data() + plan.slot(input).offset);
    if (info.name == "offsets") {
      std::copy(offsets.begin(), offsets.end(), at);
    } else if (info.name == "ids") {
      for (std::int64_t i = 0; i < tokens; ++i) at[i] = id(rng);
    } else {
      std::fill_n(at, tokens, 0);  // token types
    }
  }

  graph::cpu::MatmulPacks packs;
  std::vector<graph::cpu::StepTime> times;
  const auto run = [&](std::vector<graph::cpu::StepTime>* into) {
    const auto* weights = reinterpret_cast<const std::byte*>(weight_bytes.data());
    const Status ran = graph::cpu::run_steps(
        plan, extent, arena.data(), {.data = weights, .identity = {.base = weights, .version = 1}}, packs, into);
    if (!ran.ok()) {
      fmt::print(stderr, "cpu_steps_bench: running: {}\n", ran.to_string());
      accel::bench::exit_now(1);
    }
  };
  run(nullptr);  // packs the weights, warms the caches
  for (int r = 0; r < repeats; ++r) run(&times);

  std::map<std::string, std::pair<double, int>> by_kind;
  double total = 0;
  for (const graph::cpu::StepTime& step : times) {
    const graph::Node& node = graph->nodes()[step.node];
    std::string key(to_string(node.kind));
    if (node.kind == graph::OpKind::matmul) {
      const auto& w = graph->tensors()[node.inputs[1]].shape;
      key += fmt::format(" {}x{}", w[0].offset, w[1].offset);
    }
    by_kind[key].first += step.microseconds / repeats;
    by_kind[key].second += 1;
    total += step.microseconds / repeats;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> rows(by_kind.begin(), by_kind.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  fmt::print("{} tokens in {} sequences (mean {:.0f}): {:.1f} ms a run, {:.0f} tokens/s\n", tokens, sequences,
             static_cast<double>(tokens) / static_cast<double>(sequences), total / 1e3, tokens / (total / 1e6));
  for (const auto& [kind, time] : rows)
    fmt::print("{:>10.1f} ms {:5.1f} %  {:3d} steps  {}\n", time.first / 1e3, 100 * time.first / total,
               time.second / repeats, kind);
  for (const auto& [kind, time] : rows)
    fmt::print("{}\n", nlohmann::json{{"figure", "cpu_steps"},
                                      {"op", kind},
                                      {"ms_per_run", time.first / 1e3},
                                      {"share", time.first / total},
                                      {"tokens", tokens},
                                      {"sequences", sequences}}
                           .dump());
  return 0;
}
