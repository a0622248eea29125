// Compiled graphs on the real workload (the 6-layer all-MiniLM-L6-v2 encoder as one graph), the figures of
// docs/PERFORMANCE.md's compiled-graph section:
//   template    building and validating the symbolic graph once vs specialising it for one more bucket
//   compile     the first run of a bucket (cold: specialise, allocate, plan, capture), a new bucket, a memory hit;
//               --phase disk: the first run in a new process whose cache directory a previous run filled
//   modes       replay of the bucket's CUDA graph vs op-by-op launches at the actual extent, per size and fill,
//               one at a time (latency) and pipelined (host time per forward)
//   trace       compiles and padding over a mixed-length trace of packed batches
//   host        the host's work of one request before its executable runs, piece by piece, on the host alone:
//               validation (which finds the executable's key its binding's first request made), operands, and
//               what that spares each later request: making the key and hashing it
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <functional>
#include <nlohmann/json.hpp>
#include <random>

#include "accel/device/device.hpp"
#include "accel/embed/model.hpp"
#include "accel/graph/execute.hpp"
#include "common/exit_now.hpp"
#include "embed/model_graph.hpp"
#include "graph/executable_plan.hpp"
#include "graph/execute_operation.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace accel;

double micros_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

template <class T>
T check(Result<T> result, std::string_view what) {
  if (!result.ok()) {
    fmt::print(stderr, "graph_execute_bench: {}: {}\n", what, result.status().to_string());
    accel::bench::exit_now(1);
  }
  return std::move(*result);
}

void check(Status status, std::string_view what) {
  if (!status.ok()) {
    fmt::print(stderr, "graph_execute_bench: {}: {}\n", what, status.to_string());
    accel::bench::exit_now(1);
  }
}

// Buffers of one packed batch of `sequences` equal-length sequences totalling `tokens`.
struct Batch {
  std::int64_t tokens = 0, sequences = 0;
  Buffer<std::int32_t> ids, offsets;
  Buffer<float> out;
};

Batch make_batch(const Device& device, std::int64_t tokens, std::int64_t sequences, std::uint32_t width) {
  Batch b{.tokens = tokens, .sequences = sequences};
  std::vector<std::int32_t> ids(static_cast<std::size_t>(tokens)), offsets;
  std::mt19937 rng(static_cast<unsigned>(tokens));
  std::uniform_int_distribution<std::int32_t> id(1000, 29000);
  for (auto& i : ids) i = id(rng);
  for (std::int64_t s = 0; s <= sequences; ++s) offsets.push_back(static_cast<std::int32_t>(tokens * s / sequences));
  b.ids = check(device.allocate<std::int32_t>(ids.size()).wait(), "allocating");
  b.offsets = check(device.allocate<std::int32_t>(offsets.size()).wait(), "allocating");
  b.out = check(device.allocate<float>(static_cast<std::uint64_t>(sequences) * width).wait(), "allocating");
  check(device.upload(std::span<const std::int32_t>(ids), b.ids).wait().status(), "uploading");
  check(device.upload(std::span<const std::int32_t>(offsets), b.offsets).wait().status(), "uploading");
  return b;
}

graph::Execute request(const std::shared_ptr<const graph::Graph>& g, const Buffer<std::uint8_t>& weights,
                       const Batch& b, graph::ExecuteMode mode) {
  return {.graph = g,
          .symbols = {{"tokens", b.tokens}, {"sequences", b.sequences}},
          .weights = weights,
          .inputs = {{"ids", b.ids}, {"offsets", b.offsets}},
          .outputs = {{"output", b.out}},
          .mode = mode};
}

// Median µs of `work` over `repeats` calls.
template <class Work>
double median_us(int repeats, Work&& work) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t = Clock::now();
    work();
    times.push_back(micros_since(t));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void host_figure(const std::shared_ptr<const graph::Graph>& g, const Buffer<std::uint8_t>& weights, const Batch& b,
                 int repeats, const std::function<void(nlohmann::json)>& emit) {
  const graph::Execute one = request(g, weights, b, graph::ExecuteMode::replay);
  const auto checked = check(Operation<graph::Execute>::validate(one), "validating");
  const std::vector<std::byte> key = graph::executable_key(*g, checked.compiled);
  const std::string_view key_view{reinterpret_cast<const char*>(key.data()), key.size()};
  emit({{"figure", "host"},
        {"tokens", b.tokens},
        {"key_bytes", key.size()},
        {"validate_us",
         median_us(repeats, [&] { (void)check(Operation<graph::Execute>::validate(one), "validating"); })},
        {"operands_us", median_us(repeats,
                                  [&] {
                                    Operands list;
                                    Operation<graph::Execute>::operands(one, checked, list);
                                  })},
        {"key_us", median_us(repeats, [&] { (void)graph::executable_key(*g, checked.compiled); })},
        {"key_hash_us", median_us(repeats, [&] { (void)cache::key_hash(key_view); })},
        {"request_copy_us", median_us(repeats, [&] { (void)graph::Execute(one); })}});
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"compiled graphs on the all-MiniLM-L6-v2 encoder: template, compile, replay vs direct, trace"};
  std::string device_name = "auto", phase = "all";
  int repeats = 50;
  app.add_option("--device", device_name, "auto, cpu or cuda");
  app.add_option("--phase", phase, "all, disk or host");
  app.add_option("--repeats", repeats);
  CLI11_PARSE(app, argc, argv);

  System system;
  Device device = check(device_name == "auto"
                            ? Device::open_default(system)
                            : Device::open(system, {.kind = device_name == "cpu" ? DeviceKind::cpu : DeviceKind::cuda}),
                        "opening the device");
  const DeviceInfo info = check(device.info().wait(), "querying the device");
  const DType compute = info.kind == DeviceKind::cpu ? DType::f32 : DType::f16;
  const auto emit = [&](nlohmann::json row) {
    row["device"] = info.name;
    fmt::print("{}\n", row.dump());
    std::fflush(stdout);
  };

  const auto folder = check(embed::ModelFolder::read(embed::default_model_folder()), "reading the model folder");
  const auto model_weights = check(embed::ModelWeights::open(folder), "checking the weights");
  auto start = Clock::now();
  auto g = check(embed::model_graph(folder, model_weights, {.compute = compute, .batch_tokens = 16384}),
                 "building the graph");
  const double template_us = micros_since(start);
  start = Clock::now();
  (void)check(graph::ExecutablePlan::make(g, {{"tokens", 4096}, {"sequences", 64}}), "specialising");
  emit({{"figure", "template"},
        {"build_and_validate_us", template_us},
        {"specialise_us", micros_since(start)},
        {"nodes", g->nodes().size()}});

  const auto bytes = check(embed::model_weight_bytes(*g, model_weights), "converting the weights");
  auto weights = check(device.allocate<std::uint8_t>(bytes.size()).wait(), "allocating the weights");
  check(device.upload(std::span<const std::uint8_t>(bytes), weights).wait().status(), "uploading the weights");
  const std::uint32_t width = folder.config.hidden_size;
  const auto first_run = [&](std::int64_t tokens, std::int64_t sequences) {
    Batch b = make_batch(device, tokens, sequences, width);
    const auto t = Clock::now();
    check(device.ask(request(g, weights, b, graph::ExecuteMode::replay)).wait().status(), "running");
    return micros_since(t);
  };
  if (phase == "host") {
    for (std::int64_t tokens : {16, 4096}) host_figure(g, weights, make_batch(device, tokens, 1, width), repeats, emit);
    return 0;
  }
  if (phase == "disk") {
    emit({{"figure", "compile"}, {"case", "disk hit (new process)"}, {"first_run_us", first_run(1000, 16)}});
    return 0;
  }
  emit({{"figure", "compile"}, {"case", "cold (first shape)"}, {"first_run_us", first_run(1000, 16)}});
  emit({{"figure", "compile"}, {"case", "new bucket from the template"}, {"first_run_us", first_run(3000, 40)}});
  emit({{"figure", "compile"}, {"case", "memory hit"}, {"first_run_us", first_run(900, 16)}});

  for (std::int64_t rung : {64, 512, 4096, 16384}) {
    for (double fill : {1.0, 0.6, 0.3}) {
      const auto tokens = std::max<std::int64_t>(static_cast<std::int64_t>(static_cast<double>(rung) * fill), 33);
      Batch b = make_batch(device, tokens, std::max<std::int64_t>(tokens / 64, 1), width);
      nlohmann::json row{{"figure", "modes"}, {"bucket", rung}, {"tokens", tokens}};
      for (auto mode : {graph::ExecuteMode::replay, graph::ExecuteMode::direct}) {
        const char* name = mode == graph::ExecuteMode::replay ? "replay" : "direct";
        check(device.ask(request(g, weights, b, mode)).wait().status(), "warming");
        std::vector<double> one;
        for (int i = 0; i < repeats; ++i) {
          const auto t = Clock::now();
          check(device.ask(request(g, weights, b, mode)).wait().status(), "running");
          one.push_back(micros_since(t));
        }
        std::sort(one.begin(), one.end());
        const auto t = Clock::now();
        std::vector<Future<Done>> pending;
        for (int i = 0; i < repeats; ++i) pending.push_back(device.ask(request(g, weights, b, mode)));
        for (auto& f : pending) check(f.wait().status(), "running");
        row[fmt::format("{}_latency_p50_us", name)] = one[one.size() / 2];
        row[fmt::format("{}_pipelined_us_per_forward", name)] = micros_since(t) / repeats;
      }
      emit(row);
    }
  }

  // A mixed-length trace: batches of 1 to 128 sequences of 4 to 256 tokens, as a server forms them.
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> sequences(1, 128), length(4, 256);
  const auto before = *check(device.info().wait(), "querying").cache("graph-executables");
  std::int64_t real = 0, padded = 0;
  for (int i = 0; i < 200; ++i) {
    const int s = sequences(rng);
    std::int64_t tokens = 0;
    for (int j = 0; j < s; ++j) tokens += length(rng);
    tokens = std::min<std::int64_t>(tokens, 16384);
    Batch b = make_batch(device, tokens, s, width);
    check(device.ask(request(g, weights, b, graph::ExecuteMode::replay)).wait().status(), "running the trace");
    real += tokens;
    padded += check(g->buckets().at("tokens").rung_for(tokens), "bucketing") - tokens;
  }
  const auto after = *check(device.info().wait(), "querying").cache("graph-executables");
  emit({{"figure", "trace"},
        {"batches", 200},
        {"compiles", after.builds - before.builds},
        {"disk_loads", after.disk_loads - before.disk_loads},
        {"real_tokens", real},
        {"padded_tokens", padded},
        {"padding_fraction", static_cast<double>(padded) / static_cast<double>(real)}});
  return 0;
}
