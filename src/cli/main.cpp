// The accel command line: `demo` (text embeddings, the README's first command), `embed` (a file of texts to
// embeddings, sparse vectors or scores), `rerank` (a cross-encoder's scores), `tokenize` (a file of texts to ids),
// `serve` (an embedding HTTP server), `gemm-demo` (GEMMs through the actors, checked and timed), `info` (devices and
// libraries) and `cache` (list, verify, clear and warm the persistent caches).
#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "accel/device/device.hpp"
#include "accel/device/peer.hpp"
#include "accel/device/pool.hpp"
#include "cli/cache_command.hpp"
#include "cli/device_choice.hpp"
#include "cli/embed_command.hpp"
#include "cli/embed_demo.hpp"
#include "cli/gemm_demo.hpp"
#include "cli/json_output.hpp"
#include "cli/library_list.hpp"
#include "cli/serve_command.hpp"
#include "cli/tokenize_command.hpp"

namespace {

void print_caches(const accel::DeviceInfo& info) {
  for (const accel::CacheStats& cache : info.caches) {
    fmt::print("  cache {}: {} entries, {} hits, {} misses, {} builds, {} disk loads{}\n", cache.name, cache.entries,
               cache.hits, cache.misses, cache.builds, cache.disk_loads,
               cache.directory.empty() ? std::string() : fmt::format(", in {}", cache.directory));
  }
}

// The devices as JSON: {"devices": [...]} with the CPU's first, and {"cuda_error": why} when there is no GPU.
int run_info_json() {
  accel::System system;
  nlohmann::json devices = nlohmann::json::array();
  nlohmann::json out;
  if (accel::Result<accel::Device> cpu = accel::Device::open(system, {.kind = accel::DeviceKind::cpu}); cpu) {
    if (accel::Result<accel::DeviceInfo> info = cpu->info().wait(); info)
      devices.push_back(accel::cli::device_json(*info));
  }
  if (accel::Result<accel::Device> gpu = accel::Device::open(system, {.kind = accel::DeviceKind::cuda}); !gpu) {
    out["cuda_error"] = gpu.status().to_string();
  } else if (accel::Result<accel::DeviceInfo> info = gpu->info().wait(); info) {
    devices.push_back(accel::cli::device_json(*info));
  }
  out["devices"] = std::move(devices);
  nlohmann::json links = nlohmann::json::array();
  for (const accel::PeerLink& link : accel::cuda_peer_links()) {
    links.push_back({{"from", link.from},
                     {"to", link.to},
                     {"peer_access", link.peer_access},
                     {"native_atomics", link.native_atomics},
                     {"performance_rank", link.performance_rank},
                     {"link", accel::to_string(link.link)},
                     {"nvlinks", link.nvlinks}});
  }
  out["peer_links"] = std::move(links);
  accel::cli::print_json(out);
  return 0;
}

int run_info() {
  accel::System system;
  accel::Result<accel::Device> cpu = accel::Device::open(system, {.kind = accel::DeviceKind::cpu});
  if (cpu) {
    accel::Result<accel::DeviceInfo> info = cpu->info().wait();
    if (info) fmt::print("{}: {}\n", info->name, accel::cli::library_list(*info));
  }
  accel::Result<accel::Device> gpu = accel::Device::open(system, {.kind = accel::DeviceKind::cuda});
  if (!gpu) {
    fmt::print("cuda:0: unavailable ({})\n", gpu.status().to_string());
  } else if (accel::Result<accel::DeviceInfo> info = gpu->info().wait(); info) {
    fmt::print("{}: compute capability {}.{}, {:.1f} GiB, {}, completion by {}\n", info->name,
               info->compute_capability / 10, info->compute_capability % 10, info->memory_capacity_bytes / 1073741824.0,
               accel::cli::library_list(*info), to_string(info->completion));
    print_caches(*info);
  }
  for (const accel::PeerLink& link : accel::cuda_peer_links()) {
    const std::string joined = link.link == accel::LinkKind::nvlink ? fmt::format("{} NVLinks", link.nvlinks)
                                                                    : std::string(to_string(link.link));
    fmt::print("cuda:{} -> cuda:{}: {}{}, performance rank {}, {}\n", link.from, link.to,
               link.peer_access ? "peer to peer" : "through host memory", link.native_atomics ? ", native atomics" : "",
               link.performance_rank, joined);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"accel: NVIDIA's GPU libraries as supervised actors behind one async API"};
  app.require_subcommand(1);

  // A bad --device is a usage error, before any model is read.
  const CLI::Validator devices(
      [](std::string& choice) {
        const accel::Result<accel::DeviceOptions> options = accel::parse_device_choice(choice);
        return options.ok() ? std::string() : std::string(options.status().message());
      },
      "DEVICE", "device");
  accel::cli::EmbedDemoOptions demo;
  CLI::App* demo_cmd = app.add_subcommand("demo", "embeds a few sentences and prints how similar they are");
  demo_cmd->add_option("--model", demo.model, "a sentence-transformers folder (default: all-MiniLM-L6-v2)");
  demo_cmd->add_option("--device", demo.device, std::string(accel::kDeviceChoices))->check(devices);

  accel::cli::EmbedOptions embed;
  CLI::App* embed_cmd =
      app.add_subcommand("embed", "embeds each line (or JSONL \"text\") of a file, or of - for stdin");
  embed_cmd->add_option("input", embed.input, "FILE or -")->required();
  embed_cmd->add_option("--model", embed.model, "a sentence-transformers folder (default: all-MiniLM-L6-v2)");
  CLI::Option* embed_device =
      embed_cmd->add_option("--device", embed.device, std::string(accel::kDeviceChoices))->check(devices);
  embed_cmd
      ->add_option("--devices", embed.devices,
                   "a replica of the model on each device of this list, the input's chunks run on them at once: cpu, "
                   "cpu-isolated, cuda[:N], cuda-isolated[:N], N, or all (every GPU, else the CPU), comma-separated")
      ->excludes(embed_device);
  embed_cmd
      ->add_option("--batch-tokens", embed.batch_tokens,
                   "most tokens run at once (16384 on the CPU; on a GPU up to 65536 by the model's width; at least "
                   "the model's longest sequence)")
      ->check(CLI::Range(256u, 1u << 20));
  const auto dtypes = CLI::IsMember({"auto", "f32", "f16", "bf16"});
  embed_cmd
      ->add_option("--dtype", embed.dtype,
                   "what the model computes in: auto (f32 on the CPU, f16 on a GPU), f32, f16 (GPU) or bf16 (GPU, or "
                   "a CPU with avx512_bf16 or AMX: matmuls in bf16, the rest in f32)")
      ->check(dtypes);
  embed_cmd->add_option("-o,--output", embed.output, "JSONL, or .npy (float32 [texts, dims]); - for stdout");
  CLI::Option* prompt = embed_cmd->add_option("--prompt", embed.prompt, "text put before each input");
  embed_cmd->add_option("--prompt-name", embed.prompt_name, "the model's prompt of that name before each input")
      ->excludes(prompt);
  embed_cmd->add_option("--dimensions", embed.dimensions, "keep the first N dimensions (Matryoshka), normalised again")
      ->check(CLI::PositiveNumber);
  embed_cmd->add_option("--truncate", embed.truncate, "a text past the model's length: cut right, left or refuse")
      ->check(CLI::IsMember({"right", "left", "refuse"}));
  embed_cmd->add_option("--input-format", embed.input_format, "auto, lines or jsonl")
      ->check(CLI::IsMember({"auto", "lines", "jsonl"}));

  accel::cli::TokenizeOptions tokenize;
  CLI::App* tokenize_cmd = app.add_subcommand(
      "tokenize", "the ids (and offsets) of each line (or JSONL \"text\") of a file, or of - for stdin, as JSONL");
  tokenize_cmd->add_option("input", tokenize.input, "FILE or -")->required();
  CLI::Option* tokenize_model = tokenize_cmd->add_option("--model", tokenize.model, "a model folder's tokenizer.json");
  tokenize_cmd->add_option("--tokenizer", tokenize.tokenizer, "a tokenizer.json")->excludes(tokenize_model);
  tokenize_cmd->add_flag("--offsets", tokenize.offsets, "also each token's [begin, end) in code points of the text");
  tokenize_cmd->add_flag("!--no-special-tokens", tokenize.special_tokens, "leave out the post-processor's tokens");
  tokenize_cmd->add_option("--max-length", tokenize.max_length, "truncate to this many ids (default: no truncation)")
      ->check(CLI::PositiveNumber);
  tokenize_cmd->add_option("--truncate", tokenize.truncate, "which end --max-length cuts: right or left")
      ->check(CLI::IsMember({"right", "left"}));
  tokenize_cmd->add_option("--threads", tokenize.threads, "tokenizer threads (default: one per hardware thread)");
  tokenize_cmd->add_option("--input-format", tokenize.input_format, "auto, lines or jsonl")
      ->check(CLI::IsMember({"auto", "lines", "jsonl"}));

  accel::cli::ServeCommand serve;
  accel::serve::ServeOptions& server = serve.server;
  CLI::App* serve_cmd =
      app.add_subcommand("serve",
                         "an embedding HTTP server of one or more models: OpenAI's /v1/embeddings, /v1/models, "
                         "/v1/rerank (Cohere's shape); TEI's /embed, /embed_all, /embed_sparse, /rerank, /predict, "
                         "/similarity, /tokenize, /decode, /info; /health, /metrics");
  serve_cmd->add_option("--model", serve.models,
                        "a sentence-transformers folder (default: all-MiniLM-L6-v2); repeated, several models are "
                        "served on the device, chosen by a request's \"model\" (its --served-model-name, else the "
                        "folder's name), the first by default. The options marked [per model] are given once (for "
                        "every model) or once per --model, matched to them in order");
  accel::cli::PerModelArguments& per_model = serve.per_model;
  serve_cmd->add_option("--served-model-name", per_model.served_names,
                        "[per model] the name requests give in \"model\" and responses and /metrics show (default: "
                        "the folder's name)");
  CLI::Option* serve_device =
      serve_cmd->add_option("--device", serve.device, std::string(accel::kDeviceChoices))->check(devices);
  serve_cmd
      ->add_option("--devices", serve.devices,
                   "a replica of every model on each device of this list, fed by one batcher per model by least "
                   "tokens in flight: cpu, cpu-isolated, cuda[:N], cuda-isolated[:N], N, or all (every GPU, else "
                   "the CPU), comma-separated")
      ->excludes(serve_device);
  serve_cmd->add_option("--host", server.host, "address to listen on (default: loopback)");
  serve_cmd->add_option("--port", server.port, "port to listen on (0: any free one)")->check(CLI::Range(0, 65535));
  serve_cmd
      ->add_option("--batch-tokens", per_model.batch_tokens,
                   "[per model] token budget of one batch (16384, or the model's longest sequence if longer)")
      ->check(CLI::Range(256u, 1u << 20));
  serve_cmd->add_option("--dtype", per_model.dtypes, "[per model] what the model computes in (as embed's --dtype)")
      ->check(dtypes);
  serve_cmd
      ->add_option("--max-batch-requests", per_model.max_batch_requests,
                   "[per model] requests in one batch at most (default: as many as the token budget takes)")
      ->check(CLI::PositiveNumber);
  serve_cmd
      ->add_option_function<long>(
          "--max-wait-us", [&](long us) { server.batching.max_wait = std::chrono::microseconds(us); },
          "longest a request waits for a batch to fill behind a running one (default 2000)")
      ->check(CLI::NonNegativeNumber);
  serve_cmd->add_option("--batches-in-flight", server.batching.in_flight, "batches running on the device at once")
      ->check(CLI::PositiveNumber);
  serve_cmd->add_option("--queue-requests", server.batching.queue_requests, "requests waiting before 429")
      ->check(CLI::PositiveNumber);
  serve_cmd->add_option("--queue-tokens", server.batching.queue_tokens, "tokens waiting before 429")
      ->check(CLI::PositiveNumber);
  serve_cmd->add_option("--max-body-bytes", server.max_body_bytes, "largest request body (413 beyond)")
      ->check(CLI::PositiveNumber);
  serve_cmd->add_option("--max-inputs", server.max_inputs, "inputs per request (413 beyond)")
      ->check(CLI::PositiveNumber);
  serve_cmd->add_option("--http-threads", server.http_threads, "connections served at once")
      ->check(CLI::PositiveNumber);
  serve_cmd->add_option("--io-timeout", server.io_timeout_seconds, "seconds a client may send or take nothing")
      ->check(CLI::PositiveNumber);
  serve_cmd
      ->add_option("--request-timeout", server.request_timeout_seconds,
                   "seconds a client has to send a whole request, headers and body (408 beyond; default 30)")
      ->check(CLI::PositiveNumber);
  serve_cmd->add_flag("--auto-truncate", per_model.auto_truncate,
                      "[per model] cut inputs longer than the model's maximum instead of answering 413 (a request's "
                      "\"truncate\": false still refuses); per model: --auto-truncate=true or =false");
  serve_cmd->add_option(
      "--access-log", server.access_log,
      "write a JSON line per request (time, route, model, status, inputs, tokens, stage times, trace id) to "
      "FILE (appended to), or - for standard output");
  serve_cmd->add_option("--otlp-endpoint", server.tracing.otlp_endpoint,
                        "send a span per request (with its tokenize, queue, compute and serialize stages) to this "
                        "OpenTelemetry collector over OTLP/HTTP JSON: http://host[:port] (POSTs to /v1/traces; "
                        "a W3C traceparent header continues the caller's trace)");
  serve_cmd->add_option("--otlp-service-name", server.tracing.service_name,
                        "the service.name of the spans (default accel-serve)");
  CLI::Option* default_prompt_name = serve_cmd->add_option(
      "--default-prompt-name", per_model.default_prompt_names,
      "[per model] the model's prompt (config_sentence_transformers.json) put before each text of a request that "
      "names no prompt_name (default, or \"\": the folder's default_prompt_name)");
  serve_cmd
      ->add_option("--default-prompt", per_model.default_prompts,
                   "[per model] text put before each text of a request that names no prompt_name (\"\": none)")
      ->excludes(default_prompt_name);
  serve_cmd
      ->add_option("--api-key", server.api_key,
                   "ask every route but /health for 'Authorization: Bearer KEY' (or set ACCEL_API_KEY, which keeps "
                   "the key out of the process list)")
      ->envname("ACCEL_API_KEY");

  accel::cli::GemmDemoOptions gemm_demo;
  CLI::App* gemm_cmd = app.add_subcommand("gemm-demo", "GEMMs of several sizes through the actors, checked and timed");
  gemm_cmd->add_option("--device", gemm_demo.device, std::string(accel::kDeviceChoices))->check(devices);
  gemm_cmd->add_option("--sizes", gemm_demo.sizes, "square GEMM sizes")->delimiter(',');
  gemm_cmd->add_option("--repeats", gemm_demo.repeats, "timed repetitions per size")->check(CLI::PositiveNumber);

  accel::cli::EmbedOptions rerank;
  CLI::App* rerank_cmd = app.add_subcommand("rerank", "a cross-encoder's score of QUERY with each line of a file");
  rerank_cmd->add_option("query", rerank.query, "the query")->required();
  rerank_cmd->add_option("input", rerank.input, "FILE or -: one passage per line (or JSONL \"text\")")->required();
  rerank_cmd->add_option("--model", rerank.model, "a cross-encoder's folder")->required();
  rerank_cmd->add_option("--device", rerank.device, std::string(accel::kDeviceChoices))->check(devices);
  rerank_cmd->add_option("--dtype", rerank.dtype, "what the model computes in (as embed's --dtype)")->check(dtypes);
  rerank_cmd->add_option("--truncate", rerank.truncate, "a pair past the model's length: cut (right) or refuse")
      ->check(CLI::IsMember({"right", "refuse"}));
  rerank_cmd->add_option("-o,--output", rerank.output, "JSONL; - for stdout");
  rerank_cmd->add_option("--input-format", rerank.input_format, "auto, lines or jsonl")
      ->check(CLI::IsMember({"auto", "lines", "jsonl"}));

  accel::cli::EmbedOptions model_info;
  CLI::App* info_cmd = app.add_subcommand("info", "devices and library versions; with --model, what the folder loads");
  CLI::Option* model_option =
      info_cmd->add_option("--model", model_info.model, "a model folder: say what loads from it (on the CPU)");
  bool info_json = false;
  info_cmd->add_flag("--json", info_json, "the devices as JSON")->excludes(model_option);

  accel::cli::CacheCommand cache;
  CLI::App* cache_cmd = app.add_subcommand("cache", "the persistent caches: list, verify, clear, warm");
  cache_cmd->require_subcommand(1);
  CLI::App* cache_list = cache_cmd->add_subcommand("list", "each cache: directory, entries, bytes, hits since start");
  cache_list->add_flag("--json", cache.json, "as JSON");
  CLI::App* cache_verify =
      cache_cmd->add_subcommand("verify", "checks every entry as the loaders do; exit 6 when any is bad");
  CLI::App* cache_clear = cache_cmd->add_subcommand("clear", "removes the entries of one cache, or of all");
  cache_clear->add_option("name", cache.name, "a cache's name or directory name (accel cache list)");
  CLI::App* cache_warm =
      cache_cmd->add_subcommand("warm", "compiles and stores every bucket of a model (on the CPU device)");
  cache_warm->add_option("--model", cache.model.model, "a sentence-transformers folder (default: all-MiniLM-L6-v2)");
  cache_warm->add_option("--batch-tokens", cache.model.batch_tokens, "as the embedding process will run it")
      ->check(CLI::Range(256u, 1u << 20));

  CLI11_PARSE(app, argc, argv);
  embed.has_prompt = prompt->count() > 0;
  if (*demo_cmd) return accel::cli::run_embed_demo(demo);
  if (*embed_cmd) return accel::cli::run_embed(embed);
  if (*tokenize_cmd) return accel::cli::run_tokenize(tokenize);
  if (*serve_cmd) return accel::cli::run_serve(serve);
  if (*gemm_cmd) return accel::cli::run_gemm_demo(gemm_demo);
  if (*rerank_cmd) return accel::cli::run_rerank(rerank);
  if (*cache_list) return accel::cli::run_cache_list(cache);
  if (*cache_verify) return accel::cli::run_cache_verify(cache);
  if (*cache_clear) return accel::cli::run_cache_clear(cache);
  if (*cache_warm) return accel::cli::run_cache_warm(cache);
  if (*info_cmd) {
    if (info_json) return run_info_json();
    if (model_info.model.empty()) return run_info();
    model_info.device = "cpu";
    return accel::cli::run_model_info(model_info);
  }
  return 1;
}
